// SG_BACKEND: "host", "cuda", "auto" or unset; any other value is refused with
// a message by every call that resolves SG_BACKEND_AUTO and returns a status,
// instead of being ignored.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "sg_test_util.h"

namespace {

// Sets SG_BACKEND for the length of a scope.
struct BackendEnv {
  std::string saved;
  bool had;
  explicit BackendEnv(const char *value) {
    const char *v = std::getenv("SG_BACKEND");
    had = v != nullptr;
    if (had) saved = v;
    if (value) setenv("SG_BACKEND", value, 1); else unsetenv("SG_BACKEND");
  }
  ~BackendEnv() {
    if (had) setenv("SG_BACKEND", saved.c_str(), 1); else unsetenv("SG_BACKEND");
  }
};

bool has(const std::string &part) {
  return std::string(sg_last_error()).find(part) != std::string::npos;
}

TEST(BackendEnv, AValueNamingNoBackendIsRefusedWithAMessage) {
  for (const char *bad : {"gpu", "HOST", "cpu", " host", "cuda0"}) {
    SCOPED_TRACE(bad);
    BackendEnv env(bad);
    sgtest::Graph g;
    sg_exec_options o;
    sg_exec_options_init(&o);  // AUTO
    sg_exec *e = nullptr;
    EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(e, nullptr);
    EXPECT_TRUE(has("sg_exec_create")) << sg_last_error();
    EXPECT_TRUE(has("SG_BACKEND is \"" + std::string(bad) + "\"")) << sg_last_error();
    EXPECT_TRUE(has("\"host\", \"cuda\" or \"auto\"")) << sg_last_error();
    void *p = nullptr;
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_AUTO, SG_MEMORY_DEVICE, 0, 64, &p), SG_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(has("sg_mem_alloc")) << sg_last_error();
    sg_pinned_pool *pool = nullptr;
    EXPECT_EQ(sg_pinned_pool_create(nullptr, &pool), SG_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(has("SG_BACKEND")) << sg_last_error();
    // An explicit backend does not read the variable.
    o.backend = SG_BACKEND_HOST;
    SG_EXPECT_OK(sg_exec_create(g, &o, &e));
    if (e) sg_exec_destroy(e);
    // The call without a status answers AUTO with the message set, so the
    // next call given its answer refuses it.
    sg_backend resolved = sg_backend_resolve(SG_BACKEND_AUTO);
    EXPECT_EQ(resolved, SG_BACKEND_AUTO);
    EXPECT_TRUE(has("sg_backend_resolve")) << sg_last_error();
    EXPECT_TRUE(has("SG_BACKEND is \"" + std::string(bad) + "\"")) << sg_last_error();
    EXPECT_EQ(sg_mem_alloc(resolved, SG_MEMORY_DEVICE, 0, 64, &p), SG_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    // An explicit backend is returned as it is.
    EXPECT_EQ(sg_backend_resolve(SG_BACKEND_HOST), SG_BACKEND_HOST);
  }
}

TEST(BackendEnv, HostAutoAndEmptyAreAccepted) {
  for (const char *good : {"host", "auto", ""}) {
    SCOPED_TRACE(good);
    BackendEnv env(good);
    sgtest::Graph g;
    sg_exec_options o;
    sg_exec_options_init(&o);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    sg_exec_info info;
    SG_ASSERT_OK(sg_exec_get_info(e, &info));
    bool host = std::string(good) == "host" || sg_cuda_device_count() == 0;
    EXPECT_EQ(info.backend, host ? SG_BACKEND_HOST : SG_BACKEND_CUDA);
  }
}

TEST(BackendEnv, CudaWithoutADeviceSaysSo) {
  if (sg_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  BackendEnv env("cuda");
  sgtest::Graph g;
  sg_exec_options o;
  sg_exec_options_init(&o);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_BACKEND_UNAVAILABLE);
  EXPECT_TRUE(has("SG_BACKEND=cuda")) << sg_last_error();
  EXPECT_TRUE(has("unset it")) << sg_last_error();
}

// The pattern the README and the examples use: resolve once, then pass the
// answer on. SG_BACKEND=cuda without a device must not end up on the host.
TEST(BackendEnv, CudaWithoutADeviceIsRefusedThroughTheResolvedBackend) {
  if (sg_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  BackendEnv env("cuda");
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  EXPECT_NE(backend, SG_BACKEND_HOST);
  EXPECT_TRUE(has("sg_backend_resolve: SG_BACKEND=cuda")) << sg_last_error();
  void *p = nullptr;
  EXPECT_EQ(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, 64, &p), SG_ERR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(p, nullptr);
  EXPECT_TRUE(has("sg_mem_alloc: SG_BACKEND=cuda")) << sg_last_error();
  sgtest::Graph g;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(e, nullptr);
}

TEST(BackendEnv, HostIsHonouredByTheResolvedBackend) {
  BackendEnv env("host");
  EXPECT_EQ(sg_backend_resolve(SG_BACKEND_AUTO), SG_BACKEND_HOST);
}

}  // namespace
