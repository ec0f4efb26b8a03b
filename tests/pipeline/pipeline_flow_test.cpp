// Pipelines on the host backend: back-pressure (blocking and non-blocking
// submit) and destroying a pipeline with batches in flight. A host node that
// waits on a per-batch gate holds a batch in flight as long as a test needs.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "pipeline_fixture.h"

namespace {

using pipetest::Gate;
using pipetest::gate_fn;

struct Reports {
  std::vector<uint64_t> order;
  std::vector<sg_status> status;
};

void on_complete(uint64_t batch, sg_status st, void *, void *user) {
  auto *r = static_cast<Reports *>(user);
  r->order.push_back(batch);
  r->status.push_back(st);
}

// One host node "gate"; each batch binds its own gate.
struct GateGraph {
  sgtest::Graph g;
  sg_node gate{};
  Gate tmpl;
  GateGraph() {
    tmpl.open = true;
    sg_host_desc h = {gate_fn, &tmpl, "gate"};
    EXPECT_EQ(sg_graph_add_host(g, &h, nullptr, 0, &gate), SG_OK);
  }
};

// queue 1: a batch is launched once its instance is idle (the queue-ahead
// tests are in pipeline_queue_test.cpp).
sg_pipeline_options gate_options(unsigned depth, Reports *reports) {
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.queue = 1;
  o.exec.backend = SG_BACKEND_HOST;
  o.on_complete = on_complete;
  o.user_data = reports;
  return o;
}

sg_status submit_gate(sg_pipeline *p, sg_node node, Gate *g, bool blocking) {
  sg_pipeline_bind b = sg_bind_host_data(node, g);
  sg_pipeline_batch batch = {&b, 1, nullptr};
  return blocking ? sg_pipeline_submit(p, &batch, nullptr) : sg_pipeline_try_submit(p, &batch, nullptr);
}

TEST(PipelineFlow, BackPressureBlocksOrRefuses) {
  sgtest::LeakCheck leaks;
  GateGraph gg;
  Reports reports;
  sg_pipeline_options o = gate_options(2, &reports);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(gg.g, &o, &p));
  Gate g0, g1, g2;
  g1.open = g2.open = true;
  SG_ASSERT_OK(submit_gate(p, gg.gate, &g0, false)); // instance 0, held by its gate
  SG_ASSERT_OK(submit_gate(p, gg.gate, &g1, false)); // instance 1
  // Batch 2 needs instance 0, still running batch 0.
  EXPECT_EQ(submit_gate(p, gg.gate, &g2, false), SG_ERR_WOULD_BLOCK);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("instance 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("batch 0"), std::string::npos) << msg;
  EXPECT_TRUE(reports.order.empty()) << "batch 1 must not be reported before batch 0";
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.would_block, 1u);
  EXPECT_EQ(s.submitted, 2u);

  // A blocking submit waits until batch 0 is done, which only the opener
  // thread's release allows.
  std::atomic<bool> released{false};
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    released = true;
    g0.release();
  });
  SG_EXPECT_OK(submit_gate(p, gg.gate, &g2, true));
  EXPECT_TRUE(released) << "submit returned while its instance was still busy";
  opener.join();
  ASSERT_GE(reports.order.size(), 1u);
  EXPECT_EQ(reports.order[0], 0u);
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.waits, 1u);

  SG_ASSERT_OK(sg_pipeline_drain(p));
  EXPECT_EQ(reports.order, (std::vector<uint64_t>{0, 1, 2}));
  for (sg_status st : reports.status) EXPECT_EQ(st, SG_OK);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

TEST(PipelineFlow, TrySubmitOnFreeInstancesAndAfterCompletion) {
  sgtest::LeakCheck leaks;
  GateGraph gg;
  Reports reports;
  sg_pipeline_options o = gate_options(3, &reports);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(gg.g, &o, &p));
  std::vector<Gate> gates(7);
  for (auto &g : gates) g.open = true;
  unsigned accepted = 0;
  // try_submit every batch, polling for room: never blocks, never loses one.
  sg_status st = SG_OK;
  sgtest::poll_until([&] {
    st = submit_gate(p, gg.gate, &gates[accepted], false);
    if (st == SG_OK) accepted++;
    return accepted == gates.size() || (st != SG_OK && st != SG_ERR_WOULD_BLOCK);
  });
  ASSERT_TRUE(st == SG_OK || st == SG_ERR_WOULD_BLOCK) << sg_last_error();
  ASSERT_EQ(accepted, gates.size());
  SG_ASSERT_OK(sg_pipeline_drain(p));
  EXPECT_EQ(reports.order, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6}));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// Destroy waits for batches in flight, does not report them, tears every
// instance down, and leaks nothing.
TEST(PipelineFlow, DestroyWithBatchesInFlight) {
  sgtest::LeakCheck leaks;
  GateGraph gg;
  Reports reports;
  std::atomic<int> teardowns{0};
  sg_pipeline_options o = gate_options(3, &reports);
  struct Both {
    Reports *r;
    std::atomic<int> *t;
  };
  // Teardown shares user_data with on_complete: one struct for both.
  Both both{&reports, &teardowns};
  o.user_data = &both;
  o.on_complete = [](uint64_t batch, sg_status st, void *d, void *u) {
    on_complete(batch, st, d, static_cast<Both *>(u)->r);
  };
  o.teardown = [](sg_pipeline_instance *, void *u) { (*static_cast<Both *>(u)->t)++; };
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(gg.g, &o, &p));
  Gate g[3];
  for (auto &gate : g) SG_ASSERT_OK(submit_gate(p, gg.gate, &gate, true));
  std::atomic<bool> released{false};
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    released = true;
    for (auto &gate : g) gate.release();
  });
  SG_EXPECT_OK(sg_pipeline_destroy(p));
  EXPECT_TRUE(released) << "destroy returned with batches still running";
  opener.join();
  EXPECT_TRUE(reports.order.empty()) << "destroy must not report";
  EXPECT_EQ(teardowns, 3);
  EXPECT_EQ(sg_pipeline_submit(p, nullptr, nullptr), SG_ERR_INVALID_HANDLE);
}

// The same with real work in flight (the chain, slow enough to be running).
TEST(PipelineFlow, DestroyWithChainInFlight) {
  sgtest::LeakCheck leaks;
  const size_t n = 20000;
  pipetest::Chain chain(SG_BACKEND_HOST, n, false);
  pipetest::Ctx ctx;
  ctx.chain = &chain;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 4, SG_MODE_GRAPH);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  std::vector<std::unique_ptr<pipetest::Batch>> batches;
  for (unsigned i = 0; i < 6; i++) {
    batches.emplace_back(new pipetest::Batch(chain, i % 2 == 1, i));
    sg_pipeline_batch b = batches.back()->desc(batches.back().get());
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  SG_EXPECT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(ctx.counters.teardowns, 4);
  // Every accepted batch ran to its end before destroy returned.
  for (auto &b : batches) EXPECT_EQ(b->mismatch(n), "");
}

}  // namespace
