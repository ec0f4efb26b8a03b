// Data-parallel pipelines on the host backend (devices emulated): instances
// are made on the devices listed, round robin, outputs equal the serial
// reference and completions come in batch order; bad device lists are refused.
#include <vector>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;
using pipetest::Ctx;

TEST(PipelineDevices, InstancesGoRoundRobinOverTheDevices) {
  sgtest::LeakCheck leaks;
  const size_t n = 129;
  const unsigned depth = 5, count = 23;
  Chain chain(SG_BACKEND_HOST, n, false);
  pipetest::Batches set(chain, count, [](unsigned) { return false; });
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &set.list;
  sg_pipeline_options o = pipetest::chain_options(&ctx, depth, SG_MODE_STREAMS);
  const int devices[3] = {2, 0, 5};
  o.devices = devices;
  o.device_count = 3;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  for (unsigned i = 0; i < depth; i++) {
    sg_pipeline_instance inst;
    SG_ASSERT_OK(sg_pipeline_get_instance(p, i, &inst));
    sg_exec_info info;
    SG_ASSERT_OK(sg_exec_get_info(inst.exec, &info));
    EXPECT_EQ(info.device, devices[i % 3]) << "instance " << i;
  }
  for (unsigned i = 0; i < count; i++) {
    sg_pipeline_batch b = set.list[i]->desc(set.list[i]);
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  ASSERT_EQ(ctx.rec.order.size(), count);
  for (unsigned i = 0; i < count; i++) {
    EXPECT_EQ(ctx.rec.order[i], i) << "completions out of order";
    EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
    EXPECT_EQ(ctx.rec.output_errors[i], "") << "batch " << i;
  }
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

TEST(PipelineDevices, BadDeviceListsAreRefused) {
  Chain chain(SG_BACKEND_HOST, 8, false);
  Ctx ctx;
  ctx.chain = &chain;
  sg_pipeline *p = nullptr;
  const int devices[2] = {0, -1};
  sg_pipeline_options o = pipetest::chain_options(&ctx, 2, SG_MODE_STREAMS);
  o.devices = devices;
  o.device_count = 0;
  EXPECT_EQ(sg_pipeline_create(chain.g, &o, &p), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("give both or neither"), std::string::npos)
      << sg_last_error();
  o.devices = nullptr;
  o.device_count = 2;
  EXPECT_EQ(sg_pipeline_create(chain.g, &o, &p), SG_ERR_INVALID_ARGUMENT);
  o.devices = devices;
  o.device_count = 2;
  EXPECT_EQ(sg_pipeline_create(chain.g, &o, &p), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("devices[1] is -1"), std::string::npos)
      << sg_last_error();
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ctx.counters.setups, 0);
}

}  // namespace
