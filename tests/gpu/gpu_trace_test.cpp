// Traces on the GPU, in every CUDA mode (streams; graph built explicitly or
// by capture: a traced graph with stamp kernel nodes, or event-record nodes
// as the fallback): every node of every
// launch, launches queued ahead of the event ring, times that respect the
// graph's order, results still right, GPU launches placed on the host's
// clock, in-place updates and rebuilds, staging copy threads, and a
// pipeline's batches on one timeline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_util.h"
#include "svg_check.h"
#include "trace_check.h"

extern "C" int sg__cuda_trace_stamped(const sg_exec *exec);

namespace {

using gputest::DevMem;
using gputest::ModeTest;
using gputest::PinnedMem;
using sgtest::TracedGraph;

constexpr size_t kN = 1u << 20;  // elements of the work buffer (4 MiB)
constexpr uint32_t kRounds = 24;

int busy(void *ns) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::nanoseconds(*static_cast<const uint64_t *>(ns));
  while (std::chrono::steady_clock::now() < until) {
  }
  return 0;
}

// The slack allowed between a node's start and a predecessor's end. Events
// on different streams may read a little apart; stamps are turned into
// times by a rule that orders every edge exactly (exec/trace_stamps.h), so a
// stamped trace gets none.
uint64_t edge_slack(const sg_exec *e, uint64_t events_slack) {
  return sg__cuda_trace_stamped(e) ? 0 : events_slack;
}

uint64_t host_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// upload -> 4 kernels on quarters -> host check (also after a memset) ->
// download -> an empty join: every node kind a graph-mode trace must time.
struct Workload {
  PinnedMem in{kN * 4}, out{kN * 4};
  DevMem dev{kN * 4}, scratch{1u << 20};
  uint64_t busy_ns = 50000;
  TracedGraph t;
  sg_kernel_call calls[4];

  void build(sg_graph *g) {
    auto add = [&](sg_node n, std::vector<uint32_t> deps, bool timed) {
      for (uint32_t d : deps) t.edges.emplace_back(d, uint32_t(t.nodes.size()));
      t.nodes.push_back(n);
      t.timed.push_back(timed);
    };
    auto deps_of = [&](std::vector<uint32_t> idx) {
      std::vector<sg_node> d;
      for (uint32_t i : idx) d.push_back(t.nodes[i]);
      return d;
    };
    sg_node n;
    sg_copy_desc up = {dev.p, in.p, kN * 4, SG_COPY_HOST_TO_DEVICE, "upload"};
    ASSERT_EQ(sg_graph_add_copy(g, &up, nullptr, 0, &n), SG_OK) << sg_last_error();
    add(n, {}, true);
    for (int q = 0; q < 4; q++) {
      sg_kernels_work_u32(&calls[q], dev.u32() + q * (kN / 4), kN / 4, kRounds);
      calls[q].desc.name = q == 0 ? "work 0" : q == 1 ? "work 1" : q == 2 ? "work 2" : "work 3";
      std::vector<sg_node> d = deps_of({0});
      ASSERT_EQ(sg_graph_add_kernel(g, &calls[q].desc, d.data(), d.size(), &n), SG_OK)
          << sg_last_error();
      add(n, {0}, true);
    }
    sg_memset_desc ms = {scratch.p, 0x5a, 1, 1u << 20, "clear"};
    ASSERT_EQ(sg_graph_add_memset(g, &ms, nullptr, 0, &n), SG_OK) << sg_last_error();
    add(n, {}, true);
    sg_host_desc h = {busy, &busy_ns, "check"};
    std::vector<sg_node> d = deps_of({1, 2, 3, 4, 5});
    ASSERT_EQ(sg_graph_add_host(g, &h, d.data(), d.size(), &n), SG_OK) << sg_last_error();
    add(n, {1, 2, 3, 4, 5}, true);
    sg_copy_desc down = {out.p, dev.p, kN * 4, SG_COPY_DEVICE_TO_HOST, "download"};
    d = deps_of({6});
    ASSERT_EQ(sg_graph_add_copy(g, &down, d.data(), d.size(), &n), SG_OK) << sg_last_error();
    add(n, {6}, true);
    d = deps_of({7});
    ASSERT_EQ(sg_graph_add_empty(g, "join", d.data(), d.size(), &n), SG_OK) << sg_last_error();
    add(n, {7}, false);
  }

  // Fresh random input; the output poisoned.
  std::vector<uint32_t> prepare(uint32_t seed) {
    std::vector<uint32_t> v = gputest::random_u32(seed, kN);
    std::memcpy(in.p, v.data(), kN * 4);
    std::memset(out.p, 0xA5, kN * 4);
    for (size_t i = 0; i < kN; i++) v[i] = gputest::work_ref(v[i], i % (kN / 4), kRounds);
    return v;
  }
};

class GpuTrace : public ModeTest {};

INSTANTIATE_TEST_SUITE_P(Modes, GpuTrace, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

// More launches queued at once than the ring of event sets holds: each one
// still gets its own times.
TEST_P(GpuTrace, EveryLaunchQueuedAheadIsTimed) {
  const uint32_t seed = 20261130u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Workload w;
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "traced"));
  w.build(g);
  std::vector<uint32_t> want = w.prepare(seed);
  sg_exec_options o = options();
  o.trace = 1;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  const int launches = 12;
  const uint64_t before = host_now_ns();
  for (int i = 0; i < launches; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  const uint64_t after = host_now_ns();
  std::vector<uint32_t> got(kN);
  std::memcpy(got.data(), w.out.p, kN * 4);
  EXPECT_EQ(got, want) << "tracing changed the results";

  uint64_t previous_end = 0;
  for (uint64_t l = 1; l <= launches; l++) {
    std::vector<sg_trace_record> rec = sgtest::records_of(e, l, w.t.nodes.size());
    sgtest::check_launch(plan, w.t, l, rec, edge_slack(e, sgtest::kClockSlackNs),
                         "launch " + std::to_string(l), sg__cuda_trace_stamped(e));
    if (rec.empty()) continue;
    uint64_t first = UINT64_MAX, last = 0;
    for (auto &r : rec) {
      first = std::min(first, r.launch_start_ns + r.start_ns);
      last = std::max(last, r.launch_start_ns + r.end_ns);
    }
    // On the host's clock: within the launches' wall time (a wide margin:
    // this checks the anchoring, not its precision).
    EXPECT_GE(first + 2000000, before) << "launch " << l;
    EXPECT_LE(last, after + 2000000) << "launch " << l;
    // Launches of one executable run one after the other.
    EXPECT_GE(first + sgtest::kClockSlackNs, previous_end) << "launch " << l;
    previous_end = last;
  }

  std::string path = ::testing::TempDir() + "gpu_trace_" + GetParam().name + ".json";
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  sgtest::TraceFile f;
  std::string why;
  ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
  std::remove(path.c_str());
  EXPECT_EQ(f.nodes.size(), launches * w.t.nodes.size());
  EXPECT_EQ(f.launches.size(), size_t(launches));
  EXPECT_EQ(f.names.count("'traced'"), 1u);

  // The SVG timeline shows the same runs: one bar per node run on its
  // stream's lane with the record's exact times, copies again on their
  // direction's lane, one launch bar per launch.
  std::string svg_path = ::testing::TempDir() + "gpu_trace_" + GetParam().name + ".svg";
  SG_ASSERT_OK(sg_exec_write_trace_svg(e, svg_path.c_str()));
  sgtest::XmlDoc doc;
  ASSERT_TRUE(sgtest::parse_xml(sgtest::read_file(svg_path), &doc, &why)) << why;
  std::remove(svg_path.c_str());
  std::map<std::tuple<std::string, uint64_t, uint64_t>, const sgtest::XmlElement *> bars;
  size_t launch_bars = 0;
  for (const sgtest::XmlElement *r : doc.all("rect", "span")) {
    if (r->is("launch")) launch_bars++;
    if (!r->has("data-node") || !r->has("data-launch")) continue;
    bars[{doc.parent_of(*r)->attr("data-name"), r->num("data-node"), r->num("data-launch")}] = r;
  }
  EXPECT_EQ(launch_bars, size_t(launches));
  for (uint64_t l = 1; l <= launches; l++)
    for (const sg_trace_record &r : sgtest::records_of(e, l, w.t.nodes.size())) {
      uint32_t n = sg_node_index(r.node);
      auto it = bars.find({"stream " + std::to_string(r.stream), n, l});
      ASSERT_NE(it, bars.end()) << "no bar for node " << n << " of launch " << l;
      EXPECT_EQ(it->second->num("data-start-ns"), r.launch_start_ns + r.start_ns);
      EXPECT_EQ(it->second->num("data-end-ns"), r.launch_start_ns + std::max(r.end_ns, r.start_ns));
    }
  for (uint64_t l = 1; l <= launches; l++) {
    EXPECT_EQ(bars.count({"copies host to device", 0, l}), 1u) << "launch " << l;
    EXPECT_EQ(bars.count({"copies device to host", 7, l}), 1u) << "launch " << l;
  }
}

// Kernels that spin a known time, in a diamond, timed by each way the mode
// has (graph mode: stamps, and events as where the stamp kernel cannot
// load, SG_TRACE_GRAPH_EVENTS=1): every kernel's duration is its spin within
// a few microseconds (the root of streams mode's first launch: at least its
// spin), every node starts after its predecessors end (exactly with stamps;
// within the events' resolution and the timer's granularity, printed,
// otherwise), and the results are bitwise those of an untraced executable.
TEST_P(GpuTrace, SpinsOfKnownLengthAreTimed) {
  const uint32_t seed = uint32_t(host_now_ns());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("[ seed %u ]\n", seed);
  DevMem step(8);
  ASSERT_EQ(gt_launch_timer_granularity(static_cast<uint64_t *>(step.p), nullptr), cudaSuccess);
  uint64_t gran = 0;
  ASSERT_EQ(cudaMemcpy(&gran, step.p, 8, cudaMemcpyDefault), cudaSuccess);
  std::printf("[ %%globaltimer granularity: %llu ns ]\n", (unsigned long long)gran);

  // a -> {b, c} -> d -> e (e adds to every segment: its result depends on
  // the fills before it).
  const size_t seg = 1u << 16;
  const uint64_t spin[4] = {50000, 30000, 50000, 20000};
  std::mt19937 rng(seed);
  uint32_t value[4], add = rng();
  for (uint32_t &v : value) v = rng();
  DevMem buf(4 * seg * 4);
  sgtest::Graph g;
  std::vector<gputest::KernelCall *> calls;
  TracedGraph t;
  const char *names[4] = {"spin a", "spin b", "spin c", "spin d"};
  const std::vector<std::vector<uint32_t>> deps = {{}, {0}, {0}, {1, 2}};
  for (int k = 0; k < 4; k++) {
    auto *c = new gputest::KernelCall(gt_kernel_slow_fill(), 64, 256, 0, names[k]);
    c->arg(buf.u32() + k * seg).arg(value[k]).arg(seg).arg(spin[k]);
    calls.push_back(c);
    std::vector<sg_node> d;
    for (uint32_t i : deps[k]) {
      d.push_back(t.nodes[i]);
      t.edges.emplace_back(i, uint32_t(k));
    }
    sg_node n;
    ASSERT_EQ(sg_graph_add_kernel(g, &c->desc, d.data(), d.size(), &n), SG_OK) << sg_last_error();
    t.nodes.push_back(n);
    t.timed.push_back(true);
  }
  gputest::AddCall e_call(buf.u32(), add, 4 * seg, "add");
  sg_node n;
  ASSERT_EQ(sg_graph_add_kernel(g, &e_call.desc, &t.nodes[3], 1, &n), SG_OK) << sg_last_error();
  t.edges.emplace_back(3u, 4u);
  t.nodes.push_back(n);
  t.timed.push_back(false); /* a short kernel: may read 0 at a coarse granularity */

  std::vector<uint32_t> want(4 * seg);
  for (int k = 0; k < 4; k++)
    for (size_t i = 0; i < seg; i++) want[k * seg + i] = value[k] + add;
  std::vector<uint32_t> untraced;
  {
    sg_exec_options o = options();
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    gputest::poison(buf.p, 4 * seg * 4);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    untraced = gputest::read_u32(buf.p, 4 * seg);
    EXPECT_EQ(untraced, want);
  }
  for (const char *events : {"0", "1"}) {
    SCOPED_TRACE(std::string("SG_TRACE_GRAPH_EVENTS=") + events);
    setenv("SG_TRACE_GRAPH_EVENTS", events, 1);
    sg_exec_options o = options();
    o.trace = 1;
    sgtest::Exec e;
    sg_status created = sg_exec_create(g, &o, &e.e);
    unsetenv("SG_TRACE_GRAPH_EVENTS");
    SG_ASSERT_OK(created);
    /* Graph mode on this GPU loads the stamp kernel (the fallback is for
     * runtimes and drivers that cannot). */
    EXPECT_EQ(sg__cuda_trace_stamped(e), graph_mode() && events[0] == '0' ? 1 : 0);
    const sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
    gputest::poison(buf.p, 4 * seg * 4);
    const int launches = 10; /* more than the ring holds */
    for (int l = 0; l < launches; l++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(gputest::read_u32(buf.p, 4 * seg), untraced) << "tracing changed the results";
    /* Stamps: a node's duration also holds its stamp's launch (and a
     * root's the start stamp's run and its own launch), and a start read
     * from a predecessor's stamp may come a little after the node began
     * (both were ready at once); events in a graph cost more. */
    const bool stamped = graph_mode() && events[0] == '0';
    const uint64_t over = (stamped ? 6000 : 10000) + gran;
    const uint64_t under = (stamped ? 1500 : 500) + gran;
    double worst = 0;
    /* The shortest duration of each node over the launches: the upper
     * bound is held against it. Other programs on the GPU (ctest -j) take
     * SMs from a launch now and then and lengthen what it times, but not
     * every launch's: a trace that times a node too long every time still
     * fails. Nothing makes a node shorter, so the lower bound holds for
     * every launch. */
    uint64_t shortest[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    for (uint64_t l = 1; l <= uint64_t(launches); l++) {
      std::vector<sg_trace_record> rec = sgtest::records_of(e, l, t.nodes.size());
      sgtest::check_launch(plan, t, l, rec, edge_slack(e, 500 + gran),
                           "launch " + std::to_string(l));
      for (const sg_trace_record &r : rec) {
        uint32_t i = sg_node_index(r.node);
        if (i >= 4) continue;
        const uint64_t d = r.end_ns - r.start_ns;
        EXPECT_GE(d + under, spin[i]) << "launch " << l << " node " << i;
        /* Streams mode records a root's "before" event on an idle stream
         * on the first launch: it completes at once, while the host is
         * still submitting the kernel after it, so that start can come
         * early by the submission's time (later launches queue behind the
         * one before). Only the lower bound holds for it. */
        if (!graph_mode() && l == 1 && deps[i].empty()) continue;
        shortest[i] = std::min(shortest[i], d);
        worst = std::max(worst, std::fabs(double(d) - double(spin[i])));
      }
    }
    for (int i = 0; i < 4; i++)
      EXPECT_LE(shortest[i], spin[i] + over) << "node " << i << ", its shortest launch";
    std::printf("[ %s, %s: worst |duration - spin| %.2f us ]\n", GetParam().name,
                events[0] == '1' ? "events" : "stamps where graph mode", worst / 1000);
  }
  for (auto *c : calls) delete c;
}

// Parameter updates (in place in graph mode) and a rebuild for a new
// topology keep every launch timed, and the results right.
TEST_P(GpuTrace, UpdatesKeepTracing) {
  const uint32_t seed = 7u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Workload w;
  sgtest::Graph g;
  w.build(g);
  sg_exec_options o = options();
  o.trace = 1;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  const uint64_t slack = edge_slack(e, sgtest::kClockSlackNs);
  std::vector<uint32_t> want = w.prepare(seed);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  // Work on the quarters with one more round each: in place in graph mode.
  for (int q = 0; q < 4; q++) {
    sg_kernels_work_u32(&w.calls[q], w.dev.u32() + q * (kN / 4), kN / 4, kRounds + 1);
    SG_ASSERT_OK(sg_exec_set_kernel(e, w.t.nodes[1 + q], &w.calls[q].desc));
  }
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::vector<uint32_t> in(kN), got(kN);
  std::memcpy(in.data(), w.in.p, kN * 4);
  std::memcpy(got.data(), w.out.p, kN * 4);
  for (size_t i = 0; i < kN; i++) want[i] = gputest::work_ref(in[i], i % (kN / 4), kRounds + 1);
  EXPECT_EQ(got, want);
  for (uint64_t l = 1; l <= 2; l++)
    sgtest::check_launch(plan, w.t, l, sgtest::records_of(e, l, w.t.nodes.size()), slack,
                         "launch " + std::to_string(l), sg__cuda_trace_stamped(e));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st));
  if (graph_mode()) EXPECT_EQ(st.in_place_updates, 4u);

  // A new node: the executable is rebuilt and traced from there.
  uint64_t more = 20000;
  sg_host_desc h = {busy, &more, "after"};
  sg_node after;
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &w.t.nodes.back(), 1, &after));
  SG_ASSERT_OK(sg_exec_update(e, g));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  TracedGraph t2 = w.t;
  t2.edges.emplace_back(uint32_t(t2.nodes.size() - 1), uint32_t(t2.nodes.size()));
  t2.nodes.push_back(after);
  t2.timed.push_back(true);
  /* The join before the new host node is empty: in a captured graph its
   * stamp can run before the download's (exec/trace_stamps.h). The rebuilt
   * graph is stamped as well, so its edges are held to zero slack. */
  if (graph_mode()) EXPECT_EQ(sg__cuda_trace_stamped(e), 1) << "the rebuilt graph";
  sgtest::check_launch(plan, t2, 3, sgtest::records_of(e, 3, t2.nodes.size()),
                       edge_slack(e, sgtest::kClockSlackNs), "launch 3, after the rebuild",
                       sg__cuda_trace_stamped(e));
}

// Sampled tracing (trace_every 4): launches 1, 5, 9... are timed and kept,
// the others run untraced (graph mode: the plain graph instantiated beside
// the traced one) and have no records; more traced launches are queued at
// once than the ring of sets holds. The results, after an untraced launch
// and after a traced one, and after an in-place update (which graph mode
// applies to both graphs), are bitwise an untraced executable's and the
// CPU reference's.
TEST_P(GpuTrace, SampledLaunchesAloneAreTimed) {
  const uint32_t seed = uint32_t(host_now_ns());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("[ seed %u ]\n", seed);
  const unsigned every = 4;
  Workload w;
  sgtest::Graph g;
  w.build(g);
  std::vector<uint32_t> want = w.prepare(seed);

  // The untraced executable's results.
  sg_exec_options plain_options = options();
  std::vector<uint32_t> untraced(kN);
  {
    sgtest::Exec plain;
    SG_ASSERT_OK(sg_exec_create(g, &plain_options, &plain.e));
    SG_ASSERT_OK(sg_exec_launch(plain, nullptr));
    SG_ASSERT_OK(sg_exec_wait(plain));
    std::memcpy(untraced.data(), w.out.p, kN * 4);
  }
  EXPECT_EQ(untraced, want) << "the untraced executable";

  sg_exec_options o = options();
  o.trace = 1;
  o.trace_every = every;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  const uint64_t slack = edge_slack(e, sgtest::kClockSlackNs);
  auto traced = [&](uint64_t l) { return (l - 1) % every == 0; };
  std::vector<uint32_t> got(kN);
  // 41 launches queued at once (11 traced, beyond the ring of 8 sets),
  // ending on a traced one; then one untraced.
  std::memset(w.out.p, 0xA5, kN * 4);
  for (int i = 0; i < 41; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::memcpy(got.data(), w.out.p, kN * 4);
  EXPECT_EQ(got, untraced) << "after traced launch 41";
  std::memset(w.out.p, 0xA5, kN * 4);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::memcpy(got.data(), w.out.p, kN * 4);
  EXPECT_EQ(got, untraced) << "after untraced launch 42";

  // One more round per quarter (in place in graph mode), then launches 43
  // to 46: 45 traced, 46 (the last) not.
  for (int q = 0; q < 4; q++) {
    sg_kernels_work_u32(&w.calls[q], w.dev.u32() + q * (kN / 4), kN / 4, kRounds + 1);
    SG_ASSERT_OK(sg_exec_set_kernel(e, w.t.nodes[1 + q], &w.calls[q].desc));
  }
  std::memset(w.out.p, 0xA5, kN * 4);
  for (int i = 0; i < 4; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  std::vector<uint32_t> in(kN);
  std::memcpy(in.data(), w.in.p, kN * 4);
  std::memcpy(got.data(), w.out.p, kN * 4);
  for (size_t i = 0; i < kN; i++) want[i] = gputest::work_ref(in[i], i % (kN / 4), kRounds + 1);
  EXPECT_EQ(got, want) << "after the update, untraced launch 46";
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st));
  EXPECT_EQ(st.launches, 46u);
  if (graph_mode()) EXPECT_EQ(st.in_place_updates, 4u) << "both graphs took the update in place";
  if (graph_mode()) EXPECT_EQ(st.rebuilds, 0u);

  std::set<double> want_kept;
  for (uint64_t l = 1; l <= 46; l++) {
    if (traced(l)) {
      want_kept.insert(double(l));
      sgtest::check_launch(plan, w.t, l, sgtest::records_of(e, l, w.t.nodes.size()), slack,
                           "launch " + std::to_string(l), sg__cuda_trace_stamped(e));
      continue;
    }
    std::vector<sg_trace_record> rec(w.t.nodes.size());
    size_t count = 0;
    EXPECT_EQ(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count),
              SG_ERR_INVALID_ARGUMENT)
        << "launch " << l;
    EXPECT_NE(std::string(sg_last_error()).find("not sampled"), std::string::npos)
        << sg_last_error();
  }
  std::vector<sg_trace_record> latest = sgtest::records_of(e, 0, w.t.nodes.size());
  ASSERT_FALSE(latest.empty());
  EXPECT_EQ(latest[0].launch, 45u);

  std::string path = ::testing::TempDir() + "gpu_trace_sampled_" + GetParam().name + ".json";
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  sgtest::TraceFile f;
  std::string why;
  ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
  std::remove(path.c_str());
  std::set<double> kept;
  for (const sgtest::Json *l : f.launches) kept.insert((*l)["args"]["launch"].num);
  EXPECT_EQ(kept, want_kept);
  EXPECT_EQ(f.nodes.size(), want_kept.size() * w.t.nodes.size());
}

// Streams mode with pageable memory staged: the copy threads' spans are on
// their own rows and cover the copy.
TEST(GpuTraceStaging, CopyThreadsAreTraced) {
  SG_SKIP_WITHOUT_GPU();
  const size_t bytes = 16u << 20;
  std::vector<uint8_t> host(bytes), back(bytes, 0xA5);
  for (size_t i = 0; i < bytes; i++) host[i] = uint8_t(i * 31 + 7);
  DevMem dev(bytes);
  sgtest::Graph g;
  sg_copy_desc up = {dev.p, host.data(), bytes, SG_COPY_HOST_TO_DEVICE, "up"};
  sg_copy_desc down = {back.data(), dev.p, bytes, SG_COPY_DEVICE_TO_HOST, "down"};
  sg_node u;
  SG_ASSERT_OK(sg_graph_add_copy(g, &up, nullptr, 0, &u));
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &u, 1, nullptr));
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
    SCOPED_TRACE(mode == SG_MODE_GRAPH ? "graph mode" : "streams mode");
    sg_exec_options o = gputest::cuda_options({"x", mode, SG_BUILD_EXPLICIT});
    o.staging.policy = SG_STAGING_STAGE;
    o.staging.chunk_bytes = 2u << 20;
    o.trace = 1;
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(back, host);
    std::string path = ::testing::TempDir() + "gpu_trace_staging.json";
    SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
    sgtest::TraceFile f;
    std::string why;
    ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
    std::remove(path.c_str());
    EXPECT_EQ(f.nodes.size(), 4u);
    uint64_t filled = 0, drained = 0;
    for (const sgtest::Json *s : f.spans) {
      const std::string &name = (*s)["name"].str;
      if (name.rfind("fill up chunk ", 0) == 0)
        filled += uint64_t((*s)["args"]["bytes"].num);
      else if (name.rfind("drain down chunk ", 0) == 0)
        drained += uint64_t((*s)["args"]["bytes"].num);
      else
        ADD_FAILURE() << "unexpected span " << name;
    }
    EXPECT_EQ(filled, 2 * bytes) << "two launches, every byte filled once each";
    EXPECT_EQ(drained, 2 * bytes);
    // How far the host rows sit from the GPU rows (for the report; not a
    // threshold): the first fill against the upload's start.
    double up_ts = 1e300, fill_ts = 1e300;
    for (const sgtest::Json *n : f.nodes)
      if ((*n)["name"].str == "up") up_ts = std::min(up_ts, (*n)["ts"].num);
    for (const sgtest::Json *s : f.spans) fill_ts = std::min(fill_ts, (*s)["ts"].num);
    std::printf("[ info ] %s: first fill %.1f us after the upload node's start\n",
                mode == SG_MODE_GRAPH ? "graph" : "streams", fill_ts - up_ts);
  }
}

// Sampling in graph mode launches an untraced graph beside the traced one,
// and a staged copy's staging state belongs to one instantiated graph: graph
// mode refuses staged copies with trace_every > 1, saying what to do;
// streams mode takes them, and times the sampled launches.
TEST(GpuTraceStaging, SampledGraphModeRefusesStagedCopies) {
  SG_SKIP_WITHOUT_GPU();
  const size_t bytes = 4u << 20;
  std::vector<uint8_t> host(bytes), back(bytes, 0xA5);
  for (size_t i = 0; i < bytes; i++) host[i] = uint8_t(i * 13 + 5);
  DevMem dev(bytes);
  sgtest::Graph g;
  sg_copy_desc up = {dev.p, host.data(), bytes, SG_COPY_HOST_TO_DEVICE, "up"};
  sg_copy_desc down = {back.data(), dev.p, bytes, SG_COPY_DEVICE_TO_HOST, "down"};
  sg_node u;
  SG_ASSERT_OK(sg_graph_add_copy(g, &up, nullptr, 0, &u));
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &u, 1, nullptr));
  for (sg_graph_build build : {SG_BUILD_EXPLICIT, SG_BUILD_CAPTURE}) {
    sg_exec_options o = gputest::cuda_options({"x", SG_MODE_GRAPH, build});
    o.staging.policy = SG_STAGING_STAGE;
    o.trace = 1;
    o.trace_every = 4;
    sg_exec *e = nullptr;
    EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_UNSUPPORTED);
    EXPECT_EQ(e, nullptr);
    EXPECT_NE(std::string(sg_last_error()).find("trace_every"), std::string::npos)
        << sg_last_error();
    if (e) sg_exec_destroy(e);
  }
  sg_exec_options o = gputest::cuda_options({"x", SG_MODE_STREAMS, SG_BUILD_EXPLICIT});
  o.staging.policy = SG_STAGING_STAGE;
  o.trace = 1;
  o.trace_every = 4;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 6; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(back, host);
  for (uint64_t l : {1u, 5u}) {
    std::vector<sg_trace_record> rec = sgtest::records_of(e, l, 2);
    ASSERT_EQ(rec.size(), 2u);
    EXPECT_EQ(rec[0].launch, l);
  }
  sg_trace_record r[2];
  size_t count = 0;
  EXPECT_EQ(sg_exec_get_launch_trace(e, 6, r, 2, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("not sampled"), std::string::npos)
      << sg_last_error();
}

// A pipeline on the GPU: batches labelled on one timeline, results right.
TEST(GpuTracePipeline, BatchesOnOneTimeline) {
  SG_SKIP_WITHOUT_GPU();
  const uint32_t seed = 99u;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int depth = 3, batches = 9;
  const size_t n = 1u << 20;
  std::vector<PinnedMem *> ins, outs;
  std::vector<std::vector<uint32_t>> want;
  for (int b = 0; b < batches; b++) {
    ins.push_back(new PinnedMem(n * 4));
    outs.push_back(new PinnedMem(n * 4));
    std::vector<uint32_t> v = gputest::random_u32(seed + b, n);
    std::memcpy(ins[b]->p, v.data(), n * 4);
    std::memset(outs[b]->p, 0xA5, n * 4);
    for (size_t i = 0; i < n; i++) v[i] = gputest::work_ref(v[i], i, 64);
    want.push_back(v);
  }
  std::vector<DevMem *> devs;
  for (int i = 0; i < depth; i++) devs.push_back(new DevMem(n * 4));
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_set_name(g, "batched"));
  sg_copy_desc up = {devs[0]->p, ins[0]->p, n * 4, SG_COPY_HOST_TO_DEVICE, "upload"};
  sg_node nu, nk, nd;
  SG_ASSERT_OK(sg_graph_add_copy(g, &up, nullptr, 0, &nu));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, devs[0]->u32(), n, 64);
  k.desc.name = "compute";
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, &nu, 1, &nk));
  sg_copy_desc down = {outs[0]->p, devs[0]->p, n * 4, SG_COPY_DEVICE_TO_HOST, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &nk, 1, &nd));
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
    SCOPED_TRACE(mode == SG_MODE_GRAPH ? "graph mode" : "streams mode");
    sg_pipeline_options po;
    sg_pipeline_options_init(&po);
    po.depth = depth;
    po.exec = gputest::cuda_options({"x", mode, SG_BUILD_EXPLICIT});
    po.exec.trace = 1;
    sg_pipeline *p = nullptr;
    SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
    for (int i = 0; i < depth; i++) {  // each instance its own device buffer
      sg_pipeline_instance inst;
      SG_ASSERT_OK(sg_pipeline_get_instance(p, i, &inst));
      sg_kernels_work_u32(&k, devs[i]->u32(), n, 64);
      sg_pipeline_bind binds[] = {sg_bind_copy_dst(nu, devs[i]->p),
                                  sg_bind_copy_src(nd, devs[i]->p)};
      SG_ASSERT_OK(sg_pipeline_instance_bind(&inst, binds, 2));
      SG_ASSERT_OK(sg_exec_set_kernel(inst.exec, nk, &k.desc));
    }
    for (int b = 0; b < batches; b++) {
      std::memset(outs[b]->p, 0xA5, n * 4);
      sg_pipeline_bind binds[] = {sg_bind_copy_src(nu, ins[b]->p),
                                  sg_bind_copy_dst(nd, outs[b]->p)};
      sg_pipeline_batch batch = {binds, 2, nullptr};
      SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
    }
    std::string path = ::testing::TempDir() + "gpu_trace_pipeline.json";
    SG_ASSERT_OK(sg_pipeline_write_trace(p, path.c_str()));
    SG_ASSERT_OK(sg_pipeline_drain(p));
    SG_ASSERT_OK(sg_pipeline_destroy(p));
    for (int b = 0; b < batches; b++) {
      std::vector<uint32_t> got(n);
      std::memcpy(got.data(), outs[b]->p, n * 4);
      EXPECT_EQ(got, want[b]) << "batch " << b;
    }
    sgtest::TraceFile f;
    std::string why;
    ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
    std::remove(path.c_str());
    EXPECT_EQ(f.nodes.size(), size_t(3 * batches));
    ASSERT_EQ(f.launches.size(), size_t(batches));
    std::set<int> labelled;
    for (const sgtest::Json *l : f.launches) labelled.insert(int((*l)["args"]["batch"].num));
    EXPECT_EQ(labelled.size(), size_t(batches));
    // Overlap of batch b+1's upload with batch b's compute, as the trace
    // shows it (reported, not required: it depends on the machine).
    int overlapped = 0;
    for (int b = 0; b + 1 < batches; b++) {
      double compute_end = -1, upload_start = -1;
      for (const sgtest::Json *s : f.nodes) {
        int batch = int((*s)["args"]["batch"].num);
        if (batch == b && (*s)["name"].str == "compute")
          compute_end = (*s)["ts"].num + (*s)["dur"].num;
        if (batch == b + 1 && (*s)["name"].str == "upload") upload_start = (*s)["ts"].num;
      }
      overlapped += upload_start >= 0 && compute_end >= 0 && upload_start < compute_end;
    }
    std::printf("[ info ] %s: batch b+1's upload began before batch b's compute ended in %d of "
                "%d pairs\n", mode == SG_MODE_GRAPH ? "graph" : "streams", overlapped,
                batches - 1);
  }
  for (auto *m : ins) delete m;
  for (auto *m : outs) delete m;
  for (auto *m : devs) delete m;
}

}  // namespace
