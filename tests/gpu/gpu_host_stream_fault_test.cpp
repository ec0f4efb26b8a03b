// A host-backend launch ordered after a stream whose kernel faults: the
// stream never reaches the launch's gate (the CUDA context is broken), yet
// sg_exec_wait returns, with the CUDA error, instead of waiting forever. Its
// own program: the fault leaves the process's CUDA context unusable.
#include <gtest/gtest.h>

#include <string>

#include "gpu_util.h"

namespace {

TEST(GpuHostStreamFault, WaitReturnsWhenTheStreamFailsBeforeTheGate) {
  SG_SKIP_WITHOUT_GPU();
  int runs = 0;
  sgtest::Graph g;
  sg_host_desc h = {[](void *p) {
                      ++*static_cast<int *>(p);
                      return 0;
                    },
                    &runs, "after the fault"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // The faulting kernel first, then the launch behind it.
  CUDA_ASSERT(cudaLaunchKernel(gt_kernel_illegal_write(), dim3(1), dim3(1), nullptr, 0, s));
  sg_status launched = sg_exec_launch(e, s);
  std::string launch_message = launched ? sg_last_error() : "";
  sg_status waited = sg_exec_wait(e);  // must return (ctest's timeout would catch a hang)
  std::string wait_message = waited ? sg_last_error() : "";
  std::printf("launch: %s %s\nwait: %s %s\nhost node runs: %d\n", sg_status_name(launched),
              launch_message.c_str(), sg_status_name(waited), wait_message.c_str(), runs);
  // Either the launch call already met the broken context, or the wait
  // found it: in both cases the error is CUDA's, and nothing ran.
  if (launched == SG_OK) {
    EXPECT_EQ(waited, SG_ERR_CUDA);
    EXPECT_NE(wait_message.find("caller's stream"), std::string::npos) << wait_message;
    EXPECT_EQ(sg_exec_launch(e, nullptr), SG_ERR_EXEC_FAILED) << sg_last_error();
  } else {
    EXPECT_EQ(launched, SG_ERR_CUDA) << launch_message;
  }
  EXPECT_EQ(runs, 0);
  cudaStreamDestroy(s);
}

}  // namespace
