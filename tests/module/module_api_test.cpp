// The module API without a GPU: argument checks, handles, and the answer
// of a build (or machine) that cannot load modules: SG_ERR_UNSUPPORTED
// without CUDA, SG_ERR_BACKEND_UNAVAILABLE without a device.
#include <string>

#include "sg_test_util.h"
#include "streamgraph/module.h"

namespace {

const char *kSource = "extern \"C\" __global__ void k(int *p) { *p = 1; }\n";

bool modules_can_load() { return sg_cuda_device_count() > 0; }

TEST(ModuleApi, OptionsInitGivesTheDefaults) {
  sg_module_options o;
  memset(&o, 0xab, sizeof o);
  sg_module_options_init(&o);
  EXPECT_EQ(o.device, -1);
  EXPECT_EQ(o.cache, 1);
  EXPECT_EQ(o.name, nullptr);
  EXPECT_EQ(o.compile_option_count, 0u);
  EXPECT_EQ(o.cache_dir, nullptr);
  EXPECT_EQ(o.log, nullptr);
  sg_module_options_init(nullptr);  // accepted, does nothing
}

TEST(ModuleApi, CompileStatusHasANameAndDescription) {
  EXPECT_STREQ(sg_status_name(SG_ERR_COMPILE), "SG_ERR_COMPILE");
  EXPECT_STRNE(sg_status_describe(SG_ERR_COMPILE), "unknown status");
}

TEST(ModuleApi, BadArgumentsAreRefusedBeforeAnythingElse) {
  sgtest::LeakCheck leaks;
  sg_module *m = nullptr;
  sg_module_options o;
  sg_module_options_init(&o);
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("out is NULL"), std::string::npos);
  EXPECT_EQ(sg_module_create_from_source(nullptr, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("source is NULL"), std::string::npos);

  o.compile_option_count = 2;
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("compile_options is NULL"), std::string::npos)
      << sg_last_error();
  const char *opts[] = {"-std=c++17", nullptr};
  o.compile_options = opts;
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("compile_options[1] is NULL"), std::string::npos);

  sg_module_options_init(&o);
  o.name_expression_count = 1;
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("name_expressions"), std::string::npos);

  sg_module_options_init(&o);
  sg_module_header h = {"h.cuh", nullptr};
  o.headers = &h;
  o.header_count = 1;
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("headers[0]"), std::string::npos);

  sg_module_options_init(&o);
  o.cache = 2;
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("cache is 2"), std::string::npos);

  sg_module_options_init(&o);
  o.log_bytes = 10;
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);

  sg_module_options_init(&o);
  std::string long_name(300, 'x');
  o.name = long_name.c_str();
  EXPECT_EQ(sg_module_create_from_source(kSource, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_module_create_from_image("x", 1, &o, &m), SG_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(sg_module_create_from_image(nullptr, 4, nullptr, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_module_create_from_image(kSource, 0, nullptr, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_module_create_from_file(nullptr, nullptr, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
}

TEST(ModuleApi, ImagesThatAreNoCodeAreRefusedByName) {
  sg_module *m = nullptr;
  const char junk[] = "this is neither PTX nor ELF";
  sg_module_options o;
  sg_module_options_init(&o);
  o.name = "junk.bin";
  EXPECT_EQ(sg_module_create_from_image(junk, sizeof junk, &o, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("'junk.bin' is neither a cubin"), std::string::npos)
      << sg_last_error();
  EXPECT_EQ(sg_module_create_from_file("/nonexistent/k.ptx", nullptr, &m),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("cannot open '/nonexistent/k.ptx'"),
            std::string::npos);
}

TEST(ModuleApi, WithoutCudaOrADeviceCreationSaysWhy) {
  if (modules_can_load()) GTEST_SKIP() << "a CUDA device is present";
  sgtest::LeakCheck leaks;
  sg_module *m = nullptr;
  const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
  sg_status want = SG_ERR_UNSUPPORTED;
#ifdef SG_HAVE_CUDA
  want = SG_ERR_BACKEND_UNAVAILABLE;  // CUDA built in, but no device here
#endif
  EXPECT_EQ(sg_module_create_from_source(kSource, nullptr, &m), want) << sg_last_error();
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("sg_module_create_from_source"), std::string::npos) << msg;
#ifndef SG_HAVE_CUDA
  EXPECT_NE(msg.find("no CUDA backend"), std::string::npos) << msg;
#endif
  EXPECT_EQ(sg_module_create_from_image(ptx, sizeof ptx, nullptr, &m), want);
  EXPECT_EQ(m, nullptr);
}

TEST(ModuleApi, HandlesAreChecked) {
  const void *k = nullptr;
  const char *log = nullptr;
  EXPECT_EQ(sg_module_destroy(nullptr), SG_ERR_INVALID_ARGUMENT);
  int not_a_module = 0;
  sg_module *bogus = reinterpret_cast<sg_module *>(&not_a_module);
  EXPECT_EQ(sg_module_destroy(bogus), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_module_get_kernel(bogus, "k", &k), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_module_get_log(bogus, &log), SG_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(sg_last_error()).find("module"), std::string::npos);
  // A graph is not a module.
  sgtest::Graph g;
  EXPECT_EQ(sg_module_destroy(reinterpret_cast<sg_module *>(g.g)), SG_ERR_INVALID_HANDLE);
}

TEST(ModuleApi, StatsAreReadable) {
  EXPECT_EQ(sg_module_get_stats(nullptr), SG_ERR_INVALID_ARGUMENT);
  sg_module_stats s;
  SG_ASSERT_OK(sg_module_get_stats(&s));
  EXPECT_LE(s.live_modules, s.loads);
}

}  // namespace
