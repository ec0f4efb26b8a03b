// Fuzz target: several executables whose host nodes wait for the caller,
// at once, on a host pool as small as a 2-core machine's. The fuzzer's
// bytes choose the executables (small random DAGs of host nodes, some
// waiting at one of a few gates the caller opens later), their stream
// limits and modes, how often each is launched, and the order in which the
// caller opens the gates and waits. An unrelated executable launched while
// every gate is shut must finish first (no executable waits for another's
// host nodes: src/host/host_pool.h); every node runs once per launch; every
// wait returns; nothing leaks.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"

extern "C" {
#include "host/host_pool.h"
}

namespace {

// Bytes as choices: below(n) in 0..n-1, 0 once the input is used up.
struct Bytes {
  const uint8_t *data;
  size_t size, at = 0;
  unsigned below(unsigned n) { return n ? (at < size ? data[at++] : 0u) % n : 0u; }
};

constexpr unsigned kGates = 3;
constexpr unsigned kMaxExecs = 5;
constexpr unsigned kMaxNodes = 7;

struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
};
Gate gates[kGates];

struct Node {
  unsigned gate;  // kGates: does not wait
  unsigned runs = 0;
};

// A waiting node returns once its gate is open, or fails after a minute (a
// hang then shows as a failed launch rather than a stuck fuzzer).
int run_node(void *p) {
  Node *n = static_cast<Node *>(p);
  if (n->gate < kGates) {
    Gate &g = gates[n->gate];
    std::unique_lock<std::mutex> l(g.m);
    if (!g.cv.wait_for(l, std::chrono::seconds(60), [&] { return g.open; })) return 1;
  }
  n->runs++;  // a node runs on one thread at a time (launches of an executable are ordered)
  return 0;
}

void fail(const char *what, sg_status st) {
  std::fprintf(stderr, "fuzz_waiting: %s: %s: %s\n", what, sg_status_name(st), sg_last_error());
  std::abort();
}

struct Exec {
  std::vector<Node> nodes;
  unsigned launches = 0;
  unsigned needs = 0;  // bit g: a node waits at gate g
  sg_exec *exec = nullptr;
  bool waited = false;
};

void build(Bytes &b, Exec &x, bool may_wait) {
  sg_graph *g = nullptr;
  sg_status st = sg_graph_create(&g);
  if (st) fail("sg_graph_create", st);
  const unsigned count = 1 + b.below(kMaxNodes);
  x.nodes.resize(count);
  std::vector<sg_node> made(count);
  for (unsigned i = 0; i < count; i++) {
    x.nodes[i].gate = may_wait && b.below(3) == 0 ? b.below(kGates) : kGates;
    if (x.nodes[i].gate < kGates) x.needs |= 1u << x.nodes[i].gate;
    std::vector<sg_node> deps;
    for (unsigned j = 0; j < i; j++)
      if (b.below(3) == 0) deps.push_back(made[j]);
    sg_host_desc h = {run_node, &x.nodes[i], nullptr};
    if ((st = sg_graph_add_host(g, &h, deps.data(), deps.size(), &made[i])))
      fail("sg_graph_add_host", st);
  }
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.mode = b.below(2) ? SG_MODE_GRAPH : SG_MODE_STREAMS;
  o.max_streams = 1 + b.below(4);
  if ((st = sg_exec_create(g, &o, &x.exec))) fail("sg_exec_create", st);
  sg_graph_destroy(g);
  x.launches = 1 + b.below(3);
}

void finish(Exec &x) {
  sg_status st = sg_exec_wait(x.exec);
  if (st) fail("sg_exec_wait", st);
  x.waited = true;
  for (const Node &n : x.nodes)
    if (n.runs != x.launches) {
      std::fprintf(stderr, "fuzz_waiting: a node ran %u times in %u launches\n", n.runs,
                   x.launches);
      std::abort();
    }
}

long baseline = -1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool small = [] {
    sg__host_pool_set_base(2);
    return true;
  }();
  (void)small;
  Bytes b{data, size};
  for (Gate &g : gates) g.open = false;
  std::vector<Exec> waiting(1 + b.below(kMaxExecs));
  for (Exec &x : waiting) build(b, x, true);
  Exec free_one;
  build(b, free_one, false);
  if (baseline < 0) baseline = -2;  // measured below, after the first input's threads exist

  for (Exec &x : waiting)
    for (unsigned k = 0; k < x.launches; k++) {
      sg_status st = sg_exec_launch(x.exec, nullptr);
      if (st) fail("sg_exec_launch", st);
    }
  // With every gate shut, the unrelated executable still runs to the end.
  const auto start = std::chrono::steady_clock::now();
  for (unsigned k = 0; k < free_one.launches; k++) {
    sg_status st = sg_exec_launch(free_one.exec, nullptr);
    if (st) fail("sg_exec_launch", st);
  }
  finish(free_one);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (took > 20) {
    std::fprintf(stderr, "fuzz_waiting: an unrelated executable took %.1f s\n", took);
    std::abort();
  }
  // A query never blocks; an executable with a gate shut is not done yet.
  for (Exec &x : waiting) {
    sg_status st = sg_exec_query(x.exec);
    if (st != SG_OK && st != SG_NOT_READY) fail("sg_exec_query", st);
  }
  // Gates open in the fuzzer's order; an executable all of whose gates are
  // open may be waited for at once (the fuzzer chooses), the rest at the end.
  unsigned opened = 0;
  unsigned order[kGates] = {0, 1, 2};
  for (unsigned i = kGates - 1; i > 0; i--) std::swap(order[i], order[b.below(i + 1)]);
  for (unsigned gi : order) {
    {
      std::lock_guard<std::mutex> l(gates[gi].m);
      gates[gi].open = true;
    }
    gates[gi].cv.notify_all();
    opened |= 1u << gi;
    for (Exec &x : waiting)
      if (!x.waited && (x.needs & ~opened) == 0 && b.below(2)) finish(x);
  }
  for (Exec &x : waiting)
    if (!x.waited) finish(x);
  for (Exec &x : waiting) sg_exec_destroy(x.exec);
  sg_exec_destroy(free_one.exec);
  if (sg__host_pool_threads() > sg__host_pool_cap()) {
    std::fprintf(stderr, "fuzz_waiting: %u pool threads, cap %u\n", sg__host_pool_threads(),
                 sg__host_pool_cap());
    std::abort();
  }
  long live = sg_live_allocations();
  if (baseline == -2) baseline = live;
  if (live != baseline) {
    std::fprintf(stderr, "fuzz_waiting: %ld library allocations live, %ld before\n", live,
                 baseline);
    std::abort();
  }
  return 0;
}
