// NVTX ranges reach a listening tool. The test tool (nvtx_tool.c) is loaded
// by NVTX through NVTX_INJECTION64_PATH, as Nsight Systems is, and records
// the ranges of the library's domain; the test drives the library on the
// host backend (the ranges are the same on every backend) and reads what the
// tool saw. One process per test (ctest), and the variable is set before the
// library's first NVTX call, which reads it once.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <streamgraph/streamgraph.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sg_test_util.h"

namespace {

struct Tool {
  void *handle = nullptr;
  template <typename F>
  F get(const char *name) {
    return reinterpret_cast<F>(dlsym(handle, name));
  }
};

struct Range {
  int type;
  std::string name;
};

int noop(void *) { return 0; }

bool has_range(const std::vector<Range> &ranges, int type, const std::string &text) {
  for (const Range &r : ranges)
    if (r.type == type && r.name.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(Nvtx, RangesReachAListeningTool) {
  ASSERT_EQ(setenv("NVTX_INJECTION64_PATH", SG_NVTX_TOOL_PATH, 1), 0);
  {
    sgtest::Graph g;
    SG_ASSERT_OK(sg_graph_set_name(g, "nvtx graph"));
    sg_host_desc h = {noop, nullptr, "first"};
    sg_node a{}, b{};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &a));
    h.name = "second";
    SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, &b));
    // A staged upload: its host-side chunks are ranges of the copy threads.
    void *dev = nullptr;
    const size_t bytes = 1u << 20;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &dev));
    std::vector<unsigned char> host(bytes, 7);
    sg_copy_desc c = {dev, host.data(), bytes, SG_COPY_HOST_TO_DEVICE, "upload"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &c, &b, 1, nullptr));

    sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_plan_create(g, 0, &plan));
    sg_plan_destroy(plan);

    sg_exec_options o = sgtest::host_options();
    o.staging.policy = SG_STAGING_STAGE;
    o.staging.chunk_bytes = 256u << 10;
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    SG_ASSERT_OK(sg_exec_set_host(e, b, &h));
    SG_ASSERT_OK(sg_exec_update(e, g));

    sg_pipeline_options po;
    sg_pipeline_options_init(&po);
    po.exec = o;
    po.depth = 2;
    sg_pipeline *p = nullptr;
    SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
    for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
    SG_ASSERT_OK(sg_pipeline_drain(p));
    SG_ASSERT_OK(sg_pipeline_destroy(p));
    sg_mem_free(dev);  // deferred until the executable goes, at the end of this scope
  }

  Tool tool;
  tool.handle = dlopen(SG_NVTX_TOOL_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(tool.handle, nullptr) << "NVTX did not load the tool " << SG_NVTX_TOOL_PATH
                                  << ": the library made no NVTX call, or was built without NVTX";
  auto count = tool.get<int (*)()>("sgtest_nvtx_count");
  auto type = tool.get<int (*)(int)>("sgtest_nvtx_type");
  auto name = tool.get<const char *(*)(int)>("sgtest_nvtx_name");
  auto errors = tool.get<int (*)()>("sgtest_nvtx_errors");
  auto open_pushes = tool.get<int (*)()>("sgtest_nvtx_open_pushes");
  auto open_starts = tool.get<int (*)()>("sgtest_nvtx_open_starts");
  auto domain = tool.get<const char *(*)()>("sgtest_nvtx_domain");
  ASSERT_TRUE(count && type && name && errors && open_pushes && open_starts && domain);

  std::vector<Range> ranges;
  std::string all;
  for (int i = 0; i < count(); i++) {
    ranges.push_back({type(i), name(i)});
    if (type(i) == 0 || type(i) == 2) all += std::string(name(i)) + "\n";
  }
  EXPECT_STREQ(domain(), "streamgraph");
  EXPECT_TRUE(has_range(ranges, 0, "plan 'nvtx graph'")) << all;
  EXPECT_TRUE(has_range(ranges, 0, "sg_exec_create 'nvtx graph'")) << all;
  EXPECT_TRUE(has_range(ranges, 0, "launch 'nvtx graph'")) << all;
  EXPECT_TRUE(has_range(ranges, 0, "update 'nvtx graph' node")) << all;
  EXPECT_TRUE(has_range(ranges, 0, "sg_exec_update 'nvtx graph'")) << all;
  EXPECT_TRUE(has_range(ranges, 0, "fill 'upload'")) << all;
  EXPECT_TRUE(has_range(ranges, 2, "batch 0 (instance 0)")) << all;
  EXPECT_TRUE(has_range(ranges, 2, "batch 2")) << all;
  // Every pop had its push on the same thread, every end its start, and
  // nothing is left open once everything is destroyed.
  EXPECT_EQ(errors(), 0) << all;
  EXPECT_EQ(open_pushes(), 0) << all;
  EXPECT_EQ(open_starts(), 0) << all;
}
