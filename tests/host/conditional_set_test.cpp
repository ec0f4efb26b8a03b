// sg_exec_set_* on nodes inside conditional bodies (at any depth) on the
// host backend: random nested IF, IF/ELSE, WHILE and SWITCH graphs whose
// body nodes (kernel arguments, copies, memsets, host functions, and the
// kernels that decide the conditions) are changed at random, bit for bit
// against a CPU reference after each change; copy on write (a launch in
// flight keeps the bodies it was launched with); refusals naming the body;
// every allocation failure of a change inside a body.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cond_set_model.h"
#include "sg_test_util.h"
#include "streamgraph/testing.h"

namespace {

using condset::Model;
using condset::Node;

std::string seed_text(uint32_t seed) { return "seed " + std::to_string(seed); }

// Launches `e` on `mem` (starting from `before`) and compares with the
// reference; `before` becomes the reference's result.
void launch_and_compare(sg_exec *e, const Model &m, std::vector<uint32_t> &mem,
                        std::vector<uint32_t> &before, const std::string &what) {
  mem = before;
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  m.reference(before);
  ASSERT_EQ(mem, before) << what;
}

// A random model built into a graph, with two executables of different
// stream limits (1 and 4) and the reference each launch must match.
struct Pair {
  Model m;
  std::vector<uint32_t> mem;
  sgtest::Graph g;
  sgtest::Exec a, b;
  std::vector<uint32_t> ref_a, ref_b;
  explicit Pair(uint32_t seed) : m(seed, condset::Options{}) {}

  void make(uint32_t seed) {
    m.generate();
    mem.assign(m.words(), 0);
    SG_ASSERT_OK(m.build(g, mem.data(), nullptr, nullptr));
    sg_exec_options one = sgtest::host_options(1), four = sgtest::host_options(4);
    SG_ASSERT_OK(sg_exec_create(g, &one, &a.e));
    SG_ASSERT_OK(sg_exec_create(g, &four, &b.e));
    std::mt19937 rng(seed);
    std::vector<uint32_t> start(m.words());
    for (uint32_t &w : start) w = rng() % 1000;
    ref_a = ref_b = start;
    ASSERT_NO_FATAL_FAILURE(launch_and_compare(a, m, mem, ref_a, "before any change"));
  }

  // `steps` random changes, made with sg_exec_set_* on both executables, or
  // (`by_update`) in the graph and given to `a` with sg_exec_update and to
  // `b` with sg_exec_update_async; both launched and compared after each.
  void change(int steps, bool by_update) {
    for (int step = 0; step < steps; step++) {
      sg_status st;
      const std::string what = by_update ? m.random_edit(&st) : m.random_set({a.e, b.e}, &st);
      ASSERT_EQ(st, SG_OK) << "step " << step << ": " << what << ": " << sg_last_error();
      if (by_update) {
        SG_ASSERT_OK(sg_exec_update(a, g));
        SG_ASSERT_OK(sg_exec_update_async(b, g));
      }
      const std::string where = "step " + std::to_string(step) + " after " + what;
      ASSERT_NO_FATAL_FAILURE(launch_and_compare(a, m, mem, ref_a, where + " (1 stream)"));
      ASSERT_NO_FATAL_FAILURE(launch_and_compare(b, m, mem, ref_b, where + " (4 streams)"));
    }
  }
};

class ConditionalSet : public ::testing::TestWithParam<uint32_t> {};

// Random graphs, random changes, two executables of different stream
// limits: after each change, each launch matches the reference.
TEST_P(ConditionalSet, RandomChangesInBodiesMatchTheReference) {
  sgtest::LeakCheck leaks;
  const uint32_t seed = GetParam();
  SCOPED_TRACE(seed_text(seed));
  Pair p(seed);
  ASSERT_NO_FATAL_FAILURE(p.make(seed));
  const int sets = 30;
  ASSERT_NO_FATAL_FAILURE(p.change(sets, false));
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(p.a, &stats));
  EXPECT_EQ(stats.rebuilds, 0u) << "a change inside a body re-planned";
  EXPECT_EQ(stats.param_updates, static_cast<uint64_t>(sets));
}

INSTANTIATE_TEST_SUITE_P(Seeds, ConditionalSet, ::testing::Range(1u, 17u));

// The same changes made in the graph (sg_graph_set_* on the body graphs)
// and given with sg_exec_update, synchronously and in the background: bodies
// of the same topology change in place, with no re-plan; a new condition
// (the conditions' table changed) re-plans.
class ConditionalUpdate : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ConditionalUpdate, EditedBodiesOfTheSameTopologyUpdateInPlace) {
  sgtest::LeakCheck leaks;
  const uint32_t seed = GetParam();
  SCOPED_TRACE(seed_text(seed));
  Pair p(seed);
  ASSERT_NO_FATAL_FAILURE(p.make(seed));
  ASSERT_NO_FATAL_FAILURE(p.change(30, true));
  for (sg_exec *e : {p.a.e, p.b.e}) {
    sg_exec_stats stats;
    SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
    EXPECT_EQ(stats.rebuilds, 0u) << "an edit inside a body re-planned";
  }
  // A node inside a body stays reachable by its handle after the updates.
  const condset::Node *deep = p.m.deepest(condset::Node::KERNEL);
  if (deep) SG_ASSERT_OK(p.m.set_kernel(p.a, *deep));
  // A new condition changes the conditions' table: that re-plans.
  sg_cond extra;
  SG_ASSERT_OK(sg_graph_cond_create(p.g, 1, 0, &extra));
  SG_ASSERT_OK(sg_exec_update(p.a, p.g));
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(p.a, &stats));
  EXPECT_EQ(stats.rebuilds, 1u);
  ASSERT_NO_FATAL_FAILURE(launch_and_compare(p.a, p.m, p.mem, p.ref_a, "after a new condition"));
}

INSTANTIATE_TEST_SUITE_P(Seeds, ConditionalUpdate, ::testing::Range(1u, 9u));

// A launch in flight keeps the bodies it was launched with: it is held at a
// gate before its first node while several body nodes change, and must
// compute the old description; the launch after it computes the new one.
TEST(ConditionalSetCopyOnWrite, ALaunchInFlightKeepsItsBodies) {
  sgtest::LeakCheck leaks;
  for (uint32_t seed = 100; seed < 110; seed++) {
    SCOPED_TRACE(seed_text(seed));
    Model m(seed, condset::Options{});
    m.generate();
    std::vector<uint32_t> mem(m.words());
    sgtest::HostGate gate;
    sg_host_desc first = {sgtest::HostGate::wait_fn, &gate, "gate"};
    sgtest::Graph g;
    SG_ASSERT_OK(m.build(g, mem.data(), nullptr, &first));
    sg_exec_options o = sgtest::host_options(2);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (uint32_t i = 0; i < mem.size(); i++) mem[i] = i * 7u + seed;
    std::vector<uint32_t> want = mem;
    m.reference(want);  // the first launch: the description before the changes
    sgtest::Watchdog dog([&] { gate.release(); });
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    for (int k = 0; k < 4; k++) {
      sg_status st;
      const std::string what = m.random_set({e.e}, &st);
      ASSERT_EQ(st, SG_OK) << what << ": " << sg_last_error();
    }
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    m.reference(want);  // the second: after them
    gate.release();
    SG_ASSERT_OK(sg_exec_wait(e));
    dog.disarm();
    ASSERT_FALSE(dog.fired()) << "the launches hung";
    ASSERT_EQ(mem, want) << "a launch in flight saw a change made after it started, or the "
                            "launch after it missed one";
  }
}

// Changes inside bodies while a background rebuild (sg_exec_update_async)
// builds: they change the current version, the replacement runs its graph
// as given; after the switch, the new graph's body handles are the ones
// accepted.
TEST(ConditionalSetCopyOnWrite, ChangesWhileABackgroundRebuildBuilds) {
  sgtest::LeakCheck leaks;
  for (uint32_t seed = 200; seed < 206; seed++) {
    SCOPED_TRACE(seed_text(seed));
    Model now(seed, condset::Options{}), next(seed, condset::Options{});
    now.generate();
    next.generate();  // the same description, in a graph of another topology
    std::vector<uint32_t> mem(now.words());
    sgtest::HostGate open;
    open.release();
    sg_host_desc first = {sgtest::HostGate::wait_fn, &open, "first"};
    sgtest::Graph g1, g2;
    SG_ASSERT_OK(now.build(g1, mem.data(), nullptr, nullptr));
    SG_ASSERT_OK(next.build(g2, mem.data(), nullptr, &first));
    sg_exec_options o = sgtest::host_options(2);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g1, &o, &e.e));
    SG_ASSERT_OK(sg_exec_update_async(e, g2));
    for (int k = 0; k < 4; k++) {
      sg_status st;
      const std::string what = now.random_set({e.e}, &st);
      ASSERT_EQ(st, SG_OK) << what << ": " << sg_last_error();
    }
    std::vector<uint32_t> start(mem.size(), seed), want = start;
    mem = start;
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    uint64_t switched = 0;
    SG_ASSERT_OK(sg_exec_update_wait(e, &switched));
    // Launch 1 ran the new version if the build was done by then.
    (switched == 1 ? next : now).reference(want);
    ASSERT_EQ(mem, want) << "launch 1 (new version from launch " << switched << ")";
    // The replacement is current from the next launch at the latest.
    sg_status st;
    const std::string what = next.random_set({e.e}, &st);
    ASSERT_EQ(st, SG_OK) << what << ": " << sg_last_error();
    want = start;
    next.reference(want);
    mem = start;
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    ASSERT_EQ(mem, want) << "after the switch, " << what;
    // The first graph's bodies are not the executable's any more.
    Node *old = now.deepest(Node::KERNEL);
    ASSERT_NE(old, nullptr);
    EXPECT_EQ(now.set_kernel(e, *old), SG_ERR_FOREIGN_NODE) << sg_last_error();
  }
}

// Two executables of one graph share nothing they could change under each
// other: a change inside a body of one leaves the other's bodies alone.
TEST(ConditionalSetCopyOnWrite, ExecutablesOfOneGraphStayApart) {
  sgtest::LeakCheck leaks;
  Model m(7, condset::Options{});
  m.generate();
  std::vector<uint32_t> mem(m.words());
  sgtest::Graph g;
  SG_ASSERT_OK(m.build(g, mem.data(), nullptr, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec changed, kept;
  SG_ASSERT_OK(sg_exec_create(g, &o, &changed.e));
  SG_ASSERT_OK(sg_exec_create(g, &o, &kept.e));
  std::vector<uint32_t> start(m.words(), 5u), ref = start;
  m.reference(ref);  // what `kept` computes, before any change
  for (int k = 0; k < 8; k++) {
    sg_status st;
    const std::string what = m.random_set({changed.e}, &st);
    ASSERT_EQ(st, SG_OK) << what << ": " << sg_last_error();
  }
  mem = start;
  SG_ASSERT_OK(sg_exec_launch(kept, nullptr));
  SG_ASSERT_OK(sg_exec_wait(kept));
  EXPECT_EQ(mem, ref) << "a change to one executable's body reached another's";
}

// A kernel of a conditional body, two deep, and the graph around it.
struct Nested {
  sgtest::Graph g;
  sg_graph *outer_body = nullptr, *inner_bodies[2] = {nullptr, nullptr};
  sg_node deep{}, copy{}, inner{};
  uint32_t words[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  cs_args a{CS_MIX, 1, 2, 3, 0, 0};
  uint32_t *mem = words;
  sg_cond_ref ref{0, nullptr};
  void *args[3] = {&mem, &a, &ref};
  size_t sizes[3] = {sizeof mem, sizeof a, sizeof ref};
  sg_kernel_desc k{};

  Nested() {
    sg_cond c;
    EXPECT_EQ(sg_graph_cond_create(g, 1, SG_COND_ASSIGN_DEFAULT, &c), SG_OK);
    sg_cond_node_desc outer = {SG_COND_WHILE, c, 1, "loop"};
    sg_cond_node_desc in = {SG_COND_IF, c, 2, "pick"};
    k.grid = k.block = {1, 1, 1};
    k.args = args;
    k.arg_sizes = sizes;
    k.arg_count = 3;
    k.host_twin = condset::twin;
    // The loop runs once: `stop` (last in its body) sets the condition to 0.
    EXPECT_EQ(sg_graph_add_conditional(g, &outer, nullptr, 0, nullptr, &outer_body), SG_OK);
    EXPECT_EQ(sg_graph_add_conditional(outer_body, &in, nullptr, 0, &inner, inner_bodies), SG_OK);
    k.name = "deep";
    EXPECT_EQ(sg_graph_add_kernel(inner_bodies[0], &k, nullptr, 0, &deep), SG_OK);
    sg_copy_desc cd = {&words[4], &words[1], sizeof(uint32_t), SG_COPY_AUTO, "copy"};
    EXPECT_EQ(sg_graph_add_copy(inner_bodies[0], &cd, &deep, 1, &copy), SG_OK);
    cs_args stop{CS_LOOP, 0, 0, 0, 0, 7};
    void *stop_args[3] = {&mem, &stop, &ref};
    sg_kernel_desc s = k;
    s.args = stop_args;
    s.name = "stop";
    sg_node stop_node;
    EXPECT_EQ(sg_graph_add_kernel(outer_body, &s, &inner, 1, &stop_node), SG_OK);
    EXPECT_EQ(sg_graph_kernel_bind_cond(outer_body, stop_node, 2, c), SG_OK);
  }
};

void expect_refused(sg_status st, sg_status want, const std::vector<std::string> &words) {
  EXPECT_EQ(st, want) << sg_status_name(st) << ": " << sg_last_error();
  const std::string msg = sg_last_error();
  for (const std::string &w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

// A bad description for a body node is refused as for a top-level node, the
// message naming the way to the node; the executable keeps what it had.
TEST(ConditionalSetRefusals, NameTheBodyAndChangeNothing) {
  sgtest::LeakCheck leaks;
  Nested n;
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(n.g, &o, &e.e));
  const std::string path = "body 0 of WHILE node 'loop' (#0): body 0 of IF/ELSE node 'pick' (#0)";
  sg_kernel_desc bad = n.k;
  bad.grid = {0, 1, 1};
  expect_refused(sg_exec_set_kernel(e, n.deep, &bad), SG_ERR_INVALID_LAUNCH,
                 {"sg_exec_set_kernel: " + path + ": node 'deep' (#0)", "zero dimension"});
  bad = n.k;
  bad.host_twin = nullptr;  // the host backend needs one
  EXPECT_NE(sg_exec_set_kernel(e, n.deep, &bad), SG_OK);
  EXPECT_NE(std::string(sg_last_error()).find("'deep'"), std::string::npos) << sg_last_error();
  sg_memset_desc ms = {&n.words[0], 1, 4, 1, nullptr};
  expect_refused(sg_exec_set_memset(e, n.deep, &ms), SG_ERR_INVALID_ARGUMENT,
                 {"sg_exec_set_memset", path, "is a kernel node, not a memset node"});
  sg_copy_desc cd = {&n.words[4], nullptr, sizeof(uint32_t), SG_COPY_AUTO, nullptr};
  expect_refused(sg_exec_set_copy(e, n.copy, &cd), SG_ERR_INVALID_ARGUMENT,
                 {"sg_exec_set_copy", path, "'copy'"});
  cd = {&n.words[4], &n.words[1], 0, SG_COPY_AUTO, nullptr};
  expect_refused(sg_exec_set_copy(e, n.copy, &cd), SG_ERR_INVALID_ARGUMENT, {path});
  // An index past the body's nodes as the executable has it.
  sg_node past = {(n.deep.opaque & ~0xffffffffull) | 9u};
  expect_refused(sg_exec_set_kernel(e, past, &n.k), SG_ERR_INVALID_ARGUMENT,
                 {path, "out of range"});
  // Stream functions and NCCL nodes are top-level only: the message says
  // which calls change a body's nodes.
  expect_refused(sg_exec_set_stream_fn(e, n.deep, nullptr), SG_ERR_UNSUPPORTED,
                 {"sg_exec_set_stream_fn", "'pick'", "sg_exec_set_kernel"});
  // Nothing changed: the deep kernel still mixes words[2] into words[1].
  std::vector<uint32_t> want(n.words, n.words + 8);
  want[1] = cs_mix(want[1], want[2], 3);
  want[4] = want[1];
  want[7] = 0;
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(std::vector<uint32_t>(n.words, n.words + 8), want);
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.param_updates, 0u);
}

// Every allocation failure of a change inside a body comes back as a status
// with a message, leaks nothing and leaves the executable running what it
// had; the change made without faults then applies.
TEST(ConditionalSetFaults, EveryAllocationFailureOfAChangeInABody) {
  sgtest::LeakCheck leaks;
  Nested n;
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(n.g, &o, &e.e));
  cs_args changed{CS_MIX, 5, 6, 9, 0, 0};
  void *args[3] = {&n.mem, &changed, &n.ref};
  sg_kernel_desc k = n.k;
  k.args = args;
  k.name = nullptr;
  int failures = 0;
  for (unsigned nth = 1;; nth++) {
    ASSERT_LT(nth, 1000u) << "the fault sweep does not end";
    const long live = sg_live_allocations();
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = sg_exec_set_kernel(e, n.deep, &k);
    const int fired = sg_fault_fired();
    const std::string site = sg_fault_site();
    sg_fault_arm(0, 0);
    if (!fired) {
      SG_ASSERT_OK(st);
      break;
    }
    failures++;
    ASSERT_NE(st, SG_OK) << "fault " << nth << " at " << site << " was swallowed";
    EXPECT_STRNE(sg_last_error(), "") << "fault " << nth << " at " << site;
    // A refused kernel change keeps its argument block as the executable's
    // spare for the next change (freed with the executable: LeakCheck).
    EXPECT_LE(sg_live_allocations(), live + 1) << "leak with fault " << nth << " at " << site;
    // Still the old description.
    std::fill(n.words, n.words + 8, 3u);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    ASSERT_EQ(n.words[1], cs_mix(3, 3, 3)) << "fault " << nth << " at " << site;
    ASSERT_EQ(n.words[5], 3u) << "fault " << nth << " at " << site << " half applied";
  }
  EXPECT_GT(failures, 0) << "no fault point was reached";
  std::fill(n.words, n.words + 8, 3u);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(n.words[1], 3u);
  EXPECT_EQ(n.words[5], cs_mix(3, 3, 9)) << "the change made after the faults did not apply";
}

}  // namespace
