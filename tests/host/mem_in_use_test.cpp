// sg_mem_free of a block that a node of a live executable names is deferred
// until the last such node lets go (memory.h): the block stays valid for
// every launch, is freed exactly then, and no executable can be made or
// updated to run on a block freed before. So no use-after-free is possible
// (this suite also runs under ASan, which would catch one).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sg_test_util.h"

namespace {

using sgtest::Exec;
using sgtest::Graph;

void *alloc(size_t bytes) {
  void *p = nullptr;
  EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &p), SG_OK)
      << sg_last_error();
  return p;
}

bool has(const std::string &part) {
  return std::string(sg_last_error()).find(part) != std::string::npos;
}

// 1 while `p` is still a block the library knows (not yet given back).
bool still_allocated(void *p) {
  sg_memory_kind kind;
  return sg_mem_kind(p, &kind) == SG_OK && kind == SG_MEMORY_HOST_DEVICE;
}

constexpr size_t kBytes = 4096;

TEST(MemInUse, FreeWhileALiveExecutableNamesTheBlockIsDeferredToItsDestruction) {
  sgtest::LeakCheck leaks;
  void *dev = alloc(kBytes);
  std::vector<char> in(kBytes, 3), out(kBytes, 0);
  sg_exec *e = nullptr;
  {
    Graph g;
    sg_node up;
    sg_copy_desc c = {dev, in.data(), kBytes, SG_COPY_AUTO, "upload"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &up));
    c = {out.data(), dev, kBytes, SG_COPY_AUTO, "download"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &c, &up, 1, nullptr));
    sg_exec_options o = sgtest::host_options();
    SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  }
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // in flight while the block is freed
  SG_ASSERT_OK(sg_mem_free(dev));
  EXPECT_TRUE(still_allocated(dev)) << "freed under a live executable";
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(out, in);

  // The executable still runs on it, correctly.
  std::fill(out.begin(), out.end(), 0);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(out, in);

  // Freeing twice is refused; naming the freed block in a new node too.
  EXPECT_EQ(sg_mem_free(dev), SG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has("already freed")) << sg_last_error();
  Graph g2;
  sg_copy_desc c = {dev, in.data(), kBytes, SG_COPY_AUTO, "late"};
  EXPECT_EQ(sg_graph_add_copy(g2, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has("'late'")) << sg_last_error();
  EXPECT_TRUE(has("was freed")) << sg_last_error();

  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_FALSE(still_allocated(dev)) << "the deferred free did not happen";
}

TEST(MemInUse, EveryHolderCountsAndRepointingANodeLetsGo) {
  sgtest::LeakCheck leaks;
  void *a = alloc(kBytes), *b = alloc(kBytes);
  Graph g;
  sg_node clear;
  sg_memset_desc m = {a, 0, 1, kBytes, "clear"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, nullptr, 0, &clear));
  sg_exec_options o = sgtest::host_options();
  Exec e1, e2;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e1.e));
  SG_ASSERT_OK(sg_exec_create(g, &o, &e2.e));

  // e1 points its memset at b; then a is freed: e2 still holds it.
  m.dst = b;
  SG_ASSERT_OK(sg_exec_set_memset(e1, clear, &m));
  SG_ASSERT_OK(sg_mem_free(a));
  EXPECT_TRUE(still_allocated(a));
  // A refused update holds nothing new and lets go of nothing.
  m.count = kBytes + 1;
  EXPECT_EQ(sg_exec_set_memset(e2, clear, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(still_allocated(a));
  // e2 points at b: its hold of a was the last one.
  m.count = kBytes;
  SG_ASSERT_OK(sg_exec_set_memset(e2, clear, &m));
  EXPECT_FALSE(still_allocated(a));

  // b, freed while both hold it, goes with the second destruction.
  SG_ASSERT_OK(sg_mem_free(b));
  SG_ASSERT_OK(sg_exec_destroy(e1.e));
  e1.e = nullptr;
  EXPECT_TRUE(still_allocated(b));
  SG_ASSERT_OK(sg_exec_launch(e2, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e2));
  SG_ASSERT_OK(sg_exec_destroy(e2.e));
  e2.e = nullptr;
  EXPECT_FALSE(still_allocated(b));
}

TEST(MemInUse, AnExecutableIsNotMadeOnABlockFreedAfterTheNodeWasAdded) {
  sgtest::LeakCheck leaks;
  void *dev = alloc(kBytes);
  std::vector<char> host(kBytes, 5);
  Graph g;
  sg_copy_desc c = {dev, host.data(), kBytes, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_mem_free(dev));  // the graph holds nothing: freed at once
  EXPECT_FALSE(still_allocated(dev));

  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e, nullptr);
  EXPECT_TRUE(has("sg_exec_create: node 'upload' (#0)")) << sg_last_error();
  EXPECT_TRUE(has("has been freed since")) << sg_last_error();
}

TEST(MemInUse, UpdateToAGraphNamingAFreedBlockIsRefusedAndTheExecutableKeepsWorking) {
  sgtest::LeakCheck leaks;
  void *keep = alloc(kBytes), *gone = alloc(kBytes);
  std::vector<char> in(kBytes, 9), out(kBytes, 0);
  Graph g;
  sg_node up;
  sg_copy_desc c = {keep, in.data(), kBytes, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &up));
  c = {out.data(), keep, kBytes, SG_COPY_AUTO, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, &up, 1, nullptr));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));

  // Same topology, a freed block: the parameter path refuses it.
  Graph same;
  c = {gone, in.data(), kBytes, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(same, &c, nullptr, 0, &up));
  c = {out.data(), keep, kBytes, SG_COPY_AUTO, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(same, &c, &up, 1, nullptr));
  // New topology (one more node), the freed block: the rebuild path refuses it.
  Graph other;
  c = {gone, in.data(), kBytes, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(other, &c, nullptr, 0, &up));
  SG_ASSERT_OK(sg_graph_add_empty(other, "join", &up, 1, nullptr));
  SG_ASSERT_OK(sg_mem_free(gone));

  EXPECT_EQ(sg_exec_update(e, same), SG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has("sg_exec_update: node 'upload' (#0)")) << sg_last_error();
  EXPECT_EQ(sg_exec_update(e, other), SG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has("sg_exec_update: node 'upload' (#0)")) << sg_last_error();

  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(out, in);
  SG_ASSERT_OK(sg_mem_free(keep));
  EXPECT_TRUE(still_allocated(keep));
  SG_ASSERT_OK(sg_exec_destroy(e.e));
  e.e = nullptr;
  EXPECT_FALSE(still_allocated(keep));
}

TEST(MemInUse, ARebuildHoldsTheNewBlocksAndLetsGoOfTheOld) {
  sgtest::LeakCheck leaks;
  void *a = alloc(kBytes), *b = alloc(kBytes);
  Graph g;
  sg_memset_desc m = {a, 1, 1, kBytes, "fill"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_mem_free(a));
  EXPECT_TRUE(still_allocated(a));
  Graph bigger;
  sg_node fill;
  m.dst = b;
  SG_ASSERT_OK(sg_graph_add_memset(bigger, &m, nullptr, 0, &fill));
  SG_ASSERT_OK(sg_graph_add_empty(bigger, "after", &fill, 1, nullptr));
  SG_ASSERT_OK(sg_exec_update(e, bigger));
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.rebuilds, 1u);
  EXPECT_FALSE(still_allocated(a)) << "the rebuild should have let go of the old block";
  SG_ASSERT_OK(sg_mem_free(b));
  EXPECT_TRUE(still_allocated(b));
  SG_ASSERT_OK(sg_exec_destroy(e.e));
  e.e = nullptr;
  EXPECT_FALSE(still_allocated(b));
}

// A pipeline's teardown frees the instance's memory before the instance's
// executable is destroyed: the free waits for it.
TEST(MemInUse, APipelineHoldsItsBlocksUntilDestroyed) {
  sgtest::LeakCheck leaks;
  void *dev = alloc(kBytes);
  Graph g;
  sg_memset_desc m = {dev, 0, 1, kBytes, "clear"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.exec = sgtest::host_options();
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
  SG_ASSERT_OK(sg_mem_free(dev));
  EXPECT_TRUE(still_allocated(dev));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_FALSE(still_allocated(dev));
}

}  // namespace
