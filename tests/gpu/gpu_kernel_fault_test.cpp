// A kernel that writes to an illegal address fails the launch with a clear
// status, and nothing hangs. The fault is a sticky CUDA error: it leaves the
// process's CUDA context unusable, so this program holds one test only and
// is built three times, once per execution way (GT_MODE_INDEX into
// gputest::all_modes()), each its own process.
#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include "gpu_util.h"

#ifndef GT_MODE_INDEX
#define GT_MODE_INDEX 0
#endif
#if GT_MODE_INDEX == 0
#define GT_CASE IllegalAddressFailsTheLaunch_streams
#elif GT_MODE_INDEX == 1
#define GT_CASE IllegalAddressFailsTheLaunch_graph_explicit
#else
#define GT_CASE IllegalAddressFailsTheLaunch_graph_capture
#endif

namespace {

int never_called(void *) { return 0; }

TEST(KernelFault, GT_CASE) {
  SG_SKIP_WITHOUT_GPU();
  const gputest::ModeCase &m = gputest::all_modes()[GT_MODE_INDEX];
  sgtest::Graph g;
  gputest::KernelCall bad(gt_kernel_illegal_write(), 1, 1, 0, "bad-kernel");
  sg_node n_bad;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &bad.desc, nullptr, 0, &n_bad));
  sg_host_desc h = {never_called, nullptr, "after"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n_bad, 1, nullptr));
  sg_exec_options o = gputest::cuda_options(m);
  sg_exec *x = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x));

  // Everything below must return: run it on a thread and give it a minute.
  auto done = std::async(std::launch::async, [x] {
    sg_status launch = sg_exec_launch(x, nullptr);
    std::string launch_msg = sg_last_error();
    sg_status wait = sg_exec_wait(x);
    std::string wait_msg = sg_last_error();
    sg_status query = sg_exec_query(x);
    sg_status again = sg_exec_launch(x, nullptr);
    sg_status destroy = sg_exec_destroy(x);
    return std::make_tuple(launch, launch_msg, wait, wait_msg, query, again, destroy);
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << m.name << ": a call hung after a kernel fault";
  auto [launch, launch_msg, wait, wait_msg, query, again, destroy] = done.get();

  // The launch itself may already see the fault (an error is returned by
  // whatever call comes after it) or not; the wait always does.
  EXPECT_TRUE(launch == SG_OK || launch == SG_ERR_CUDA) << sg_status_name(launch) << ": " << launch_msg;
  EXPECT_EQ(wait, SG_ERR_CUDA) << wait_msg;
  EXPECT_NE(wait_msg.find("cudaErrorIllegalAddress"), std::string::npos) << wait_msg;
  EXPECT_NE(wait_msg.find("sticky"), std::string::npos) << wait_msg;
  EXPECT_EQ(query, SG_ERR_CUDA);
  EXPECT_EQ(again, SG_ERR_EXEC_FAILED);
  EXPECT_EQ(destroy, SG_OK);
  std::printf("[ %s ] wait said: %s\n", m.name, wait_msg.c_str());
}

}  // namespace
