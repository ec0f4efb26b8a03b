// launch_bench: launch overhead of the CUDA backends against hand-written
// baselines, side by side in one run.
//
//   streams mode      sg_exec_launch (streams mode)   vs  a hand-written loop of the same
//                     calls: same schedule, same streams and events, same fork/join
//   graph mode        sg_exec_launch (graph mode)     vs  a hand-built cudaGraph of the
//                     same nodes and (reduced) edges, instantiated and uploaded
//   update+relaunch   sg_exec_set_kernel + launch     vs  cudaGraphExecKernelNodeSetParams
//                     (one node per launch, and every node per launch)  + cudaGraphLaunch
//
// over chain, fan, diamond-layer and random DAGs of 10, 100, 1,000 and
// 10,000 empty-kernel nodes. Each figure is the median of several samples
// (each many launches, then one wait), after a warm-up, ours and the
// baseline's samples interleaved. Prints a table; writes JSON to argv[1]
// (default launch_bench.json). Targets (H200): graph <= 1.05x, streams <=
// 1.15x, update+relaunch <= 1.10x of the baseline.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "plan/schedule.h"
#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

// The executable's schedule (internal; the hand-written loop replays it).
extern "C" const sg__schedule *sg__plan_schedule(const sg_plan *plan);

namespace {

__global__ void noop_arg(uint32_t) {}

void check_cuda(cudaError_t e, const char *what, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "launch_bench:%d: %s: %s\n", line, what, cudaGetErrorName(e));
  std::exit(1);
}
void check_sg(sg_status s, const char *what, int line) {
  if (s == SG_OK) return;
  std::fprintf(stderr, "launch_bench:%d: %s: %s: %s\n", line, what, sg_status_name(s),
               sg_last_error());
  std::exit(1);
}
#define CK(x) check_cuda((x), #x, __LINE__)
#define SK(x) check_sg((x), #x, __LINE__)

// ---- topologies ------------------------------------------------------------

struct Dag {
  std::string name;
  uint32_t n = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // from < to
};

Dag chain(uint32_t n) {
  Dag d{"chain", n, {}};
  for (uint32_t i = 1; i < n; i++) d.edges.emplace_back(i - 1, i);
  return d;
}

Dag fan(uint32_t n) { return Dag{"fan", n, {}}; }

// Layers of 8 independent nodes between join nodes: join, 8, join, 8, ...
Dag diamonds(uint32_t n) {
  const uint32_t width = 8;
  Dag d{"diamond", n, {}};
  uint32_t join = 0;
  std::vector<uint32_t> layer;
  for (uint32_t i = 1; i < n; i++) {
    if (layer.size() == width) {
      for (uint32_t v : layer) d.edges.emplace_back(v, i);
      layer.clear();
      join = i;
    } else {
      d.edges.emplace_back(join, i);
      layer.push_back(i);
    }
  }
  return d;
}

// Up to 3 predecessors for each node, among the 64 before it.
Dag random_dag(uint32_t n) {
  Dag d{"random", n, {}};
  std::mt19937 rng(12345 + n);
  for (uint32_t v = 1; v < n; v++) {
    uint32_t lo = v > 64 ? v - 64 : 0;
    std::vector<uint32_t> picks;
    for (uint32_t k = 0, want = rng() % 4; k < want; k++) picks.push_back(lo + rng() % (v - lo));
    std::sort(picks.begin(), picks.end());
    picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
    for (uint32_t u : picks) d.edges.emplace_back(u, v);
  }
  return d;
}

// ---- timing -----------------------------------------------------------------

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr int kSamples = 7;

// Runs `ours(reps)` and `base(reps)` (each returns microseconds for `reps`
// iterations, waited for) once to warm up, then kSamples times each,
// interleaved, alternating which goes first. Medians per iteration.
std::pair<double, double> compare(int reps, const std::function<double(int)> &ours,
                                  const std::function<double(int)> &base) {
  ours(reps);
  base(reps);
  std::vector<double> a, b;
  for (int s = 0; s < kSamples; s++) {
    if (s % 2) {
      b.push_back(base(reps));
      a.push_back(ours(reps));
    } else {
      a.push_back(ours(reps));
      b.push_back(base(reps));
    }
  }
  return {median(a) / reps, median(b) / reps};
}

int reps_for(uint32_t n, int at_least) { return std::max<int>(at_least, 20000 / int(n)); }

// ---- the graph as the library sees it -----------------------------------------

struct LibGraph {
  sg_graph *g = nullptr;
  std::vector<sg_node> nodes;
};

// Every node runs `desc` (copied by the library when added).
LibGraph make_lib_graph(const Dag &d, const sg_kernel_desc &desc) {
  LibGraph lg;
  SK(sg_graph_create(&lg.g));
  lg.nodes.resize(d.n);
  for (uint32_t i = 0; i < d.n; i++) SK(sg_graph_add_kernel(lg.g, &desc, nullptr, 0, &lg.nodes[i]));
  for (auto &e : d.edges) SK(sg_graph_add_edge(lg.g, lg.nodes[e.first], lg.nodes[e.second]));
  return lg;
}

sg_exec *make_exec(const LibGraph &lg, sg_exec_mode mode, sg_graph_build build, double *ms) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = mode;
  o.build = build;
  sg_exec *x = nullptr;
  double t0 = now_us();
  SK(sg_exec_create(lg.g, &o, &x));
  if (ms) *ms = (now_us() - t0) / 1e3;
  return x;
}

const sg__schedule *schedule_of(sg_exec *x) {
  const sg_plan *plan = nullptr;
  SK(sg_exec_get_plan(x, &plan));
  return sg__plan_schedule(plan);
}

// ---- hand-written baselines ---------------------------------------------------

// What a careful programmer writes to replay the schedule by hand: the same
// streams, the same cross-stream events, a fork from streams[0] at the start
// and a join into it at the end (so launches stay ordered).
struct HandLoop {
  const sg__schedule *s;
  const void *func;
  std::vector<cudaStream_t> streams, node_stream;
  std::vector<cudaEvent_t> events, joins;
  cudaEvent_t start, done;

  HandLoop(const sg__schedule *sched, const void *f) : s(sched), func(f) {
    uint32_t k = std::max<uint32_t>(1, s->stream_count);
    streams.resize(k);
    joins.resize(k);
    for (auto &st : streams) CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (auto &e : joins) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    events.resize(s->event_count);
    for (auto &e : events) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&start, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    node_stream.resize(s->node_count);
    for (uint32_t n = 0; n < s->node_count; n++) node_stream[n] = streams[s->stream_of[n]];
  }
  ~HandLoop() {
    for (auto st : streams) cudaStreamDestroy(st);
    for (auto e : joins) cudaEventDestroy(e);
    for (auto e : events) cudaEventDestroy(e);
    cudaEventDestroy(start);
    cudaEventDestroy(done);
  }
  void launch() {
    const uint32_t k = uint32_t(streams.size());
    if (k > 1) {
      CK(cudaEventRecord(start, streams[0]));
      for (uint32_t i = 1; i < k; i++) CK(cudaStreamWaitEvent(streams[i], start, 0));
    }
    const dim3 one(1);
    for (uint32_t j = 0; j < s->node_count; j++) {
      uint32_t n = s->order[j];
      cudaStream_t st = node_stream[n];
      for (uint32_t w = s->wait_start[n]; w < s->wait_start[n + 1]; w++)
        CK(cudaStreamWaitEvent(st, events[s->wait_event[w]], 0));
      CK(cudaLaunchKernel(func, one, one, nullptr, 0, st));
      if (s->record_event[n] >= 0) CK(cudaEventRecord(events[s->record_event[n]], st));
    }
    for (uint32_t i = 1; i < k; i++) {
      CK(cudaEventRecord(joins[i], streams[i]));
      CK(cudaStreamWaitEvent(streams[0], joins[i], 0));
    }
    CK(cudaEventRecord(done, streams[0]));
  }
};

// A cudaGraph built by hand with the same nodes and the schedule's reduced
// edges, each node running `func` with `args` (NULL for no arguments).
struct HandGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  double build_ms = 0;

  HandGraph(const sg__schedule *s, const void *func, void **args) {
    double t0 = now_us();
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaGraphCreate(&graph, 0));
    std::vector<std::vector<cudaGraphNode_t>> preds(s->node_count);
    nodes.resize(s->node_count);
    cudaKernelNodeParams p = {};
    p.func = const_cast<void *>(func);
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    for (uint32_t j = 0; j < s->node_count; j++) {
      uint32_t n = s->order[j];
      CK(cudaGraphAddKernelNode(&nodes[n], graph, preds[n].data(), preds[n].size(), &p));
      for (uint32_t e = s->red_start[n]; e < s->red_start[n + 1]; e++)
        preds[s->red_succ[e]].push_back(nodes[n]);
    }
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphUpload(exec, stream));
    CK(cudaStreamSynchronize(stream));
    build_ms = (now_us() - t0) / 1e3;
  }
  ~HandGraph() {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
};

// ---- one configuration ----------------------------------------------------------

struct Row {
  std::string topology;
  uint32_t nodes = 0;
  size_t edges = 0, reduced_edges = 0;
  unsigned streams = 0, events = 0;
  double streams_us = 0, hand_loop_us = 0;        // per node
  double graph_us = 0, hand_graph_us = 0;         // per node
  double update1_us = 0, raw_update1_us = 0;      // per update+launch
  double update_all_us = 0, raw_update_all_us = 0; // per node (update every node, launch)
  double create_explicit_ms = 0, create_capture_ms = 0, hand_build_ms = 0;
};

Row run(const Dag &d) {
  Row r;
  r.topology = d.name;
  r.nodes = d.n;
  r.edges = d.edges.size();
  const double n = d.n;

  sg_kernel_call empty;
  sg_kernels_empty(&empty);
  LibGraph lg = make_lib_graph(d, empty.desc);

  // Streams mode against the hand-written loop.
  {
    sg_exec *x = make_exec(lg, SG_MODE_STREAMS, SG_BUILD_EXPLICIT, nullptr);
    const sg__schedule *s = schedule_of(x);
    r.streams = s->stream_count;
    r.events = s->event_count;
    r.reduced_edges = s->reduced_edge_count;
    HandLoop hand(s, empty.desc.func);
    auto ours = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) SK(sg_exec_launch(x, nullptr));
      SK(sg_exec_wait(x));
      return now_us() - t0;
    };
    auto base = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) hand.launch();
      CK(cudaEventSynchronize(hand.done));
      return now_us() - t0;
    };
    auto m = compare(reps_for(d.n, 3), ours, base);
    r.streams_us = m.first / n;
    r.hand_loop_us = m.second / n;
    SK(sg_exec_destroy(x));
  }

  // Graph mode against the hand-built graph.
  {
    sg_exec *x = make_exec(lg, SG_MODE_GRAPH, SG_BUILD_EXPLICIT, &r.create_explicit_ms);
    sg_exec *xc = make_exec(lg, SG_MODE_GRAPH, SG_BUILD_CAPTURE, &r.create_capture_ms);
    SK(sg_exec_destroy(xc));
    HandGraph hand(schedule_of(x), empty.desc.func, nullptr);
    r.hand_build_ms = hand.build_ms;
    auto ours = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) SK(sg_exec_launch(x, nullptr));
      SK(sg_exec_wait(x));
      return now_us() - t0;
    };
    auto base = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) CK(cudaGraphLaunch(hand.exec, hand.stream));
      CK(cudaStreamSynchronize(hand.stream));
      return now_us() - t0;
    };
    auto m = compare(reps_for(d.n, 5), ours, base);
    r.graph_us = m.first / n;
    r.hand_graph_us = m.second / n;
    SK(sg_exec_destroy(x));
  }
  SK(sg_graph_destroy(lg.g));

  // Update + relaunch: nodes of a one-argument empty kernel whose argument
  // changes; ours through sg_exec_set_kernel, raw through the exec set-params.
  {
    uint32_t arg = 0;
    void *arg_ptrs[] = {&arg};
    size_t arg_sizes[] = {sizeof arg};
    sg_kernel_desc desc = {};
    desc.func = reinterpret_cast<const void *>(noop_arg);
    desc.grid = {1, 1, 1};
    desc.block = {1, 1, 1};
    desc.args = arg_ptrs;
    desc.arg_sizes = arg_sizes;
    desc.arg_count = 1;
    LibGraph ug = make_lib_graph(d, desc);
    sg_exec *x = make_exec(ug, SG_MODE_GRAPH, SG_BUILD_EXPLICIT, nullptr);
    uint32_t raw_arg = 0;
    void *raw_ptrs[] = {&raw_arg};
    HandGraph hand(schedule_of(x), desc.func, raw_ptrs);
    cudaKernelNodeParams p = {};
    p.func = const_cast<void *>(desc.func);
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = raw_ptrs;

    auto ours1 = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) {
        arg = uint32_t(i);
        SK(sg_exec_set_kernel(x, ug.nodes[i % d.n], &desc));
        SK(sg_exec_launch(x, nullptr));
      }
      SK(sg_exec_wait(x));
      return now_us() - t0;
    };
    auto base1 = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) {
        raw_arg = uint32_t(i);
        CK(cudaGraphExecKernelNodeSetParams(hand.exec, hand.nodes[i % d.n], &p));
        CK(cudaGraphLaunch(hand.exec, hand.stream));
      }
      CK(cudaStreamSynchronize(hand.stream));
      return now_us() - t0;
    };
    auto m = compare(reps_for(d.n, 5), ours1, base1);
    r.update1_us = m.first;
    r.raw_update1_us = m.second;

    auto ours_all = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) {
        for (uint32_t v = 0; v < d.n; v++) {
          arg = uint32_t(i) + v;
          SK(sg_exec_set_kernel(x, ug.nodes[v], &desc));
        }
        SK(sg_exec_launch(x, nullptr));
      }
      SK(sg_exec_wait(x));
      return now_us() - t0;
    };
    auto base_all = [&](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) {
        for (uint32_t v = 0; v < d.n; v++) {
          raw_arg = uint32_t(i) + v;
          CK(cudaGraphExecKernelNodeSetParams(hand.exec, hand.nodes[v], &p));
        }
        CK(cudaGraphLaunch(hand.exec, hand.stream));
      }
      CK(cudaStreamSynchronize(hand.stream));
      return now_us() - t0;
    };
    m = compare(reps_for(d.n, 2), ours_all, base_all);
    r.update_all_us = m.first / n;
    r.raw_update_all_us = m.second / n;

    sg_exec_stats st;
    SK(sg_exec_get_stats(x, &st));
    if (st.rebuilds != 0 || st.in_place_updates != st.param_updates)
      std::fprintf(stderr, "launch_bench: %s %u: %llu of %llu updates not in place\n",
                   d.name.c_str(), d.n,
                   (unsigned long long)(st.param_updates - st.in_place_updates),
                   (unsigned long long)st.param_updates);
    SK(sg_exec_destroy(x));
    SK(sg_graph_destroy(ug.g));
  }
  return r;
}

// ---- output -----------------------------------------------------------------------

struct Target {
  const char *what;
  double limit;
  double worst = 0, geomean = 0;
};

void write_json(const char *path, const std::vector<Row> &rows, const Target *targets, int nt,
                const char *device, int driver, int runtime, double total_s) {
  FILE *f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "launch_bench: cannot write %s\n", path);
    return;
  }
  std::time_t t = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  std::fprintf(f, "{\n  \"benchmark\": \"launch_bench\",\n  \"date\": \"%s\",\n", date);
  std::fprintf(f, "  \"device\": \"%s\",\n  \"driver_version\": %d,\n  \"runtime_version\": %d,\n",
               device, driver, runtime);
  std::fprintf(f, "  \"samples\": %d,\n  \"seconds\": %.1f,\n  \"targets\": [\n", kSamples, total_s);
  for (int i = 0; i < nt; i++)
    std::fprintf(f, "    {\"ratio\": \"%s\", \"limit\": %.2f, \"worst\": %.4f, \"geomean\": %.4f}%s\n",
                 targets[i].what, targets[i].limit, targets[i].worst, targets[i].geomean,
                 i + 1 < nt ? "," : "");
  std::fprintf(f, "  ],\n  \"rows\": [\n");
  for (size_t i = 0; i < rows.size(); i++) {
    const Row &r = rows[i];
    std::fprintf(
        f,
        "    {\"topology\": \"%s\", \"nodes\": %u, \"edges\": %zu, \"reduced_edges\": %zu, "
        "\"streams\": %u, \"events\": %u,\n"
        "     \"streams_us_per_node\": %.4f, \"hand_loop_us_per_node\": %.4f, \"streams_ratio\": %.4f,\n"
        "     \"graph_us_per_node\": %.4f, \"hand_graph_us_per_node\": %.4f, \"graph_ratio\": %.4f,\n"
        "     \"update1_us\": %.3f, \"raw_update1_us\": %.3f, \"update1_ratio\": %.4f,\n"
        "     \"update_all_us_per_node\": %.4f, \"raw_update_all_us_per_node\": %.4f, "
        "\"update_all_ratio\": %.4f,\n"
        "     \"create_explicit_ms\": %.3f, \"create_capture_ms\": %.3f, \"hand_build_ms\": %.3f}%s\n",
        r.topology.c_str(), r.nodes, r.edges, r.reduced_edges, r.streams, r.events, r.streams_us,
        r.hand_loop_us, r.streams_us / r.hand_loop_us, r.graph_us, r.hand_graph_us,
        r.graph_us / r.hand_graph_us, r.update1_us, r.raw_update1_us,
        r.update1_us / r.raw_update1_us, r.update_all_us, r.raw_update_all_us,
        r.update_all_us / r.raw_update_all_us, r.create_explicit_ms, r.create_capture_ms,
        r.hand_build_ms, i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : "launch_bench.json";
  if (sg_cuda_device_count() == 0) {
    std::fprintf(stderr, "launch_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  std::printf("launch_bench on %s (driver %d, runtime %d); median of %d samples\n", prop.name,
              driver, runtime, kSamples);
  std::printf("per node (us) unless noted; ratio = ours / hand-written\n\n");
  std::printf("%-8s %6s %3s | %8s %8s %5s | %8s %8s %5s | %9s %9s %5s | %8s %8s %5s\n",
              "topology", "nodes", "str", "streams", "hand", "ratio", "graph", "handgr", "ratio",
              "upd1(us)", "raw(us)", "ratio", "updall", "raw", "ratio");

  const double t0 = now_us();
  std::vector<Row> rows;
  for (uint32_t n : {10u, 100u, 1000u, 10000u}) {
    for (const Dag &d : {chain(n), fan(n), diamonds(n), random_dag(n)}) {
      Row r = run(d);
      rows.push_back(r);
      std::printf("%-8s %6u %3u | %8.3f %8.3f %5.2f | %8.3f %8.3f %5.2f | %9.2f %9.2f %5.2f | "
                  "%8.3f %8.3f %5.2f\n",
                  r.topology.c_str(), r.nodes, r.streams, r.streams_us, r.hand_loop_us,
                  r.streams_us / r.hand_loop_us, r.graph_us, r.hand_graph_us,
                  r.graph_us / r.hand_graph_us, r.update1_us, r.raw_update1_us,
                  r.update1_us / r.raw_update1_us, r.update_all_us, r.raw_update_all_us,
                  r.update_all_us / r.raw_update_all_us);
      std::fflush(stdout);
    }
  }
  const double total_s = (now_us() - t0) / 1e6;

  Target targets[] = {{"streams", 1.15}, {"graph", 1.05}, {"update1", 1.10}, {"update_all", 1.10}};
  for (Target &t : targets) {
    double log_sum = 0;
    for (const Row &r : rows) {
      double ratio = !std::strcmp(t.what, "streams") ? r.streams_us / r.hand_loop_us
                     : !std::strcmp(t.what, "graph") ? r.graph_us / r.hand_graph_us
                     : !std::strcmp(t.what, "update1") ? r.update1_us / r.raw_update1_us
                                                       : r.update_all_us / r.raw_update_all_us;
      t.worst = std::max(t.worst, ratio);
      log_sum += std::log(ratio);
    }
    t.geomean = std::exp(log_sum / rows.size());
  }
  std::printf("\nratio      target  geomean  worst\n");
  for (const Target &t : targets)
    std::printf("%-10s %6.2f  %7.3f  %5.3f  %s\n", t.what, t.limit, t.geomean, t.worst,
                t.worst <= t.limit ? "met" : (t.geomean <= t.limit ? "met on geomean" : "MISSED"));
  std::printf("\nbuild times (ms): ours explicit / ours capture / hand-built (instantiate+upload)\n");
  for (const Row &r : rows)
    std::printf("  %-8s %6u  %9.2f %9.2f %9.2f\n", r.topology.c_str(), r.nodes,
                r.create_explicit_ms, r.create_capture_ms, r.hand_build_ms);
  std::printf("\ntotal %.1f s; JSON: %s\n", total_s, json);
  write_json(json, rows, targets, 4, prop.name, driver, runtime, total_s);
  return 0;
}
