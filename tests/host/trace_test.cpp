// Traces on the host backend: Chrome trace JSON that a strict parser
// accepts, whatever the node names are.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>

#include "json_check.h"
#include "sg_test_util.h"

namespace {

int nothing(void *) { return 0; }

std::string temp_path(const char *stem) {
  return std::string(::testing::TempDir()) + stem + "-" + std::to_string(getpid()) + ".json";
}

// Defect 6 (issue 17): names were copied byte for byte, so a name that is not
// UTF-8 (or holds control characters) made the trace invalid JSON and the
// DOT ill-formed. Now every name is escaped and repaired (U+FFFD).
TEST(TraceJson, Defect6_NonUtf8NamesKeepTraceJsonAndDotValid) {
  const char *names[] = {"bad\xff\xfe", "trunc\xc3", "surrogate\xed\xa0\x80",
                         "quote\"back\\slash", "ctl\x01\n\t", "ok \xc3\xa9"};
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "graph\xc0\xaf"));
  sg_node prev{};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    sg_host_desc h = {nothing, nullptr, names[i]};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, i ? &prev : nullptr, i ? 1 : 0, &prev));
  }
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::string path = temp_path("defect6");
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  std::string text = sgtest::read_file(path);
  std::remove(path.c_str());
  sgtest::Json doc;
  std::string why;
  ASSERT_TRUE(sgtest::parse_json(text, &doc, &why)) << why << "\n" << text;
  std::string all_names;
  for (const sgtest::Json &ev : doc["traceEvents"].items) all_names += ev["name"].str + "|";
  EXPECT_NE(all_names.find("bad\xef\xbf\xbd\xef\xbf\xbd"), std::string::npos) << all_names;
  EXPECT_NE(all_names.find("quote\"back\\slash"), std::string::npos) << all_names;
  EXPECT_NE(all_names.find("ctl\x01\n\t"), std::string::npos) << all_names;
  EXPECT_NE(all_names.find("ok \xc3\xa9"), std::string::npos) << all_names;

  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(g, &dot));
  std::string graph_dot = dot;
  sg_free(dot);
  EXPECT_TRUE(sgtest::check_dot(graph_dot, &why)) << why << "\n" << graph_dot;
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  std::string plan_dot = dot;
  sg_free(dot);
  EXPECT_TRUE(sgtest::check_dot(plan_dot, &why)) << why << "\n" << plan_dot;
}

}  // namespace
