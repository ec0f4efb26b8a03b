// Without CUDA (a build without it, or no device), the host backend refuses
// a caller's stream with a message saying why and what to do; with a
// device, tests/gpu/gpu_host_stream_test.cpp covers the stream.
#include <gtest/gtest.h>

#include <string>

#include "sg_test_util.h"

namespace {

TEST(HostStream, AStreamIsRefusedWhereNoCudaDeviceIs) {
  if (sg_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  sgtest::Graph g;
  sg_host_desc h = {[](void *) { return 0; }, nullptr, "noop"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (void *stream : {SG_STREAM_LEGACY, reinterpret_cast<void *>(0x1000)}) {
    EXPECT_EQ(sg_exec_launch(e, stream), SG_ERR_INVALID_ARGUMENT);
    std::string msg = sg_last_error();
    EXPECT_NE(msg.find("sg_exec_launch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("only where CUDA is present"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pass NULL"), std::string::npos) << msg;
  }
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // refused launches left nothing behind
  SG_ASSERT_OK(sg_exec_wait(e));
}

}  // namespace
