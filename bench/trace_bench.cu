// trace_bench: what tracing costs, and which way of timing graph mode costs
// less, side by side in one run.
//
//   streams mode   sg_exec_launch, trace off          vs  trace on (CUDA events per node)
//   graph mode     sg_exec_launch, trace off          vs  trace on (the traced graph:
//                  a stamp kernel node after every node, writing the GPU's global timer)
//                  vs  trace on with SG_TRACE_GRAPH_EVENTS=1 (the fallback: event-record
//                  nodes around every node, re-pointed at each launch's event set)
//                  vs  raw cudaGraphLaunch of the untraced graph (the floor)
//   sampled        trace on with options.trace_every = 4 and 8 (graph mode) and 8 (streams
//                  mode): every k-th launch traced (graph mode: the traced graph on
//                  those, the untraced graph instantiated beside it on the others), the
//                  mean cost per launch over many back-to-back launches
//   CUPTI          the untraced graph with CUPTI activity records on (kernels, copies,
//                  memsets: the other way to get per-node times) vs  the same with CUPTI
//                  loaded but off (a second phase: CUPTI, once loaded, stays in the process)
//
// over diamond-layer DAGs of empty kernels (the launch-bound case, where tracing
// costs the most relative to the work) of 16, 64 and 256 nodes. Two figures per
// case: "per launch" (microseconds per launch over many back-to-back launches,
// then one wait: throughput, host or GPU bound, whichever is slower) and
// "latency" (one launch then its wait, each time: what a synchronous caller
// sees). Each is the median of several samples, interleaved with the other
// cases of its row. Every traced run is checked (one record per node, every
// launch), and CUPTI's records are counted (one kernel record per node per
// launch). With CUPTI, the stamped trace's per-node times are compared with
// CUPTI's kernel records of the untraced graph (each node's mean duration
// and mean start from the launch's first node, over many launches; nodes
// matched by CUPTI's graph node id, or by rank in start order where the ids
// do not match). Prints tables; writes JSON to argv[1] (default
// trace_bench.json), with the issue's targets for the stamped trace as met
// or MISSED: traced graph launch <= 2x untraced, per-node durations within
// 2 us of CUPTI's (starts are printed too; they share the offset between a
// launch's first stamp and its first kernel's start). The sampled figures
// are reported as rows of their own beside the target (every launch
// traced), which they do not replace.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#if BENCH_HAVE_CUPTI
#include <cupti.h>
#endif

#include "bench_check.h"
#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

extern "C" sg_status sg__cuda_graph_of(const sg_exec *exec, cudaGraphExec_t *graph_exec,
                                       const cudaGraphNode_t **nodes);
extern "C" int sg__cuda_trace_stamped(const sg_exec *exec);

namespace {

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
using Timed = std::function<double(int)>;  // microseconds for `reps` iterations, waited for

// Warm-up once each, then kSamples rounds, rotating which case goes first.
std::vector<double> compare_all(int reps, const std::vector<Timed> &fns) {
  for (const Timed &f : fns) f(reps);
  std::vector<std::vector<double>> t(fns.size());
  for (int s = 0; s < kSamples; s++)
    for (size_t k = 0; k < fns.size(); k++) {
      size_t i = (k + size_t(s)) % fns.size();
      t[i].push_back(fns[i](reps));
    }
  std::vector<double> m;
  for (const auto &v : t) m.push_back(median(v) / reps);
  return m;
}

// join, 8 wide, join, 8 wide, ...: n nodes.
sg_graph *diamonds(uint32_t n, std::vector<sg_node> *nodes) {
  sg_graph *g = nullptr;
  SGK(sg_graph_create(&g));
  SGK(sg_graph_set_name(g, "diamonds"));
  sg_kernel_call k;
  sg_kernels_empty(&k);
  k.desc.flags = 0; /* traced graphs never use programmatic edges: compare like with like */
  nodes->assign(n, sg_node{});
  uint32_t join = 0;
  std::vector<uint32_t> layer;
  for (uint32_t i = 0; i < n; i++) {
    std::vector<sg_node> deps;
    if (i > 0 && layer.size() == 8) {
      for (uint32_t v : layer) deps.push_back((*nodes)[v]);
      layer.clear();
      join = i;
    } else if (i > 0) {
      deps.push_back((*nodes)[join]);
      layer.push_back(i);
    }
    SGK(sg_graph_add_kernel(g, &k.desc, deps.data(), deps.size(), &(*nodes)[i]));
  }
  return g;
}

sg_exec *make_exec(sg_graph *g, sg_exec_mode mode, int trace, bool events = false,
                   unsigned every = 0) {
  if (events) setenv("SG_TRACE_GRAPH_EVENTS", "1", 1);
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = mode;
  o.trace = trace;
  o.trace_every = every;
  sg_exec *e = nullptr;
  SGK(sg_exec_create(g, &o, &e));
  if (events) unsetenv("SG_TRACE_GRAPH_EVENTS");
  return e;
}

// Per node (by node index): mean duration and mean start from the launch's
// earliest node start, in us, over the kept launches of a traced executable.
struct NodeTimes {
  std::vector<double> dur, start;
  size_t launches = 0;
};

NodeTimes traced_times(sg_exec *e, uint32_t n, int launches) {
  NodeTimes t;
  t.dur.assign(n, 0);
  t.start.assign(n, 0);
  for (int l = 0; l < launches; l++) SGK(sg_exec_launch(e, nullptr));
  SGK(sg_exec_wait(e));
  std::vector<sg_trace_record> rec(n);
  size_t count = 0;
  SGK(sg_exec_get_trace(e, rec.data(), n, &count));
  const uint64_t last = count ? rec[0].launch : 0;
  for (uint64_t l = last >= uint64_t(launches) ? last - launches + 1 : 1; l <= last; l++) {
    if (sg_exec_get_launch_trace(e, l, rec.data(), n, &count) != SG_OK || count != n) continue;
    uint64_t first = UINT64_MAX;
    for (const sg_trace_record &r : rec) first = std::min(first, r.start_ns);
    for (const sg_trace_record &r : rec) {
      uint32_t v = sg_node_index(r.node);
      t.dur[v] += (r.end_ns - r.start_ns) / 1e3;
      t.start[v] += (r.start_ns - first) / 1e3;
    }
    t.launches++;
  }
  for (uint32_t v = 0; v < n && t.launches; v++) t.dur[v] /= t.launches, t.start[v] /= t.launches;
  return t;
}

Timed throughput(sg_exec *e) {
  return [e](int reps) {
    double t0 = now_us();
    for (int i = 0; i < reps; i++) SGK(sg_exec_launch(e, nullptr));
    SGK(sg_exec_wait(e));
    return now_us() - t0;
  };
}

Timed latency(sg_exec *e) {
  return [e](int reps) {
    double t0 = now_us();
    for (int i = 0; i < reps; i++) {
      SGK(sg_exec_launch(e, nullptr));
      SGK(sg_exec_wait(e));
    }
    return now_us() - t0;
  };
}

struct Raw {
  cudaGraphExec_t ge = nullptr;
  cudaStream_t stream = nullptr;
  explicit Raw(sg_exec *untraced) {
    const cudaGraphNode_t *nodes = nullptr;
    SGK(sg__cuda_graph_of(untraced, &ge, &nodes));
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~Raw() { cudaStreamDestroy(stream); }
  Timed throughput() {
    return [this](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) CK(cudaGraphLaunch(ge, stream));
      CK(cudaStreamSynchronize(stream));
      return now_us() - t0;
    };
  }
  Timed latency() {
    return [this](int reps) {
      double t0 = now_us();
      for (int i = 0; i < reps; i++) {
        CK(cudaGraphLaunch(ge, stream));
        CK(cudaStreamSynchronize(stream));
      }
      return now_us() - t0;
    };
  }
};

// Every kept launch of a traced executable has one record per node.
void check_trace(sg_exec *e, uint32_t n, const char *what) {
  std::vector<sg_trace_record> rec(n);
  size_t count = 0;
  SGK(sg_exec_get_trace(e, rec.data(), n, &count));
  if (count != n) {
    std::fprintf(stderr, "trace_bench: %s: %zu records for %u nodes\n", what, count, n);
    std::exit(3);
  }
  for (const sg_trace_record &r : rec)
    if (r.end_ns < r.start_ns) {
      std::fprintf(stderr, "trace_bench: %s: a record ends before it starts\n", what);
      std::exit(3);
    }
}

// A sampled executable (trace_every k): its latest trace is a traced
// launch (1 + a multiple of k), and the launch after it was not sampled.
void check_sampled(sg_exec *e, uint32_t n, unsigned k, const char *what) {
  check_trace(e, n, what);
  std::vector<sg_trace_record> rec(n);
  size_t count = 0;
  SGK(sg_exec_get_trace(e, rec.data(), n, &count));
  sg_exec_stats st;
  SGK(sg_exec_get_stats(e, &st));
  const uint64_t latest = rec[0].launch;
  const bool not_sampled_refused =
      latest == st.launches ||
      sg_exec_get_launch_trace(e, latest + 1, rec.data(), n, &count) == SG_ERR_INVALID_ARGUMENT;
  if ((latest - 1) % k != 0 || latest + k <= st.launches || !not_sampled_refused) {
    std::fprintf(stderr,
                 "trace_bench: %s: latest trace is launch %llu of %llu, not every %u-th\n",
                 what, (unsigned long long)latest, (unsigned long long)st.launches, k);
    std::exit(3);
  }
}

#if BENCH_HAVE_CUPTI
#define CUPTI_CK(x)                                                               \
  do {                                                                            \
    CUptiResult r_ = (x);                                                         \
    if (r_ != CUPTI_SUCCESS) {                                                    \
      const char *s_ = nullptr;                                                   \
      cuptiGetResultString(r_, &s_);                                              \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)

std::atomic<uint64_t> cupti_kernels{0}, cupti_graph_kernels{0}, cupti_dropped{0};

// Kernel records kept while `cupti_keep` is set: what the per-node
// comparison reads.
struct KernelRecord {
  uint32_t correlation;
  uint64_t node_id, start, end;
};
std::mutex cupti_lock;
bool cupti_keep = false;
std::vector<KernelRecord> cupti_records;

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 32u << 20;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t,
                               size_t valid) {
  CUpti_Activity *record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      cupti_kernels++;
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(record);
      if (k->graphNodeId) cupti_graph_kernels++;
      std::lock_guard<std::mutex> hold(cupti_lock);
      if (cupti_keep)
        cupti_records.push_back({k->correlationId, k->graphNodeId, k->start, k->end});
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
    cupti_dropped += dropped;
  std::free(buffer);
}

const CUpti_ActivityKind kCuptiKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                          CUPTI_ACTIVITY_KIND_MEMCPY,
                                          CUPTI_ACTIVITY_KIND_MEMSET};

void cupti_on() {
  for (CUpti_ActivityKind k : kCuptiKinds) CUPTI_CK(cuptiActivityEnable(k));
}
void cupti_off() {
  CUPTI_CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  for (CUpti_ActivityKind k : kCuptiKinds) CUPTI_CK(cuptiActivityDisable(k));
}

// A case run with CUPTI's activity records on for its duration only.
Timed with_cupti(Timed f) {
  return [f](int reps) {
    cupti_on();
    double t = f(reps);
    cupti_off();
    return t;
  };
}
// CUPTI's per-node times of `launches` launches of the untraced `go`, laid
// out as traced_times does; *by_id says whether nodes were matched by graph
// node id (else by rank in start order, launch by launch).
NodeTimes cupti_times(sg_exec *go, uint32_t n, int launches, bool *by_id) {
  NodeTimes t;
  t.dur.assign(n, 0);
  t.start.assign(n, 0);
  cudaGraphExec_t ge = nullptr;
  const cudaGraphNode_t *nodes = nullptr;
  SGK(sg__cuda_graph_of(go, &ge, &nodes));
  std::map<uint64_t, uint32_t> node_of;
  for (uint32_t v = 0; v < n; v++) {
    uint64_t id = 0;
    if (cuptiGetGraphNodeId(reinterpret_cast<CUgraphNode>(nodes[v]), &id) == CUPTI_SUCCESS)
      node_of[id] = v;
  }
  {
    std::lock_guard<std::mutex> hold(cupti_lock);
    cupti_records.clear();
    cupti_keep = true;
  }
  cupti_on();
  for (int l = 0; l < launches; l++) SGK(sg_exec_launch(go, nullptr));
  SGK(sg_exec_wait(go));
  cupti_off();
  std::map<uint32_t, std::vector<KernelRecord>> by_launch;
  size_t matched = 0, total = 0;
  {
    std::lock_guard<std::mutex> hold(cupti_lock);
    cupti_keep = false;
    for (const KernelRecord &r : cupti_records) {
      by_launch[r.correlation].push_back(r);
      total++;
      matched += node_of.count(r.node_id);
    }
  }
  *by_id = total && matched == total;
  for (auto &kv : by_launch) {
    std::vector<KernelRecord> &rec = kv.second;
    if (rec.size() != n) continue;  // a launch cut at the flush
    std::sort(rec.begin(), rec.end(),
              [](const KernelRecord &a, const KernelRecord &b) { return a.start < b.start; });
    const uint64_t first = rec[0].start;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t v = *by_id ? node_of[rec[k].node_id] : k;
      t.dur[v] += (rec[k].end - rec[k].start) / 1e3;
      t.start[v] += (rec[k].start - first) / 1e3;
    }
    t.launches++;
  }
  for (uint32_t v = 0; v < n && t.launches; v++) t.dur[v] /= t.launches, t.start[v] /= t.launches;
  return t;
}

// Our times laid out by rank in start order (to compare with CUPTI's by rank).
NodeTimes by_rank(const NodeTimes &t) {
  std::vector<uint32_t> idx(t.dur.size());
  for (uint32_t i = 0; i < idx.size(); i++) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return t.start[a] < t.start[b]; });
  NodeTimes r = t;
  for (uint32_t k = 0; k < idx.size(); k++) r.dur[k] = t.dur[idx[k]], r.start[k] = t.start[idx[k]];
  return r;
}
#endif

struct Row {
  uint32_t nodes;
  double streams_off, streams_on, graph_off, graph_on, raw;            // per launch
  double streams_off_lat, streams_on_lat, graph_off_lat, graph_on_lat, raw_lat;  // latency
  double cupti_loaded_off = 0, cupti_on = 0, cupti_loaded_off_lat = 0, cupti_on_lat = 0;
  double cupti_records_per_launch = 0;
  double graph_events = 0, graph_events_lat = 0;  // the fallback: event-record nodes
  // Sampled tracing (trace_every k), per launch: graph mode k = 4 and 8,
  // streams mode k = 8.
  double graph_on_k4 = 0, graph_on_k8 = 0, streams_on_k8 = 0;
  // The stamped trace against CUPTI, per node (us): the largest difference
  // of mean durations and of mean starts; how nodes were matched.
  double max_dur_diff_us = -1, max_start_diff_us = -1;
  double mean_dur_stamps_us = 0, mean_dur_cupti_us = 0;
  // Where the largest duration difference is (the node's place in the
  // matching) and the median difference: one outlier or every node.
  uint32_t worst_node = 0;
  double worst_dur_stamps_us = 0, worst_dur_cupti_us = 0, worst_start_stamps_us = 0,
         worst_start_cupti_us = 0, median_dur_diff_us = -1;
  const char *matched_by = "none";
};

void write_json(const char *path, const std::vector<Row> &rows, const char *device, int driver,
                int runtime, bool cupti) {
  FILE *f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "trace_bench: cannot write %s\n", path);
    return;
  }
  std::time_t t = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  std::fprintf(f, "{\n  \"benchmark\": \"trace_bench\",\n  \"date\": \"%s\",\n", date);
  std::fprintf(f, "  \"device\": \"%s\",\n  \"driver_version\": %d,\n  \"runtime_version\": %d,\n",
               device, driver, runtime);
  std::fprintf(f, "  \"samples\": %d,\n  \"cupti\": %s,\n  \"rows\": [\n", kSamples,
               cupti ? "true" : "false");
  for (size_t i = 0; i < rows.size(); i++) {
    const Row &r = rows[i];
    std::fprintf(f,
                 "    {\"nodes\": %u, \"per_launch_us\": {\"streams_off\": %.3f, \"streams_on\": "
                 "%.3f, \"graph_off\": %.3f, \"graph_on\": %.3f, \"raw_graph\": %.3f, "
                 "\"cupti_loaded_off\": %.3f, \"cupti_on\": %.3f},\n"
                 "     \"latency_us\": {\"streams_off\": %.3f, \"streams_on\": %.3f, "
                 "\"graph_off\": %.3f, \"graph_on\": %.3f, \"raw_graph\": %.3f, "
                 "\"cupti_loaded_off\": %.3f, \"cupti_on\": %.3f},\n"
                 "     \"cupti_kernel_records_per_launch\": %.2f,\n"
                 "     \"graph_events_per_launch_us\": %.3f, \"graph_events_latency_us\": %.3f,\n"
                 "     \"graph_on_ratio\": %.3f, \"graph_on_latency_ratio\": %.3f, "
                 "\"graph_events_ratio\": %.3f,\n"
                 "     \"sampled_per_launch_us\": {\"graph_every_4\": %.3f, "
                 "\"graph_every_8\": %.3f, \"streams_every_8\": %.3f},\n"
                 "     \"sampled_ratio\": {\"graph_every_4\": %.3f, \"graph_every_8\": %.3f, "
                 "\"streams_every_8\": %.3f},\n"
                 "     \"stamps_vs_cupti\": {\"max_duration_diff_us\": %.3f, "
                 "\"max_start_diff_us\": %.3f, \"mean_duration_stamps_us\": %.3f, "
                 "\"mean_duration_cupti_us\": %.3f, \"median_duration_diff_us\": %.3f, "
                 "\"worst_node\": {\"place\": %u, \"duration_stamps_us\": %.3f, "
                 "\"duration_cupti_us\": %.3f, \"start_stamps_us\": %.3f, "
                 "\"start_cupti_us\": %.3f}, \"matched_by\": \"%s\"}}%s\n",
                 r.nodes, r.streams_off, r.streams_on, r.graph_off, r.graph_on, r.raw,
                 r.cupti_loaded_off, r.cupti_on, r.streams_off_lat, r.streams_on_lat,
                 r.graph_off_lat, r.graph_on_lat, r.raw_lat, r.cupti_loaded_off_lat,
                 r.cupti_on_lat, r.cupti_records_per_launch, r.graph_events, r.graph_events_lat,
                 r.graph_on / r.graph_off, r.graph_on_lat / r.graph_off_lat,
                 r.graph_events / r.graph_off, r.graph_on_k4, r.graph_on_k8, r.streams_on_k8,
                 r.graph_on_k4 / r.graph_off, r.graph_on_k8 / r.graph_off,
                 r.streams_on_k8 / r.streams_off, r.max_dur_diff_us, r.max_start_diff_us,
                 r.mean_dur_stamps_us, r.mean_dur_cupti_us, r.median_dur_diff_us, r.worst_node,
                 r.worst_dur_stamps_us, r.worst_dur_cupti_us, r.worst_start_stamps_us,
                 r.worst_start_cupti_us, r.matched_by, i + 1 < rows.size() ? "," : "");
  }
  // The issue's targets for the stamped trace, per row: met or MISSED (or
  // "not measured" without CUPTI).
  std::fprintf(f, "  ],\n  \"targets\": [\n");
  for (size_t i = 0; i < rows.size(); i++) {
    const Row &r = rows[i];
    const double ratio = r.graph_on / r.graph_off;
    std::fprintf(f,
                 "    {\"what\": \"traced graph launch, %u nodes, per launch\", \"value\": %.3f, "
                 "\"target\": \"<= 2x untraced\", \"status\": \"%s\"},\n",
                 r.nodes, ratio, ratio <= 2.0 ? "met" : "MISSED");
    // Sampling: reported beside the target, never in its place.
    std::fprintf(f,
                 "    {\"what\": \"sampled tracing (trace_every 8), graph launch, %u nodes, "
                 "mean per launch\", \"value\": %.3f, \"target\": \"reported\", "
                 "\"status\": \"reported\"},\n",
                 r.nodes, r.graph_on_k8 / r.graph_off);
    // Durations: starts are reported beside them, but a launch's zero differs
    // (the start stamp against the first kernel's own start).
    const double diff = r.max_dur_diff_us;
    std::fprintf(f,
                 "    {\"what\": \"per-node durations against CUPTI (max difference of means), "
                 "%u nodes\", \"value\": %.3f, "
                 "\"target\": \"<= 2 us\", \"status\": \"%s\"}%s\n",
                 r.nodes, diff, diff < 0 ? "not measured" : diff <= 2.0 ? "met" : "MISSED",
                 i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : "trace_bench.json";
  if (sg_cuda_device_count() == 0) {
    std::printf("trace_bench: no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  std::printf("trace_bench on %s (driver %d, runtime %d), median of %d samples\n", prop.name,
              driver, runtime, kSamples);
  const double t_start = now_us();
  std::vector<Row> rows;
  std::vector<sg_graph *> graphs;
  std::vector<std::vector<sg_exec *>> execs;  // per row: streams off/on, graph off/on

  // Phase 1: no CUPTI in the process.
  for (uint32_t n : {16u, 64u, 256u}) {
    std::vector<sg_node> nodes;
    sg_graph *g = diamonds(n, &nodes);
    sg_exec *so = make_exec(g, SG_MODE_STREAMS, 0), *sn = make_exec(g, SG_MODE_STREAMS, 1);
    sg_exec *go = make_exec(g, SG_MODE_GRAPH, 0), *gn = make_exec(g, SG_MODE_GRAPH, 1);
    sg_exec *ge = make_exec(g, SG_MODE_GRAPH, 1, true);
    sg_exec *g4 = make_exec(g, SG_MODE_GRAPH, 1, false, 4);
    sg_exec *g8 = make_exec(g, SG_MODE_GRAPH, 1, false, 8);
    sg_exec *s8 = make_exec(g, SG_MODE_STREAMS, 1, false, 8);
    if (!sg__cuda_trace_stamped(gn) || sg__cuda_trace_stamped(ge)) {
      std::fprintf(stderr, "trace_bench: graph mode did not trace with stamps (the stamp kernel "
                           "did not load), or the fallback was not taken\n");
      std::exit(3);
    }
    Raw raw(go);
    const int reps = std::max(20, 20000 / int(n)), lat_reps = std::max(10, 2000 / int(n));
    std::vector<double> thr =
        compare_all(reps, {throughput(so), throughput(sn), throughput(go), throughput(gn),
                           raw.throughput(), throughput(ge), throughput(g4), throughput(g8),
                           throughput(s8)});
    std::vector<double> lat = compare_all(lat_reps, {latency(so), latency(sn), latency(go),
                                                     latency(gn), raw.latency(), latency(ge)});
    check_trace(sn, n, "streams mode");
    check_trace(gn, n, "graph mode");
    check_trace(ge, n, "graph mode, events");
    check_sampled(g4, n, 4, "graph mode, trace_every 4");
    check_sampled(g8, n, 8, "graph mode, trace_every 8");
    check_sampled(s8, n, 8, "streams mode, trace_every 8");
    Row r{};
    r.nodes = n;
    r.streams_off = thr[0], r.streams_on = thr[1], r.graph_off = thr[2], r.graph_on = thr[3];
    r.raw = thr[4];
    r.streams_off_lat = lat[0], r.streams_on_lat = lat[1], r.graph_off_lat = lat[2];
    r.graph_on_lat = lat[3], r.raw_lat = lat[4];
    r.graph_events = thr[5], r.graph_events_lat = lat[5];
    r.graph_on_k4 = thr[6], r.graph_on_k8 = thr[7], r.streams_on_k8 = thr[8];
    rows.push_back(r);
    graphs.push_back(g);
    execs.push_back({so, sn, go, gn, ge, g4, g8, s8});
  }

  std::printf("\nper launch, us (back-to-back launches; ratio to trace off; graph +trace: "
              "stamps, +events: the event-record fallback)\n");
  std::printf("%6s | %9s %9s %6s | %9s %9s %6s %9s %6s %9s\n", "nodes", "streams", "+trace",
              "ratio", "graph", "+trace", "ratio", "+events", "ratio", "raw graph");
  for (const Row &r : rows)
    std::printf("%6u | %9.2f %9.2f %6.2f | %9.2f %9.2f %6.2f %9.2f %6.2f %9.2f\n", r.nodes,
                r.streams_off, r.streams_on, r.streams_on / r.streams_off, r.graph_off,
                r.graph_on, r.graph_on / r.graph_off, r.graph_events, r.graph_events / r.graph_off,
                r.raw);
  std::printf("\nsampled tracing, per launch, us (back-to-back launches; trace_every k: one "
              "launch in k traced; ratio to trace off)\n");
  std::printf("%6s | %9s %9s %6s %9s %6s %9s %6s | %9s %9s %6s\n", "nodes", "graph", "+trace",
              "ratio", "every 4", "ratio", "every 8", "ratio", "streams", "every 8", "ratio");
  for (const Row &r : rows)
    std::printf("%6u | %9.2f %9.2f %6.2f %9.2f %6.2f %9.2f %6.2f | %9.2f %9.2f %6.2f\n",
                r.nodes, r.graph_off, r.graph_on, r.graph_on / r.graph_off, r.graph_on_k4,
                r.graph_on_k4 / r.graph_off, r.graph_on_k8, r.graph_on_k8 / r.graph_off,
                r.streams_off, r.streams_on_k8, r.streams_on_k8 / r.streams_off);
  std::printf("\nlatency, us (one launch and its wait)\n");
  std::printf("%6s | %9s %9s %6s | %9s %9s %6s %9s %6s %9s\n", "nodes", "streams", "+trace",
              "ratio", "graph", "+trace", "ratio", "+events", "ratio", "raw graph");
  for (const Row &r : rows)
    std::printf("%6u | %9.2f %9.2f %6.2f | %9.2f %9.2f %6.2f %9.2f %6.2f %9.2f\n", r.nodes,
                r.streams_off_lat, r.streams_on_lat, r.streams_on_lat / r.streams_off_lat,
                r.graph_off_lat, r.graph_on_lat, r.graph_on_lat / r.graph_off_lat,
                r.graph_events_lat, r.graph_events_lat / r.graph_off_lat, r.raw_lat);

  bool cupti = false;
#if BENCH_HAVE_CUPTI
  // Phase 2: CUPTI loaded. Its activity records are the other way to time a
  // graph's nodes; compared with the same untraced graph, CUPTI loaded but
  // off, and with the traced graph measured again in this phase.
  cupti = true;
  CUPTI_CK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  for (size_t i = 0; i < rows.size(); i++) {
    Row &r = rows[i];
    sg_exec *go = execs[i][2], *gn = execs[i][3];
    const int reps = std::max(20, 20000 / int(r.nodes)),
              lat_reps = std::max(10, 2000 / int(r.nodes));
    std::vector<double> thr =
        compare_all(reps, {throughput(go), with_cupti(throughput(go)), throughput(gn)});
    std::vector<double> lat = compare_all(lat_reps, {latency(go), with_cupti(latency(go)),
                                                     latency(gn)});
    r.cupti_loaded_off = thr[0], r.cupti_on = thr[1], r.cupti_loaded_off_lat = lat[0];
    r.cupti_on_lat = lat[1];
    // Records: one timed run of known length.
    cupti_kernels = 0;
    const int launches = 100;
    cupti_on();
    for (int l = 0; l < launches; l++) SGK(sg_exec_launch(go, nullptr));
    SGK(sg_exec_wait(go));
    cupti_off();
    r.cupti_records_per_launch = double(cupti_kernels.load()) / launches;
    // Per node: the stamped trace against CUPTI's records.
    bool by_id = false;
    NodeTimes c = cupti_times(go, r.nodes, 64, &by_id);
    NodeTimes ours = traced_times(gn, r.nodes, 64);
    if (!by_id) ours = by_rank(ours);
    r.matched_by = by_id ? "graph node id" : "rank in start order";
    if (c.launches && ours.launches) {
      r.max_dur_diff_us = r.max_start_diff_us = 0;
      std::vector<double> diffs(r.nodes);
      for (uint32_t v = 0; v < r.nodes; v++) {
        diffs[v] = std::fabs(ours.dur[v] - c.dur[v]);
        if (diffs[v] > r.max_dur_diff_us) {
          r.max_dur_diff_us = diffs[v];
          r.worst_node = v;
          r.worst_dur_stamps_us = ours.dur[v], r.worst_dur_cupti_us = c.dur[v];
          r.worst_start_stamps_us = ours.start[v], r.worst_start_cupti_us = c.start[v];
        }
        r.max_start_diff_us = std::max(r.max_start_diff_us, std::fabs(ours.start[v] - c.start[v]));
        r.mean_dur_stamps_us += ours.dur[v] / r.nodes;
        r.mean_dur_cupti_us += c.dur[v] / r.nodes;
      }
      std::sort(diffs.begin(), diffs.end());
      r.median_dur_diff_us = r.nodes ? diffs[r.nodes / 2] : 0;
    }
    std::printf("[ %u nodes, CUPTI phase: traced graph %.2f us per launch, %.2f latency ]\n",
                r.nodes, thr[2], lat[2]);
  }
  std::printf("\ngraph mode with CUPTI activity records, us (ratio to CUPTI loaded, off)\n");
  std::printf("%6s | %9s %9s %6s | %9s %9s %6s | %s\n", "nodes", "loaded", "+CUPTI", "ratio",
              "lat", "+CUPTI", "ratio", "kernel records/launch (want = nodes)");
  for (const Row &r : rows)
    std::printf("%6u | %9.2f %9.2f %6.2f | %9.2f %9.2f %6.2f | %.2f%s\n", r.nodes,
                r.cupti_loaded_off, r.cupti_on, r.cupti_on / r.cupti_loaded_off,
                r.cupti_loaded_off_lat, r.cupti_on_lat, r.cupti_on_lat / r.cupti_loaded_off_lat,
                r.cupti_records_per_launch,
                r.cupti_records_per_launch == r.nodes ? "" : "  (records missing or extra)");
  std::printf("\nstamped trace against CUPTI, per node (us; means over 64 launches each)\n");
  std::printf("%6s | %10s %10s %14s %15s %14s | %s\n", "nodes", "dur stamps", "dur CUPTI",
              "max |dur diff|", "max |start diff|", "med |dur diff|", "matched by");
  for (const Row &r : rows)
    std::printf("%6u | %10.2f %10.2f %14.2f %15.2f %14.2f | %s\n", r.nodes, r.mean_dur_stamps_us,
                r.mean_dur_cupti_us, r.max_dur_diff_us, r.max_start_diff_us,
                r.median_dur_diff_us, r.matched_by);
  std::printf("the node with the largest duration difference (its place in the matching): "
              "duration and start, stamps / CUPTI (us)\n");
  for (const Row &r : rows)
    std::printf("%6u | node %u: duration %.2f / %.2f, start %.2f / %.2f\n", r.nodes,
                r.worst_node, r.worst_dur_stamps_us, r.worst_dur_cupti_us,
                r.worst_start_stamps_us, r.worst_start_cupti_us);
  std::printf("CUPTI: %llu kernel records from graph launches, %llu dropped\n",
              (unsigned long long)cupti_graph_kernels.load(),
              (unsigned long long)cupti_dropped.load());
#else
  std::printf("\n(CUPTI not found at build time: no CUPTI rows)\n");
#endif

  for (auto &row : execs)
    for (sg_exec *e : row) SGK(sg_exec_destroy(e));
  for (sg_graph *g : graphs) SGK(sg_graph_destroy(g));
  std::printf("\ntargets (graph mode, stamps):\n");
  for (const Row &r : rows) {
    const double ratio = r.graph_on / r.graph_off;
    std::printf("  %3u nodes: traced/untraced %.2fx (<= 2x: %s); per-node durations vs CUPTI "
                "%.2f us (<= 2 us: %s)\n",
                r.nodes, ratio, ratio <= 2.0 ? "met" : "MISSED", r.max_dur_diff_us,
                r.max_dur_diff_us < 0 ? "not measured"
                : r.max_dur_diff_us <= 2.0 ? "met" : "MISSED");
  }
  std::printf("sampled tracing (reported beside the target, not in its place):\n");
  for (const Row &r : rows)
    std::printf("  %3u nodes: trace_every 8 %.2fx, trace_every 4 %.2fx per launch (graph); "
                "streams trace_every 8 %.2fx\n",
                r.nodes, r.graph_on_k8 / r.graph_off, r.graph_on_k4 / r.graph_off,
                r.streams_on_k8 / r.streams_off);
  std::printf("\ntotal %.1f s; JSON: %s\n", (now_us() - t_start) / 1e6, json);
  write_json(json, rows, prop.name, driver, runtime, cupti);
  return 0;
}
