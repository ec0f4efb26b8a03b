// Status names and the thread-local error message.
#include <set>
#include <string>
#include <thread>

#include "sg_test_util.h"

extern "C" {
#include "core/error.h"
}

TEST(Status, EveryStatusHasADistinctNameAndDescription) {
  std::set<std::string> names;
  for (int s = 0; s < SG_STATUS_COUNT_; s++) {
    std::string name = sg_status_name(static_cast<sg_status>(s));
    EXPECT_EQ(name.rfind("SG_", 0), 0u) << name;
    EXPECT_NE(name, "SG_STATUS_UNKNOWN");
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    EXPECT_STRNE(sg_status_describe(static_cast<sg_status>(s)), "unknown status");
  }
  EXPECT_STREQ(sg_status_name(SG_OK), "SG_OK");
  EXPECT_STREQ(sg_status_name(SG_ERR_CYCLE), "SG_ERR_CYCLE");
}

TEST(Status, OutOfRangeValuesAreUnknown) {
  EXPECT_STREQ(sg_status_name(static_cast<sg_status>(-1)), "SG_STATUS_UNKNOWN");
  EXPECT_STREQ(sg_status_name(SG_STATUS_COUNT_), "SG_STATUS_UNKNOWN");
  EXPECT_STREQ(sg_status_describe(static_cast<sg_status>(9999)), "unknown status");
}

TEST(Status, MessageNamesTheFunctionAndSurvivesSuccess) {
  EXPECT_EQ(sg_graph_create(nullptr), SG_ERR_INVALID_ARGUMENT);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("sg_graph_create"), std::string::npos) << msg;
  sgtest::Graph g;  // a successful call leaves the message alone, like errno
  EXPECT_EQ(msg, sg_last_error());
}

TEST(Status, MessageIsPerThread) {
  EXPECT_EQ(sg_graph_create(nullptr), SG_ERR_INVALID_ARGUMENT);
  std::string here = sg_last_error();
  std::string there = "unset";
  std::thread t([&] { there = sg_last_error(); });
  t.join();
  EXPECT_EQ(there, "");
  EXPECT_EQ(here, sg_last_error());
}

TEST(Status, HardwareFindingPassingTheMessageOnKeepsIt) {
  // Backends pass a failure on with the message as an argument of the new
  // one: formatting must not read from the buffer it writes.
  sg__fail(SG_ERR_CUDA, "inner: %s", "cudaGetDevice failed");
  EXPECT_EQ(sg__fail(SG_ERR_CUDA, "%s", sg_last_error()), SG_ERR_CUDA);
  EXPECT_STREQ(sg_last_error(), "inner: cudaGetDevice failed");
  sg__fail(SG_ERR_CUDA, "outer: %s", sg_last_error());
  EXPECT_STREQ(sg_last_error(), "outer: inner: cudaGetDevice failed");
}
