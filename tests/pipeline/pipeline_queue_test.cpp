// Queue-ahead on the host backend: a batch (an executable launch) is
// accepted while earlier ones on its instance still run, keeps the
// parameters it was launched with while later binds change the instance,
// waits for and is attributed exactly its own launch, and a failure stops
// what is queued behind it without a hang or a leak.
#include <chrono>
#include <mutex>
#include <thread>

#include "pipeline_fixture.h"

namespace {

using pipetest::Gate;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// What a host node run saw: the value of the data it was given, in run order.
struct Log {
  std::mutex m;
  std::vector<int> seen;
  void add(int v) {
    std::lock_guard<std::mutex> l(m);
    seen.push_back(v);
  }
  std::vector<int> get() {
    std::lock_guard<std::mutex> l(m);
    return seen;
  }
};

// The data of one run of the "probe" host node: waits for its gate (when it
// has one), logs its value, fails when told.
struct Probe {
  Gate *gate = nullptr;
  Log *log = nullptr;
  int value = 0;
  bool fail = false;
};

int probe_fn(void *p) {
  auto *probe = static_cast<Probe *>(p);
  if (probe->gate) pipetest::gate_fn(probe->gate);
  probe->log->add(probe->value);
  return probe->fail ? 9 : 0;
}

// What a reader logs: its copy's destination, dst[0] + 1000.
struct Reader {
  const uint32_t *dst = nullptr;
  Log *log = nullptr;
};

int reader_fn(void *p) {
  auto *r = static_cast<Reader *>(p);
  r->log->add(1000 + static_cast<int>(r->dst[0]));
  return 0;
}

// probe -> copy (src -> dst) -> reader, which logs dst[0] + 1000. A
// pipeline's instances run at the same time, so each gets a destination
// and a reader of its own (lanes, bound by pipeline_setup).
struct ProbeGraph {
  static constexpr unsigned kLanes = 4;
  sgtest::Graph g;
  sg_node probe{}, copy{}, reader{};
  Probe tmpl;
  Log log;
  uint32_t src_a[4] = {1, 0, 0, 0}, src_b[4] = {2, 0, 0, 0}, src_c[4] = {3, 0, 0, 0};
  uint32_t dst[4] = {0, 0, 0, 0};
  Reader reader_data;
  uint32_t lane_dst[kLanes][4] = {};
  Reader lane_reader[kLanes];
  ProbeGraph() {
    tmpl.log = &log;
    sg_host_desc h = {probe_fn, &tmpl, "probe"};
    EXPECT_EQ(sg_graph_add_host(g, &h, nullptr, 0, &probe), SG_OK) << sg_last_error();
    sg_copy_desc c = {dst, src_a, sizeof dst, SG_COPY_AUTO, "copy"};
    EXPECT_EQ(sg_graph_add_copy(g, &c, &probe, 1, &copy), SG_OK) << sg_last_error();
    reader_data = Reader{dst, &log};
    for (unsigned i = 0; i < kLanes; i++) lane_reader[i] = Reader{lane_dst[i], &log};
    sg_host_desc r = {reader_fn, &reader_data, "reader"};
    EXPECT_EQ(sg_graph_add_host(g, &r, &copy, 1, &reader), SG_OK) << sg_last_error();
  }
};

class ExecQueue : public ::testing::TestWithParam<sg_exec_mode> {};

// Launches made while the first one is held keep their own parameters:
// sg_exec_set_* between them changes only the launches after it, without
// waiting for those in flight.
TEST_P(ExecQueue, QueuedLaunchesKeepTheirParameters) {
  sgtest::LeakCheck leaks;
  ProbeGraph pg;
  sg_exec_options o = sgtest::host_options();
  o.mode = GetParam();
  Gate hold;  // before the executable: it outlives the launch it holds
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(pg.g, &o, &e.e));
  Probe first{&hold, &pg.log, 1}, second{nullptr, &pg.log, 2}, third{nullptr, &pg.log, 3};
  sg_host_desc h = {probe_fn, &first, nullptr};
  SG_ASSERT_OK(sg_exec_set_host(e, pg.probe, &h));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  // None of these calls may wait for the held launch 1 (only this thread
  // could open its gate): if one does, the watchdog opens it and the test
  // fails instead of hanging.
  sgtest::Watchdog watchdog([&] { hold.release(); });
  sg_copy_desc c = {pg.dst, pg.src_b, sizeof pg.dst, SG_COPY_AUTO, nullptr};
  h.user_data = &second;
  SG_ASSERT_OK(sg_exec_set_host(e, pg.probe, &h));
  SG_ASSERT_OK(sg_exec_set_copy(e, pg.copy, &c));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  h.user_data = &third;
  c.src = pg.src_c;
  SG_ASSERT_OK(sg_exec_set_host(e, pg.probe, &h));
  SG_ASSERT_OK(sg_exec_set_copy(e, pg.copy, &c));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  watchdog.disarm();
  ASSERT_FALSE(watchdog.fired()) << "an update waited for the held launch";
  EXPECT_EQ(sg_exec_query_launch(e, 1), SG_NOT_READY);
  EXPECT_TRUE(pg.log.get().empty()) << "launch 1 is held: nothing may have run";
  hold.release();
  SG_ASSERT_OK(sg_exec_wait_launch(e, 3));
  EXPECT_EQ(pg.log.get(), (std::vector<int>{1, 1001, 2, 1002, 3, 1003}));
  SG_EXPECT_OK(sg_exec_query_launch(e, 1));
  SG_EXPECT_OK(sg_exec_wait(e));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st));
  EXPECT_EQ(st.launches, 3u);
}

// Launch 2 of 3 fails: launch 1 is fine, launch 2 reports the failure with
// its launch number and node, launch 3 (queued behind it) runs no host work
// and is reported as cut off; nothing hangs.
TEST_P(ExecQueue, FailureBelongsToItsLaunch) {
  sgtest::LeakCheck leaks;
  ProbeGraph pg;
  sg_exec_options o = sgtest::host_options();
  o.mode = GetParam();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(pg.g, &o, &e.e));
  Gate hold;
  Probe first{&hold, &pg.log, 1}, second{nullptr, &pg.log, 2}, third{nullptr, &pg.log, 3};
  second.fail = true;
  for (Probe *probe : {&first, &second, &third}) {
    sg_host_desc h = {probe_fn, probe, nullptr};
    SG_ASSERT_OK(sg_exec_set_host(e, pg.probe, &h));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  }
  EXPECT_EQ(sg_exec_wait_launch(e, 0), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_wait_launch(e, 4), SG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(sg_last_error(), "launch 4")) << sg_last_error();
  hold.release();
  SG_EXPECT_OK(sg_exec_wait_launch(e, 1));
  EXPECT_EQ(sg_exec_wait_launch(e, 2), SG_ERR_CALLBACK);
  std::string msg = sg_last_error();
  EXPECT_TRUE(contains(msg, "launch 2")) << msg;
  EXPECT_TRUE(contains(msg, "'probe'")) << msg;
  EXPECT_TRUE(contains(msg, "returned 9")) << msg;
  EXPECT_EQ(sg_exec_wait_launch(e, 3), SG_ERR_EXEC_FAILED);
  msg = sg_last_error();
  EXPECT_TRUE(contains(msg, "launch 3")) << msg;
  EXPECT_TRUE(contains(msg, "launch 2")) << msg;
  EXPECT_EQ(sg_exec_query_launch(e, 2), SG_ERR_CALLBACK);
  SG_EXPECT_OK(sg_exec_query_launch(e, 1));
  EXPECT_EQ(sg_exec_wait(e), SG_ERR_CALLBACK);
  // Launch 2's probe ran and failed; its reader and all of launch 3 did not.
  EXPECT_EQ(pg.log.get(), (std::vector<int>{1, 1001, 2}));
  EXPECT_EQ(sg_exec_launch(e, nullptr), SG_ERR_EXEC_FAILED);
}

INSTANTIATE_TEST_SUITE_P(Modes, ExecQueue, ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &info) {
                           return std::string(info.param == SG_MODE_GRAPH ? "graph" : "streams");
                         });

// A launch of a deep queue: its completion is still waited for exactly
// (the oldest launches fall out of the tracked window; they end in order).
TEST(ExecQueueWindow, LaunchesBeyondTheTrackedWindow) {
  sgtest::LeakCheck leaks;
  ProbeGraph pg;
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(pg.g, &o, &e.e));
  const unsigned count = 3 * SG_EXEC_TRACKED_LAUNCHES;
  std::vector<Probe> probes(count);
  Gate hold;
  for (unsigned i = 0; i < count; i++) {
    probes[i] = Probe{i == 0 ? &hold : nullptr, &pg.log, static_cast<int>(i)};
    sg_host_desc h = {probe_fn, &probes[i], nullptr};
    SG_ASSERT_OK(sg_exec_set_host(e, pg.probe, &h));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  }
  EXPECT_EQ(sg_exec_query_launch(e, 1), SG_NOT_READY);
  hold.release();
  SG_EXPECT_OK(sg_exec_wait_launch(e, 2)); // outside the window: waits at most for a later one
  std::vector<int> seen = pg.log.get();
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[2], 1);
  SG_EXPECT_OK(sg_exec_wait_launch(e, count));
  EXPECT_EQ(pg.log.get().size(), 2u * count);
}

// ---- pipelines --------------------------------------------------------------

struct Reports {
  ProbeGraph *graph = nullptr; // whose lanes the instances use
  std::vector<uint64_t> order;
  std::vector<sg_status> status;
  std::vector<std::string> messages;
};

void on_complete(uint64_t batch, sg_status st, void *, void *user) {
  auto *r = static_cast<Reports *>(user);
  r->order.push_back(batch);
  r->status.push_back(st);
  r->messages.push_back(st ? sg_last_error() : "");
}

// Instance i copies into lane i and its reader reads that lane.
int pipeline_setup(sg_pipeline_instance *inst, void *user) {
  ProbeGraph *pg = static_cast<Reports *>(user)->graph;
  if (inst->index >= ProbeGraph::kLanes) return 1;
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(pg->copy, pg->lane_dst[inst->index]),
      sg_bind_host_data(pg->reader, &pg->lane_reader[inst->index]),
  };
  return sg_pipeline_instance_bind(inst, binds, 2) == SG_OK ? 0 : 2;
}

sg_pipeline_options probe_options(ProbeGraph &pg, unsigned depth, unsigned queue,
                                  Reports *reports) {
  reports->graph = &pg;
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.queue = queue;
  o.exec.backend = SG_BACKEND_HOST;
  o.on_complete = on_complete;
  o.setup = pipeline_setup;
  o.user_data = reports;
  return o;
}

sg_status submit_probe(sg_pipeline *p, sg_node node, Probe *probe, bool blocking) {
  sg_pipeline_bind b = sg_bind_host_data(node, probe);
  sg_pipeline_batch batch = {&b, 1, nullptr};
  return blocking ? sg_pipeline_submit(p, &batch, nullptr)
                  : sg_pipeline_try_submit(p, &batch, nullptr);
}

// Depth 1, queue 2: batch 1 is accepted (and bound) while batch 0 is held,
// without blocking; batch 2 needs batch 0's place and is refused; batch 0
// runs with its own data although batch 1's was bound before it ran.
TEST(PipelineQueue, SecondBatchIsQueuedWithoutWaiting) {
  sgtest::LeakCheck leaks;
  ProbeGraph pg;
  Reports reports;
  sg_pipeline_options o = probe_options(pg, 1, 2, &reports);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(pg.g, &o, &p));
  Gate hold;
  Probe b0{&hold, &pg.log, 10}, b1{nullptr, &pg.log, 11}, b2{nullptr, &pg.log, 12};
  SG_ASSERT_OK(submit_probe(p, pg.probe, &b0, false));
  SG_ASSERT_OK(submit_probe(p, pg.probe, &b1, false)); // queued behind batch 0
  EXPECT_EQ(submit_probe(p, pg.probe, &b2, false), SG_ERR_WOULD_BLOCK);
  std::string msg = sg_last_error();
  EXPECT_TRUE(contains(msg, "batch 0")) << msg;
  EXPECT_TRUE(contains(msg, "batch 2")) << msg;
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.submitted, 2u);
  EXPECT_EQ(s.queue, 2u);
  EXPECT_TRUE(reports.order.empty());
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    hold.release();
  });
  SG_EXPECT_OK(submit_probe(p, pg.probe, &b2, true)); // waits for batch 0 only
  opener.join();
  ASSERT_GE(reports.order.size(), 1u);
  EXPECT_EQ(reports.order[0], 0u);
  SG_ASSERT_OK(sg_pipeline_drain(p));
  EXPECT_EQ(reports.order, (std::vector<uint64_t>{0, 1, 2}));
  std::vector<int> seen = pg.log.get();
  std::vector<int> probes;
  for (int v : seen)
    if (v < 1000) probes.push_back(v);
  EXPECT_EQ(probes, (std::vector<int>{10, 11, 12})) << "each batch ran with its own data";
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// A bind callback may touch what earlier batches use: with one, batches
// wait for their instance to be idle (no queue-ahead), as documented.
TEST(PipelineQueue, BindCallbackRunsWithTheInstanceIdle) {
  sgtest::LeakCheck leaks;
  ProbeGraph pg;
  Reports reports;
  sg_pipeline_options o = probe_options(pg, 1, 2, &reports);
  o.bind = [](sg_pipeline_instance *, uint64_t, void *, void *) { return 0; };
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(pg.g, &o, &p));
  Gate hold;
  Probe b0{&hold, &pg.log, 10}, b1{nullptr, &pg.log, 11};
  SG_ASSERT_OK(submit_probe(p, pg.probe, &b0, false));
  EXPECT_EQ(submit_probe(p, pg.probe, &b1, false), SG_ERR_WOULD_BLOCK);
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.queue, 1u) << "the queue in effect, not the option (2)";
  hold.release();
  SG_EXPECT_OK(submit_probe(p, pg.probe, &b1, true));
  SG_ASSERT_OK(sg_pipeline_drain(p));
  EXPECT_EQ(reports.order, (std::vector<uint64_t>{0, 1}));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// A batch fails while the batches behind it are queued on its instance and
// on the others: it is reported with its batch, instance, launch and node;
// every later batch is waited for and reported stopped; submits after that
// are refused; nothing hangs or leaks. Every depth x queue x failing batch.
using FailParam = std::tuple<unsigned, unsigned, unsigned>;
class PipelineQueueFailure : public ::testing::TestWithParam<FailParam> {};

TEST_P(PipelineQueueFailure, QueuedBatchesBehindAFailureAreStopped) {
  sgtest::LeakCheck leaks;
  auto [depth, queue, k] = GetParam();
  ProbeGraph pg;
  Reports reports;
  sg_pipeline_options o = probe_options(pg, depth, queue, &reports);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(pg.g, &o, &p));
  const unsigned count = 12;
  Gate hold; // holds batch 0 until every place is taken, so the failure meets a full queue
  std::vector<Probe> probes(count);
  for (unsigned i = 0; i < count; i++)
    probes[i] = Probe{i == 0 ? &hold : nullptr, &pg.log, static_cast<int>(i), i == k};
  unsigned accepted = 0;
  for (unsigned i = 0; i < count; i++) {
    if (i == depth * queue) hold.release();
    sg_status st = submit_probe(p, pg.probe, &probes[i], true);
    if (st == SG_ERR_STOPPED) {
      EXPECT_TRUE(contains(sg_last_error(), "batch " + std::to_string(k))) << sg_last_error();
      break;
    }
    ASSERT_EQ(st, SG_OK) << sg_last_error();
    accepted++;
  }
  hold.release();
  EXPECT_GE(accepted, k + 1);
  EXPECT_LE(accepted, std::min(count, k + depth * queue));
  EXPECT_EQ(sg_pipeline_drain(p), SG_ERR_STOPPED);
  ASSERT_EQ(reports.order.size(), accepted);
  for (unsigned i = 0; i < accepted; i++) {
    EXPECT_EQ(reports.order[i], i);
    if (i < k) {
      EXPECT_EQ(reports.status[i], SG_OK) << reports.messages[i];
    } else if (i == k) {
      EXPECT_EQ(reports.status[i], SG_ERR_CALLBACK);
      const std::string &m = reports.messages[i];
      EXPECT_TRUE(contains(m, "batch " + std::to_string(k))) << m;
      EXPECT_TRUE(contains(m, "instance " + std::to_string(k % depth))) << m;
      EXPECT_TRUE(contains(m, "launch " + std::to_string(k / depth + 1))) << m;
      EXPECT_TRUE(contains(m, "'probe'")) << m;
    } else {
      EXPECT_EQ(reports.status[i], SG_ERR_STOPPED) << "batch " << i;
    }
  }
  // Batches before k ran whole; on k's instance nothing after it ran.
  std::vector<int> seen = pg.log.get();
  for (unsigned i = 0; i < k; i++)
    EXPECT_NE(std::find(seen.begin(), seen.end(), static_cast<int>(i)), seen.end()) << i;
  for (unsigned i = k + depth; i < accepted; i += depth)
    EXPECT_EQ(std::find(seen.begin(), seen.end(), static_cast<int>(i)), seen.end())
        << "batch " << i << " ran on the failed instance";
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.failed_batch, k);
  EXPECT_EQ(s.reported, accepted);
  EXPECT_EQ(submit_probe(p, pg.probe, &probes[0], false), SG_ERR_STOPPED);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

INSTANTIATE_TEST_SUITE_P(
    DepthsQueuesPlaces, PipelineQueueFailure,
    ::testing::Combine(::testing::Values(1u, 2u, 3u), ::testing::Values(2u, 3u, 8u),
                       ::testing::Values(0u, 1u, 4u)),
    [](const ::testing::TestParamInfo<FailParam> &info) {
      return "depth" + std::to_string(std::get<0>(info.param)) + "_queue" +
             std::to_string(std::get<1>(info.param)) + "_fail" +
             std::to_string(std::get<2>(info.param));
    });

// The chain (upload, kernel twin, check, download) through pinned staging
// (pageable buffers, STAGE policy), batches queued two deep per instance
// while their binds change the instance: every output equals the
// reference, in both modes.
using StagedParam = std::tuple<sg_exec_mode, unsigned>;
class PipelineQueueStaged : public ::testing::TestWithParam<StagedParam> {};

TEST_P(PipelineQueueStaged, OutputsThroughStagingEqualReference) {
  auto [mode, queue] = GetParam();
  const size_t n = 3000;
  const unsigned count = 24, depth = 2;
  pipetest::Chain chain(SG_BACKEND_HOST, n, true);
  pipetest::Batches set(chain, count, [](unsigned i) { return i % 3 == 0; });
  pipetest::Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &set.list;
  sg_pipeline_options o = pipetest::chain_options(&ctx, depth, mode);
  o.queue = queue;
  o.exec.staging.policy = SG_STAGING_STAGE;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  for (unsigned i = 0; i < count; i++) {
    sg_pipeline_batch b = set.list[i]->desc(set.list[i]);
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  ASSERT_EQ(ctx.rec.order.size(), count);
  for (unsigned i = 0; i < count; i++) {
    EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
    EXPECT_EQ(ctx.rec.output_errors[i], "") << "batch " << i;
  }
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

INSTANTIATE_TEST_SUITE_P(ModesQueues, PipelineQueueStaged,
                         ::testing::Combine(::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                                            ::testing::Values(1u, 2u, 4u)),
                         [](const ::testing::TestParamInfo<StagedParam> &info) {
                           return std::string(std::get<0>(info.param) == SG_MODE_GRAPH
                                                  ? "graph"
                                                  : "streams") +
                                  "_queue" + std::to_string(std::get<1>(info.param));
                         });

// Parameters replaced while launches are queued are freed once no launch
// can use them: a long run of rebinding batches holds no more memory at its
// end than after its first batches.
TEST(PipelineQueue, ReplacedParametersAreFreedAsLaunchesEnd) {
  sgtest::LeakCheck leaks;
  ProbeGraph pg;
  Reports reports;
  sg_pipeline_options o = probe_options(pg, 2, 3, &reports);
  o.on_complete = nullptr;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(pg.g, &o, &p));
  std::vector<Probe> probes(600);
  long early = 0;
  for (unsigned i = 0; i < probes.size(); i++) {
    probes[i] = Probe{nullptr, &pg.log, static_cast<int>(i)};
    SG_ASSERT_OK(submit_probe(p, pg.probe, &probes[i], true));
    if (i == 50) early = sg_live_allocations();
  }
  long late = sg_live_allocations();
  EXPECT_LE(late, early + 16) << "replaced parameters pile up while launches are queued";
  SG_ASSERT_OK(sg_pipeline_drain(p));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

}  // namespace
