// Executable creation and use: every refusal has its own status and message.
#include <string>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

void expect(sg_status st, sg_status want, std::initializer_list<const char *> fragments) {
  EXPECT_EQ(st, want) << sg_status_name(st) << ": " << sg_last_error();
  std::string msg = sg_last_error();
  for (const char *f : fragments)
    EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
}

int noop(void *) { return 0; }

TEST(ExecValidation, ArgumentsAndOptions) {
  sgtest::Graph g;
  sg_exec *e = reinterpret_cast<sg_exec *>(1);
  expect(sg_exec_create(g, nullptr, nullptr), SG_ERR_INVALID_ARGUMENT, {"out is NULL"});
  expect(sg_exec_create(nullptr, nullptr, &e), SG_ERR_INVALID_ARGUMENT, {"graph is NULL"});
  EXPECT_EQ(e, nullptr);
  sg_exec_options o = sgtest::host_options();
  o.mode = static_cast<sg_exec_mode>(5);
  expect(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT, {"mode 5"});
  o = sgtest::host_options();
  o.backend = static_cast<sg_backend>(9);
  expect(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT, {"backend 9"});
  o = sgtest::host_options();
  o.build = static_cast<sg_graph_build>(3);
  expect(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT, {"build 3"});
  o = sgtest::host_options();
  o.staging.policy = static_cast<sg_staging_policy>(11);
  expect(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT, {"staging policy 11"});
  o = sgtest::host_options();
  o.device = -1;
  expect(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT, {"device -1"});
  // NULL options mean the defaults.
  if (sg_backend_resolve(SG_BACKEND_AUTO) == SG_BACKEND_HOST) {
    SG_ASSERT_OK(sg_exec_create(g, nullptr, &e));
    SG_ASSERT_OK(sg_exec_destroy(e));
  }
}

TEST(ExecValidation, DestroyedGraphIsRefused) {
  sg_graph *g = nullptr;
  SG_ASSERT_OK(sg_graph_create(&g));
  SG_ASSERT_OK(sg_graph_destroy(g));
  sg_exec *e = nullptr;
  sg_exec_options o = sgtest::host_options();
  expect(sg_exec_create(g, &o, &e), SG_ERR_INVALID_HANDLE, {"sg_exec_create", "graph"});
}

TEST(ExecValidation, CudaBackendWithoutDevice) {
  if (sg_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  sgtest::Graph g;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  sg_exec *e = nullptr;
  expect(sg_exec_create(g, &o, &e), SG_ERR_BACKEND_UNAVAILABLE, {"CUDA backend was asked for"});
  sg_exec_options_init(&o);  // AUTO falls back to the host backend
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(e, &info));
  EXPECT_EQ(info.backend, SG_BACKEND_HOST);
  SG_ASSERT_OK(sg_exec_destroy(e));
}

TEST(ExecValidation, KernelWithoutHostTwinOnTheHostBackend) {
  sgtest::Graph g;
  static const int fake_symbol = 0;
  sg_kernel_desc k = {};
  k.func = &fake_symbol;
  k.grid = {1, 1, 1};
  k.block = {1, 1, 1};
  k.name = "gpu_only";
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  expect(sg_exec_create(g, &o, &e), SG_ERR_NO_HOST_TWIN, {"kernel node 'gpu_only' (#0)"});
  EXPECT_EQ(e, nullptr);
}

TEST(ExecValidation, StreamFunctionWithoutHostTwinOnTheHostBackend) {
  sgtest::Graph g;
  sg_stream_fn_desc s = {};
  s.fn = [](void *, void *) { return 0; };
  s.name = "cublas";
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &s, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  expect(sg_exec_create(g, &o, &e), SG_ERR_NO_HOST_TWIN, {"stream-function node 'cublas'"});
}

TEST(ExecValidation, HostBackendRefusesACallerStream) {
  sgtest::Graph g;
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  int fake_stream;
  expect(sg_exec_launch(e, &fake_stream), SG_ERR_INVALID_ARGUMENT, {"pass NULL"});
}

TEST(ExecValidation, LaunchOfADestroyedExecutable) {
  sgtest::Graph g;
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  SG_ASSERT_OK(sg_exec_destroy(e));
  expect(sg_exec_launch(e, nullptr), SG_ERR_INVALID_HANDLE, {"sg_exec_launch", "not a live handle"});
  expect(sg_exec_query(e), SG_ERR_INVALID_HANDLE, {"sg_exec_query"});
  sg_exec_stats stats;
  expect(sg_exec_get_stats(e, &stats), SG_ERR_INVALID_HANDLE, {"sg_exec_get_stats"});
  expect(sg_exec_launch(nullptr, nullptr), SG_ERR_INVALID_ARGUMENT, {"exec is NULL"});
  // A graph handle is not an executable handle.
  expect(sg_exec_launch(reinterpret_cast<sg_exec *>(g.g), nullptr), SG_ERR_INVALID_HANDLE,
         {"another kind of object"});
}

TEST(ExecValidation, LaunchOfAFailedExecutable) {
  sgtest::Graph g;
  sg_host_desc h = {[](void *) { return -3; }, nullptr, "fails"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  expect(sg_exec_wait(e), SG_ERR_CALLBACK, {"'fails' (#0) returned -3"});
  expect(sg_exec_launch(e, nullptr), SG_ERR_EXEC_FAILED, {"earlier launch failed", "'fails'"});
  sg_host_desc fixed = {noop, nullptr, nullptr};
  sg_node n{};
  SG_ASSERT_OK(sg_graph_node_at(g, 0, &n));
  expect(sg_exec_set_host(e, n, &fixed), SG_ERR_EXEC_FAILED, {"earlier launch failed"});
  expect(sg_exec_update(e, g), SG_ERR_EXEC_FAILED, {"earlier launch failed"});
}

TEST(ExecValidation, InspectionArguments) {
  sgtest::Graph g;
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  expect(sg_exec_get_info(e, nullptr), SG_ERR_INVALID_ARGUMENT, {"info is NULL"});
  expect(sg_exec_get_stats(e, nullptr), SG_ERR_INVALID_ARGUMENT, {"stats is NULL"});
  expect(sg_exec_get_plan(e, nullptr), SG_ERR_INVALID_ARGUMENT, {"plan is NULL"});
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  EXPECT_NE(plan, nullptr);
  sg_exec_options_init(nullptr);  // accepted, does nothing
}

}  // namespace
