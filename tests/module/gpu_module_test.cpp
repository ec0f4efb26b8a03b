// Run-time modules on the GPU: a vector add compiled from source and run in
// every execution way, in-place updates of module kernels in graph mode,
// compile errors with the log, cache hits, PTX/cubin/fatbin files, C++
// names, host twins on the host backend, lifetime and fault injection.
// Every result is compared with a CPU computation on fresh random inputs
// (the seed is printed on failure); outputs are poisoned before each run.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/module.h"

namespace {

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

const char *kSource = R"(
extern "C" __global__ void vadd(float *o, const float *a, const float *b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    o[i] = a[i] + b[i];
}
extern "C" __global__ void vsub(float *o, const float *a, const float *b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    o[i] = a[i] - b[i];
}
extern "C" __global__ void fill_value(unsigned *o, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    o[i] = VALUE;
}
)";

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/sg_gpu_module_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

// A module for the length of a test.
struct Module {
  sg_module *m = nullptr;
  ~Module() {
    if (m) sg_module_destroy(m);
  }
  const void *kernel(const char *name) {
    const void *k = nullptr;
    EXPECT_EQ(sg_module_get_kernel(m, name, &k), SG_OK) << sg_last_error();
    return k;
  }
};

sg_status create(Module *mod, const char *src, const std::string &cache_dir,
                 std::vector<const char *> options = {"-DVALUE=42u"}, int cache = 1) {
  sg_module_options o;
  sg_module_options_init(&o);
  o.name = "test_kernels.cu";
  o.compile_options = options.data();
  o.compile_option_count = (unsigned)options.size();
  o.cache_dir = cache_dir.c_str();
  o.cache = cache;
  return sg_module_create_from_source(src, &o, &mod->m);
}

sg_module_stats stats() {
  sg_module_stats s;
  EXPECT_EQ(sg_module_get_stats(&s), SG_OK);
  return s;
}

// Device memory for the length of a test.
struct Dev {
  void *p = nullptr;
  explicit Dev(size_t bytes) {
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, bytes, &p), SG_OK);
  }
  ~Dev() { sg_mem_free(p); }
};

// A kernel descriptor with (o, a, b, n) arguments.
struct BinaryCall {
  void *o, *a, *b;
  int n;
  void *args[4];
  size_t sizes[4] = {sizeof(void *), sizeof(void *), sizeof(void *), sizeof(int)};
  sg_kernel_desc desc;
  BinaryCall(const void *func, void *o_, void *a_, void *b_, int n_, sg_host_twin_fn twin,
             const char *name)
      : o(o_), a(a_), b(b_), n(n_) {
    args[0] = &o;
    args[1] = &a;
    args[2] = &b;
    args[3] = &n;
    desc = {func, SG_KERNEL_CUDA_KERNEL, {64, 1, 1}, {256, 1, 1}, 0, args, sizes, 4, twin, name, 0};
  }
};

void vadd_twin(const sg_kernel_launch *, void *const *args) {
  float *o = *static_cast<float *const *>(args[0]);
  const float *a = *static_cast<float *const *>(args[1]);
  const float *b = *static_cast<float *const *>(args[2]);
  int n = *static_cast<const int *>(args[3]);
  for (int i = 0; i < n; i++) o[i] = a[i] + b[i];
}

struct Inputs {
  unsigned seed;
  std::vector<float> a, b, out;
  explicit Inputs(int n) : seed(std::random_device{}()), a(n), b(n), out(n) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1000.f, 1000.f);
    for (int i = 0; i < n; i++) {
      a[i] = d(rng);
      b[i] = d(rng);
    }
  }
  void poison() { std::fill(out.begin(), out.end(), std::nanf("")); }
};

struct Way {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
};
const Way kWays[] = {{"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
                     {"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
                     {"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE}};

sg_exec_options cuda_options(const Way &w) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = w.mode;
  o.build = w.build;
  return o;
}

#ifdef SG_TEST_HAVE_NVRTC
TEST(GpuModule, VectorAddFromSourceMatchesTheCpuInEveryWay) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  Module mod;
  ASSERT_EQ(create(&mod, kSource, cache.path), SG_OK) << sg_last_error();
  const int n = 1 << 20;
  size_t bytes = n * sizeof(float);
  Dev da(bytes), db(bytes), dout(bytes);
  for (const Way &w : kWays) {
    Inputs in(n);
    in.poison();
    sgtest::Graph g;
    sg_node ua, ub, k;
    sg_copy_desc ca = {da.p, in.a.data(), bytes, SG_COPY_AUTO, "up a"};
    sg_copy_desc cb = {db.p, in.b.data(), bytes, SG_COPY_AUTO, "up b"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &ca, nullptr, 0, &ua));
    SG_ASSERT_OK(sg_graph_add_copy(g, &cb, nullptr, 0, &ub));
    BinaryCall call(mod.kernel("vadd"), dout.p, da.p, db.p, n, vadd_twin, "vadd");
    sg_node deps[] = {ua, ub};
    SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, deps, 2, &k));
    sg_copy_desc cd = {in.out.data(), dout.p, bytes, SG_COPY_AUTO, "down"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &cd, &k, 1, nullptr));
    sgtest::Exec e;
    sg_exec_options o = cuda_options(w);
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (int rep = 0; rep < 2; rep++) {
      in.poison();
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      for (int i = 0; i < n; i++)
        ASSERT_EQ(in.out[i], in.a[i] + in.b[i]) << w.name << " i=" << i << " seed " << in.seed;
    }
  }
}

TEST(GpuModule, KernelNodesUpdateInPlaceInGraphMode) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  Module mod;
  ASSERT_EQ(create(&mod, kSource, cache.path), SG_OK) << sg_last_error();
  const int n = 100000;
  size_t bytes = n * sizeof(float);
  Inputs in(n);
  Dev da(bytes), db(bytes), dout(bytes), dout2(bytes);
  SG_ASSERT_OK(sg_mem_copy(da.p, in.a.data(), bytes));
  SG_ASSERT_OK(sg_mem_copy(db.p, in.b.data(), bytes));
  const void *vadd = mod.kernel("vadd"), *vsub = mod.kernel("vsub");
  sgtest::Graph g;
  sg_node k;
  BinaryCall call(vadd, dout.p, da.p, db.p, n, nullptr, "binary");
  SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, nullptr, 0, &k));
  sg_exec_options o = cuda_options(kWays[1]);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  auto run_and_check = [&](void *out, bool add, const char *what) {
    SG_ASSERT_OK(sg_mem_copy(out, std::vector<float>(n, std::nanf("")).data(), bytes));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    std::vector<float> got(n);
    SG_ASSERT_OK(sg_mem_copy(got.data(), out, bytes));
    for (int i = 0; i < n; i++)
      ASSERT_EQ(got[i], add ? in.a[i] + in.b[i] : in.a[i] - in.b[i])
          << what << " i=" << i << " seed " << in.seed;
  };
  run_and_check(dout.p, true, "first launch");
  // New arguments: applied to the instantiated graph in place.
  BinaryCall moved(vadd, dout2.p, da.p, db.p, n, nullptr, "binary");
  SG_ASSERT_OK(sg_exec_set_kernel(e, k, &moved.desc));
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.in_place_updates, 1u);
  EXPECT_EQ(s.rebuilds, 0u);
  run_and_check(dout2.p, true, "after the argument update");
  // Another kernel of the same module: the result follows, in place or rebuilt.
  BinaryCall other(vsub, dout.p, da.p, db.p, n, nullptr, "binary");
  SG_ASSERT_OK(sg_exec_set_kernel(e, k, &other.desc));
  run_and_check(dout.p, false, "after the kernel update");
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.param_updates, 2u);
  EXPECT_EQ(s.in_place_updates + s.rebuilds, 2u);
}

TEST(GpuModule, ABadSourceGivesTheCompilersLog) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  sgtest::LeakCheck leaks;
  Module mod;
  sg_module_options o;
  sg_module_options_init(&o);
  o.name = "bad.cu";
  o.cache_dir = cache.path.c_str();
  char log[4096];
  o.log = log;
  o.log_bytes = sizeof log;
  EXPECT_EQ(sg_module_create_from_source(
                "extern \"C\" __global__ void k(float *p) { p[0] = missing_name; }", &o, &mod.m),
            SG_ERR_COMPILE);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("sg_module_create_from_source"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'bad.cu' did not compile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing_name"), std::string::npos) << msg;
  EXPECT_NE(std::string(log).find("missing_name"), std::string::npos) << log;
  EXPECT_EQ(mod.m, nullptr);
}

TEST(GpuModule, TheSecondCreateIsACacheHit) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  sg_module_stats s0 = stats();
  Module first, second;
  ASSERT_EQ(create(&first, kSource, cache.path), SG_OK) << sg_last_error();
  sg_module_stats s1 = stats();
  EXPECT_EQ(s1.compiles, s0.compiles + 1);
  EXPECT_EQ(s1.cache_stores, s0.cache_stores + 1);
  ASSERT_EQ(create(&second, kSource, cache.path), SG_OK) << sg_last_error();
  sg_module_stats s2 = stats();
  EXPECT_EQ(s2.compiles, s1.compiles) << "compiled again";
  EXPECT_EQ(s2.cache_hits, s1.cache_hits + 1);
  EXPECT_EQ(s2.loads, s1.loads + 1);
  // Both modules run, and -DVALUE reached the compiler.
  const int n = 4096;
  Dev d(n * sizeof(unsigned));
  for (Module *m : {&first, &second}) {
    int count = n;
    void *ptr = d.p;
    void *args[] = {&ptr, &count};
    size_t sizes[] = {sizeof ptr, sizeof count};
    sg_kernel_desc k = {m->kernel("fill_value"), SG_KERNEL_CUDA_KERNEL, {8, 1, 1}, {128, 1, 1},
                        0, args, sizes, 2, nullptr, "fill", 0};
    SG_ASSERT_OK(sg_mem_copy(d.p, std::vector<unsigned>(n, 7).data(), n * sizeof(unsigned)));
    sgtest::Graph g;
    SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));
    sg_exec_options o = cuda_options(kWays[0]);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    std::vector<unsigned> got(n);
    SG_ASSERT_OK(sg_mem_copy(got.data(), d.p, n * sizeof(unsigned)));
    for (int i = 0; i < n; i++) ASSERT_EQ(got[i], 42u) << "i=" << i;
  }
}

TEST(GpuModule, CppKernelsByNameExpression) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  const char *src = R"(
namespace ns {
template <typename T> __global__ void scale(T *p, T f, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] *= f;
}
})";
  const char *exprs[] = {"ns::scale<float>", "ns::scale<int>"};
  sg_module_options o;
  sg_module_options_init(&o);
  o.name_expressions = exprs;
  o.name_expression_count = 2;
  o.cache_dir = cache.path.c_str();
  Module mod;
  ASSERT_EQ(sg_module_create_from_source(src, &o, &mod.m), SG_OK) << sg_last_error();
  const void *k = nullptr;
  EXPECT_EQ(sg_module_get_kernel(mod.m, "scale", &k), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("name_expressions"), std::string::npos);
  const int n = 1000;
  Dev df(n * sizeof(float)), di(n * sizeof(int));
  std::vector<float> f(n);
  std::vector<int> iv(n);
  for (int i = 0; i < n; i++) {
    f[i] = float(i) * 0.5f;
    iv[i] = i - 500;
  }
  SG_ASSERT_OK(sg_mem_copy(df.p, f.data(), n * sizeof(float)));
  SG_ASSERT_OK(sg_mem_copy(di.p, iv.data(), n * sizeof(int)));
  void *pf = df.p, *pi = di.p;
  float ff = 4.0f;
  int fi = -3, count = n;
  void *af[] = {&pf, &ff, &count}, *ai[] = {&pi, &fi, &count};
  size_t sf[] = {sizeof pf, sizeof ff, sizeof count}, si[] = {sizeof pi, sizeof fi, sizeof count};
  sg_kernel_desc kf = {mod.kernel("ns::scale<float>"), SG_KERNEL_CUDA_KERNEL, {4, 1, 1},
                       {128, 1, 1}, 0, af, sf, 3, nullptr, "scale float", 0};
  sg_kernel_desc ki = {mod.kernel("ns::scale<int>"), SG_KERNEL_CUDA_KERNEL, {4, 1, 1},
                       {128, 1, 1}, 0, ai, si, 3, nullptr, "scale int", 0};
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &kf, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &ki, nullptr, 0, nullptr));
  sg_exec_options eo = cuda_options(kWays[1]);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &eo, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::vector<float> gf(n);
  std::vector<int> gi(n);
  SG_ASSERT_OK(sg_mem_copy(gf.data(), df.p, n * sizeof(float)));
  SG_ASSERT_OK(sg_mem_copy(gi.data(), di.p, n * sizeof(int)));
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(gf[i], f[i] * 4.0f) << i;
    ASSERT_EQ(gi[i], iv[i] * -3) << i;
  }
}

TEST(GpuModule, AKernelWithAHostTwinRunsOnTheHostBackendToo) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  Module mod;
  ASSERT_EQ(create(&mod, kSource, cache.path), SG_OK) << sg_last_error();
  const int n = 5000;
  Inputs in(n);
  void *ha, *hb, *hout;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, n * sizeof(float), &ha));
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, n * sizeof(float), &hb));
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, n * sizeof(float), &hout));
  memcpy(ha, in.a.data(), n * sizeof(float));
  memcpy(hb, in.b.data(), n * sizeof(float));
  BinaryCall call(mod.kernel("vadd"), hout, ha, hb, n, vadd_twin, "vadd");
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  const float *out = static_cast<const float *>(hout);
  for (int i = 0; i < n; i++) ASSERT_EQ(out[i], in.a[i] + in.b[i]) << i << " seed " << in.seed;
  sg_mem_free(ha);
  sg_mem_free(hb);
  sg_mem_free(hout);
}

TEST(GpuModule, AnExecutableKeepsItsModuleLoaded) {
  SKIP_WITHOUT_GPU();
  TempDir cache;
  sg_module *m = nullptr;
  sg_module_options o;
  sg_module_options_init(&o);
  o.cache_dir = cache.path.c_str();
  std::vector<const char *> opts = {"-DVALUE=5u"};
  o.compile_options = opts.data();
  o.compile_option_count = 1;
  ASSERT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_OK) << sg_last_error();
  uint64_t live = stats().live_modules;
  const void *fill = nullptr;
  SG_ASSERT_OK(sg_module_get_kernel(m, "fill_value", &fill));
  const int n = 2048;
  Dev d(n * sizeof(unsigned));
  void *ptr = d.p;
  int count = n;
  void *args[] = {&ptr, &count};
  size_t sizes[] = {sizeof ptr, sizeof count};
  sg_kernel_desc k = {fill, SG_KERNEL_CUDA_KERNEL, {4, 1, 1}, {256, 1, 1}, 0, args, sizes, 2,
                      nullptr, "fill", 0};
  sg_graph *g;
  SG_ASSERT_OK(sg_graph_create(&g));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));
  sg_exec_options eo = cuda_options(kWays[1]);
  sg_exec *e;
  SG_ASSERT_OK(sg_exec_create(g, &eo, &e));
  SG_ASSERT_OK(sg_module_destroy(m));
  SG_ASSERT_OK(sg_graph_destroy(g));
  EXPECT_EQ(sg_module_get_kernel(m, "fill_value", &fill), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(stats().live_modules, live) << "unloaded while an executable names its kernel";
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::vector<unsigned> got(n);
  SG_ASSERT_OK(sg_mem_copy(got.data(), d.p, n * sizeof(unsigned)));
  for (int i = 0; i < n; i++) ASSERT_EQ(got[i], 5u) << i;
  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_EQ(stats().live_modules, live - 1);
}

TEST(GpuModule, FaultsWhileCreatingLeakNothing) {
  SKIP_WITHOUT_GPU();
  for (int cache_on : {0, 1}) {
    TempDir cache;
    {  // warm: the CUDA context, and (cache_on) the entry the sweep then hits
      Module warm;
      ASSERT_EQ(create(&warm, kSource, cache.path, {"-DVALUE=1u"}, cache_on), SG_OK);
      warm.kernel("vadd");
    }
    long start = sg_live_allocations();
    int failures = 0;
    bool completed = false;
    for (unsigned long nth = 1; nth < 400 && !completed; nth++) {
      Module mod;
      sg_fault_arm(SG_FAULT_ALL, nth);
      sg_status st = create(&mod, kSource, cache.path, {"-DVALUE=1u"}, cache_on);
      const void *k = nullptr;
      if (!st) st = sg_module_get_kernel(mod.m, "vadd", &k);
      int fired = sg_fault_fired();
      sg_fault_arm(0, 0);
      if (mod.m) sg_module_destroy(mod.m);
      mod.m = nullptr;
      ASSERT_EQ(sg_live_allocations(), start) << "cache " << cache_on << " fault " << nth;
      if (!fired) {
        ASSERT_EQ(st, SG_OK) << sg_last_error();
        completed = true;
      } else if (st != SG_OK) {
        failures++;
        EXPECT_STRNE(sg_last_error(), "") << "fault " << nth;
      }
    }
    EXPECT_TRUE(completed);
    EXPECT_GT(failures, 0);
  }
}
#endif  // SG_TEST_HAVE_NVRTC

std::string file(const char *ext) { return std::string(SG_TEST_MODULE_FILES) + ext; }

void run_fill(sg_module *m, unsigned value) {
  const void *fill = nullptr;
  ASSERT_EQ(sg_module_get_kernel(m, "fill", &fill), SG_OK) << sg_last_error();
  const int n = 3000;
  Dev d(n * sizeof(unsigned));
  void *ptr = d.p;
  int count = n;
  void *args[] = {&ptr, &value, &count};
  size_t sizes[] = {sizeof ptr, sizeof value, sizeof count};
  sg_kernel_desc k = {fill, SG_KERNEL_CUDA_KERNEL, {3, 1, 1}, {128, 1, 1}, 0, args, sizes, 3,
                      nullptr, "fill", 0};
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));
  for (const Way &w : kWays) {
    SG_ASSERT_OK(sg_mem_copy(d.p, std::vector<unsigned>(n, 0xdeadbeef).data(), n * sizeof(unsigned)));
    sg_exec_options o = cuda_options(w);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    std::vector<unsigned> got(n);
    SG_ASSERT_OK(sg_mem_copy(got.data(), d.p, n * sizeof(unsigned)));
    for (int i = 0; i < n; i++) ASSERT_EQ(got[i], value + unsigned(i)) << w.name << " i=" << i;
  }
}

TEST(GpuModuleFiles, APtxFileLoads) {
  SKIP_WITHOUT_GPU();
  sgtest::LeakCheck leaks;
  Module mod;
  ASSERT_EQ(sg_module_create_from_file(file(".ptx").c_str(), nullptr, &mod.m), SG_OK)
      << sg_last_error();
  const char *log = nullptr;
  SG_ASSERT_OK(sg_module_get_log(mod.m, &log));
  EXPECT_STREQ(log, "");
  run_fill(mod.m, 1000);
  const void *k = nullptr;
  EXPECT_EQ(sg_module_get_kernel(mod.m, "no_such_kernel", &k), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("no_such_kernel"), std::string::npos);
}

TEST(GpuModuleFiles, PtxInMemoryWithoutItsNulLoads) {
  SKIP_WITHOUT_GPU();
  std::ifstream f(file(".ptx"), std::ios::binary);
  std::string ptx((std::istreambuf_iterator<char>(f)), {});
  ASSERT_FALSE(ptx.empty());
  Module mod;
  ASSERT_EQ(sg_module_create_from_image(ptx.data(), ptx.size(), nullptr, &mod.m), SG_OK)
      << sg_last_error();
  run_fill(mod.m, 7);
}

TEST(GpuModuleFiles, FatbinAndCubinFilesLoad) {
  SKIP_WITHOUT_GPU();
  Module fat;
  ASSERT_EQ(sg_module_create_from_file(file(".fatbin").c_str(), nullptr, &fat.m), SG_OK)
      << sg_last_error();
  run_fill(fat.m, 11);
  cudaDeviceProp p;
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  if (p.major != 9 || p.minor != 0) GTEST_SKIP() << "the cubin is sm_90 machine code";
  Module cubin;
  ASSERT_EQ(sg_module_create_from_file(file(".cubin").c_str(), nullptr, &cubin.m), SG_OK)
      << sg_last_error();
  run_fill(cubin.m, 13);
}

// Regression (a launch hung behind its own host node, for kernels of a
// module): a library kernel (cudaKernel_t) is context-independent, and its
// first launch in a context loads it there, which may wait for the context:
// for a host node ahead of it that waits for a gate the caller opens only
// after sg_exec_launch returns (a caller queuing launches behind a held
// one). The executable loads the kernel at creation, and when
// sg_exec_set_kernel brings another. Each part takes a module of its own,
// loaded just before, so that its kernel has never run. Should a launch
// block, a watchdog opens the gate after 20 s and the test fails instead
// of hanging.
// Launches `x` (whose host node waits for `gate`), opening the gate once
// sg_exec_launch has returned, or after 20 s; then waits for the launch.
void launch_behind_gate(sg_exec *x, sgtest::HostGate *gate, const std::string &what) {
  gate->set(false);
  sgtest::Watchdog watchdog([gate] { gate->release(); }, 20);
  sg_status st = sg_exec_launch(x, nullptr);
  watchdog.disarm();
  gate->release();
  EXPECT_FALSE(watchdog.fired())
      << what << ": sg_exec_launch returned only once the watchdog opened the gate: the launch "
                 "waited for its own host node (the module kernel loaded at launch?)";
  ASSERT_EQ(st, SG_OK) << what << ": " << sg_last_error();
  ASSERT_EQ(sg_exec_wait(x), SG_OK) << what << ": " << sg_last_error();
}

TEST(GpuModuleFiles, ModuleKernelFirstLaunchedBehindAWaitingHostNode) {
  SKIP_WITHOUT_GPU();
  const int n = 3000;
  for (const Way &w : kWays) {
    Module first, second;
    ASSERT_EQ(sg_module_create_from_file(file(".ptx").c_str(), nullptr, &first.m), SG_OK)
        << sg_last_error();
    Dev d(n * sizeof(unsigned));
    void *ptr = d.p;
    unsigned value = 500;
    int count = n;
    void *args[] = {&ptr, &value, &count};
    size_t sizes[] = {sizeof ptr, sizeof value, sizeof count};
    sg_kernel_desc k = {first.kernel("fill"), SG_KERNEL_CUDA_KERNEL, {3, 1, 1}, {128, 1, 1}, 0,
                        args, sizes, 3, nullptr, "fill", 0};
    sgtest::HostGate gate;
    sg_host_desc h = {sgtest::HostGate::wait_fn, &gate, "gate"};
    sgtest::Graph g;
    sg_node held, fill;
    SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &held));
    SG_ASSERT_OK(sg_graph_add_kernel(g, &k, &held, 1, &fill));
    sg_exec_options o = cuda_options(w);
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
    for (int part = 0; part < 2; part++) {
      if (part == 1) { /* another module's kernel, never run, set in place */
        ASSERT_EQ(sg_module_create_from_file(file(".ptx").c_str(), nullptr, &second.m), SG_OK)
            << sg_last_error();
        value = 900;
        k.func = second.kernel("fill");
        ASSERT_EQ(sg_exec_set_kernel(x, fill, &k), SG_OK) << sg_last_error();
      }
      SG_ASSERT_OK(
          sg_mem_copy(d.p, std::vector<unsigned>(n, 0xdeadbeef).data(), n * sizeof(unsigned)));
      const std::string what =
          std::string(w.name) + (part ? ", kernel set by sg_exec_set_kernel" : ", at creation");
      launch_behind_gate(x, &gate, what);
      if (HasFatalFailure()) return;
      std::vector<unsigned> got(n);
      SG_ASSERT_OK(sg_mem_copy(got.data(), d.p, n * sizeof(unsigned)));
      for (int i = 0; i < n; i++) ASSERT_EQ(got[i], value + unsigned(i)) << what << " i=" << i;
    }
  }
}

}  // namespace
