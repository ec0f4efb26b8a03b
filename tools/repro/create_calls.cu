// Where the time of sg_exec_create (graph mode, explicit build) goes, next to
// the raw build launch_bench compares it with (stream, add kernel nodes,
// instantiate, upload, wait): for a chain of N empty-kernel nodes,
//   1. the first creation in the process and the first raw build (cold);
//   2. medians of interleaved samples without any profiler attached;
//   3. with a CUPTI runtime-API callback: every CUDA runtime call each side
//      makes, its count per creation and its time, so a gap between the two
//      can be named call by call.
//
//   nvcc -std=c++17 -arch=sm_90 -O2 -Iinclude -Ibuild/gpu/include tools/repro/create_calls.cu \
//        -Lbuild/gpu/src -lstreamgraph -lcupti -cudart shared -o /tmp/create_calls
//   LD_LIBRARY_PATH=build/gpu/src /tmp/create_calls [N] [SAMPLES]
#include <cuda_runtime.h>
#include <cupti.h>
#include <streamgraph/streamgraph.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)
#define SGK(x)                                                                   \
  do {                                                                           \
    sg_status s_ = (x);                                                          \
    if (s_ != SG_OK) {                                                           \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, sg_last_error());  \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)
#define CUPTI(x)                                                         \
  do {                                                                   \
    CUptiResult r_ = (x);                                                \
    if (r_ != CUPTI_SUCCESS) {                                           \
      const char *m_ = "?";                                              \
      cuptiGetResultString(r_, &m_);                                     \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, m_);       \
      std::exit(2);                                                      \
    }                                                                    \
  } while (0)

namespace {

__global__ void empty_kernel() {}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- the runtime calls, counted and timed by CUPTI -----------------------------

struct CallStat {
  long count = 0;
  double us = 0;
};
struct Recorder {
  bool wanted = false; // set by record(); `on` only while a creation is timed
  bool on = false;
  std::map<std::string, CallStat> calls;
  std::map<uint32_t, double> started; // by correlation id
};
Recorder recorder;

// ---- the two sides ------------------------------------------------------------

sg_graph *lib_chain(int n) {
  sg_graph *g = nullptr;
  SGK(sg_graph_create(&g));
  sg_kernel_desc k = {};
  k.func = reinterpret_cast<const void *>(empty_kernel);
  k.grid = {1, 1, 1};
  k.block = {1, 1, 1};
  sg_node prev = {}, node = {};
  for (int i = 0; i < n; i++) {
    SGK(sg_graph_add_kernel(g, &k, i ? &prev : nullptr, i ? 1 : 0, &node));
    prev = node;
  }
  return g;
}

double lib_create(const sg_graph *g) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = SG_MODE_GRAPH;
  o.build = SG_BUILD_EXPLICIT;
  sg_exec *x = nullptr;
  recorder.on = recorder.wanted;
  double t0 = now_us();
  SGK(sg_exec_create(g, &o, &x));
  double us = now_us() - t0;
  recorder.on = false;
  SGK(sg_exec_destroy(x));
  return us;
}

double raw_build(int n) {
  recorder.on = recorder.wanted;
  double t0 = now_us();
  cudaStream_t stream;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudaGraphCreate(&graph, 0));
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void *>(empty_kernel);
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  cudaGraphNode_t prev = nullptr, node = nullptr;
  for (int i = 0; i < n; i++) {
    CK(cudaGraphAddKernelNode(&node, graph, i ? &prev : nullptr, i ? 1 : 0, &p));
    prev = node;
  }
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphUpload(exec, stream));
  CK(cudaStreamSynchronize(stream));
  double us = now_us() - t0;
  recorder.on = false;
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(stream));
  return us;
}

void CUPTIAPI on_runtime_call(void *, CUpti_CallbackDomain domain, CUpti_CallbackId,
                              const void *data) {
  if (!recorder.on || domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const CUpti_CallbackData *cb = static_cast<const CUpti_CallbackData *>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    recorder.started[cb->correlationId] = now_us();
  } else {
    auto it = recorder.started.find(cb->correlationId);
    if (it == recorder.started.end()) return;
    CallStat &s = recorder.calls[cb->functionName];
    s.count++;
    s.us += now_us() - it->second;
    recorder.started.erase(it);
  }
}

// Runs `side` `reps` times with the recorder on; prints each call's count and
// time per repetition, and returns the total time per repetition in calls.
template <class F>
double record(const char *title, int reps, F side) {
  recorder.calls.clear();
  recorder.wanted = true;
  double total = 0;
  for (int i = 0; i < reps; i++) total += side();
  recorder.wanted = false;
  std::printf("\n%s: %.1f us per creation with the callback on; runtime calls per creation:\n",
              title, total / reps);
  std::printf("  %-44s %8s %10s\n", "call", "count", "us");
  double in_calls = 0;
  std::vector<std::pair<std::string, CallStat>> rows(recorder.calls.begin(), recorder.calls.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto &a, const auto &b) { return a.second.us > b.second.us; });
  for (auto &r : rows) {
    std::printf("  %-44s %8.2f %10.2f\n", r.first.c_str(), double(r.second.count) / reps,
                r.second.us / reps);
    in_calls += r.second.us / reps;
  }
  std::printf("  %-44s %8s %10.2f\n", "(in runtime calls)", "", in_calls);
  return in_calls;
}

} // namespace

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10;
  const int samples = argc > 2 ? std::atoi(argv[2]) : 201;
  if (n < 1 || samples < 1) {
    std::printf("usage: create_calls [NODES >= 1] [SAMPLES >= 1]\n");
    return 2;
  }
  CK(cudaFree(nullptr));
  sg_graph *g = lib_chain(n);
  std::printf("chain of %d empty-kernel nodes, graph mode, explicit build\n", n);
  double cold_lib = lib_create(g);
  double cold_raw = raw_build(n);
  std::printf("first in process: sg_exec_create %.1f us, raw build %.1f us\n", cold_lib, cold_raw);

  std::vector<double> a, b;
  for (int i = 0; i < samples; i++) {
    if (i % 2) {
      a.push_back(lib_create(g));
      b.push_back(raw_build(n));
    } else {
      b.push_back(raw_build(n));
      a.push_back(lib_create(g));
    }
  }
  double ours = median(a), raw = median(b);
  std::printf("medians of %d interleaved: sg_exec_create %.1f us, raw build %.1f us, ratio %.3f\n",
              samples, ours, raw, ours / raw);

  CUpti_SubscriberHandle sub;
  CUPTI(cuptiSubscribe(&sub, on_runtime_call, nullptr));
  CUPTI(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
  const int reps = std::min(samples, 50);
  double lib_calls = record("sg_exec_create", reps, [&] { return lib_create(g); });
  double raw_calls = record("raw build", reps, [&] { return raw_build(n); });
  CUPTI(cuptiUnsubscribe(sub));
  // Only the two sides' call totals are compared: the callback itself slows
  // every call, so they cannot be subtracted from the untimed medians.
  std::printf("\nin runtime calls, with the callback: ours %.1f us, raw %.1f us\n", lib_calls,
              raw_calls);
  SGK(sg_graph_destroy(g));
  return 0;
}
