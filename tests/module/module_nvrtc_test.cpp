// NVRTC and the compile cache together, without a GPU: sources compiled
// for an architecture named in the options (so no device is asked), cache
// hits counted, compile errors with the compiler's log, name expressions.
#include <cstdlib>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/module.h"

extern "C" {
#include "module/module_compile.h"
}

namespace {

const char *kVadd =
    "extern \"C\" __global__ void vadd(float *o, const float *a, const float *b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) o[i] = a[i] + b[i];\n"
    "}\n";

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/sg_nvrtc_test_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { (void)!system(("rm -rf '" + path + "'").c_str()); }
};

sg_module_stats stats() {
  sg_module_stats s;
  EXPECT_EQ(sg_module_get_stats(&s), SG_OK);
  return s;
}

struct Compile {
  std::vector<const char *> options = {"-arch=compute_90"};
  sg_module_options o;
  sg__compiled out = {};
  Compile() { sg_module_options_init(&o); }
  sg_status run(const char *source, const std::string &cache_dir) {
    o.compile_options = options.data();
    o.compile_option_count = (unsigned)options.size();
    o.cache_dir = cache_dir.c_str();
    sg__compiled_free(&out);
    return sg__module_compile(source, &o, -1, &out, "test");
  }
  ~Compile() { sg__compiled_free(&out); }
};

TEST(ModuleNvrtc, SecondCompileOfTheSameSourceIsACacheHit) {
  sgtest::LeakCheck leaks;
  TempDir dir;
  sg_module_stats s0 = stats();
  {
    Compile c;
    SG_ASSERT_OK(c.run(kVadd, dir.path));
    ASSERT_TRUE(c.out.is_ptx) << "compute_90 gives PTX";
    std::string ptx(reinterpret_cast<char *>(c.out.image), c.out.image_bytes - 1);
    EXPECT_NE(ptx.find(".entry vadd"), std::string::npos) << ptx.substr(0, 400);
    sg_module_stats s1 = stats();
    EXPECT_EQ(s1.compiles, s0.compiles + 1);
    EXPECT_EQ(s1.cache_misses, s0.cache_misses + 1);
    EXPECT_EQ(s1.cache_stores, s0.cache_stores + 1);

    SG_ASSERT_OK(c.run(kVadd, dir.path));
    sg_module_stats s2 = stats();
    EXPECT_EQ(s2.compiles, s1.compiles) << "compiled again instead of hitting the cache";
    EXPECT_EQ(s2.cache_hits, s1.cache_hits + 1);
    EXPECT_EQ(std::string(reinterpret_cast<char *>(c.out.image), c.out.image_bytes - 1), ptx);

    // Another option is another entry.
    c.options.push_back("-DUNUSED=1");
    SG_ASSERT_OK(c.run(kVadd, dir.path));
    EXPECT_EQ(stats().compiles, s2.compiles + 1);

    // The off switch compiles every time.
    c.o.cache = 0;
    SG_ASSERT_OK(c.run(kVadd, dir.path));
    EXPECT_EQ(stats().compiles, s2.compiles + 2);
    setenv("SG_MODULE_CACHE", "off", 1);
    c.o.cache = 1;
    SG_ASSERT_OK(c.run(kVadd, dir.path));
    unsetenv("SG_MODULE_CACHE");
    EXPECT_EQ(stats().compiles, s2.compiles + 3);
  }
}

TEST(ModuleNvrtc, ACompileErrorCarriesTheLog) {
  sgtest::LeakCheck leaks;
  TempDir dir;
  Compile c;
  char log[8192];
  c.o.log = log;
  c.o.log_bytes = sizeof log;
  c.o.name = "broken.cu";
  sg_status st = c.run("extern \"C\" __global__ void k() { undefined_thing = 1; }\n", dir.path);
  ASSERT_EQ(st, SG_ERR_COMPILE) << sg_last_error();
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("'broken.cu' did not compile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;
  EXPECT_NE(std::string(log).find("broken.cu"), std::string::npos) << log;
  EXPECT_NE(std::string(log).find("error"), std::string::npos) << log;
  // A log buffer too small gets the log's beginning, terminated.
  char tiny[8];
  c.o.log = tiny;
  c.o.log_bytes = sizeof tiny;
  EXPECT_EQ(c.run("extern \"C\" __global__ void k() { nope(); }\n", dir.path), SG_ERR_COMPILE);
  EXPECT_EQ(strlen(tiny), sizeof tiny - 1);
  // An option NVRTC does not know is the caller's error too.
  c.o.log = log;
  c.o.log_bytes = sizeof log;
  c.options.push_back("--no-such-option");
  EXPECT_EQ(c.run(kVadd, dir.path), SG_ERR_COMPILE) << sg_last_error();
}

TEST(ModuleNvrtc, NameExpressionsAreLoweredAndCached) {
  sgtest::LeakCheck leaks;
  TempDir dir;
  const char *src =
      "namespace ns { template <typename T> __global__ void scale(T *p, T f) { p[0] *= f; } }\n";
  const char *exprs[] = {"ns::scale<float>", "ns::scale<int>"};
  Compile c;
  c.o.name_expressions = exprs;
  c.o.name_expression_count = 2;
  SG_ASSERT_OK(c.run(src, dir.path));
  ASSERT_EQ(c.out.lowered_count, 2u);
  std::string f = c.out.lowered[0], i = c.out.lowered[1];
  EXPECT_EQ(f.rfind("_Z", 0), 0u) << f;
  EXPECT_NE(f, i);
  uint64_t hits = stats().cache_hits;
  SG_ASSERT_OK(c.run(src, dir.path));
  EXPECT_EQ(stats().cache_hits, hits + 1);
  ASSERT_EQ(c.out.lowered_count, 2u);
  EXPECT_EQ(f, c.out.lowered[0]);
  EXPECT_EQ(i, c.out.lowered[1]);
}

TEST(ModuleNvrtc, HeadersAreIncludedAndPartOfTheKey) {
  TempDir dir;
  const char *src = "#include \"size.cuh\"\nextern \"C\" __global__ void k(int *p) { *p = SIZE; }\n";
  sg_module_header h = {"size.cuh", "#define SIZE 3\n"};
  Compile c;
  c.o.headers = &h;
  c.o.header_count = 1;
  SG_ASSERT_OK(c.run(src, dir.path));
  uint64_t compiles = stats().compiles;
  h.source = "#define SIZE 4\n";
  SG_ASSERT_OK(c.run(src, dir.path));
  EXPECT_EQ(stats().compiles, compiles + 1) << "a changed header hit the old entry";
  c.o.header_count = 0;
  EXPECT_EQ(c.run(src, dir.path), SG_ERR_COMPILE);
}

TEST(ModuleNvrtc, AnUnusableCacheDoesNotFailTheCompile) {
  TempDir dir;
  std::string file = dir.path + "/file";
  FILE *f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  Compile c;
  uint64_t errors = stats().cache_errors;
  SG_ASSERT_OK(c.run(kVadd, file + "/sub"));
  EXPECT_EQ(stats().cache_errors, errors + 1);
}

TEST(ModuleNvrtc, FaultsInTheCompilePathLeakNothing) {
  TempDir dir;
  Compile c;
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 500; nth++) {
    sg_fault_arm(SG_FAULT_ALL, nth);
    sg_status st = c.run(kVadd, dir.path + "/" + std::to_string(nth));
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    sg__compiled_free(&c.out);
    EXPECT_EQ(sg_live_allocations(), start) << "fault " << nth;
    if (!fired) {
      EXPECT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_GT(failures, 0);
      return;
    }
    // A fault in the cache only costs the cache; anywhere else it fails.
    if (st != SG_OK) {
      failures++;
      EXPECT_STRNE(sg_last_error(), "");
    }
  }
  FAIL() << "never completed";
}

}  // namespace
