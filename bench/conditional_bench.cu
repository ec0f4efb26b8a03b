// conditional_bench: what deciding on the device buys, side by side in one
// run (H200 targets from the issue that asked for conditional nodes).
//
//   WHILE, K = 1000 iterations, body of B = 1..4 small kernels in a chain,
//   the last one counting down and setting the stop flag on the device:
//     sg graph      one sg_exec_launch of a WHILE node (graph mode)
//     sg streams    the same executable in streams mode (the host reads the
//                   condition after every iteration: one sync each)
//     host loop     an executable of the body alone (streams mode), launched,
//                   waited and its flag read K times
//     graph/iter    a hand-built cudaGraph of the body, cudaGraphLaunch +
//                   cudaStreamSynchronize + read the flag, K times
//     hand cond     a hand-written CUDA graph with a WHILE conditional node
//                   and the same kernels (raw CUDA calls)
//   Targets: sg graph >= 5x faster than the faster host loop (host loop,
//   graph/iter); sg graph <= 1.05x hand cond.
//
//   IF / SWITCH overhead per launch: a chain of 8 small kernels launched in
//   graph mode, with the middle kernel inside an IF node (condition 1) or
//   the body 1 of a 4-way SWITCH (condition 1), against the same chain
//   without the conditional node. Target: <= 2 us more per launch.
//
//   The same chains written by hand with raw CUDA calls (a graph of 8
//   kernels; the same with the middle one in a CUDA IF / SWITCH node): the
//   physical cost of a conditional node, next to ours.
//
//   Batches of 1..256 rows in random order (two layers over rows of 256
//   features, an admit kernel reading the batch header before them):
//     one exec      one executable whose layers take their grid from the
//                   device (sg_graph_kernel_bind_grid, bound 256 rows)
//     exact graph   an executable instantiated for each exact size up front
//                   (instantiation excluded), launched per batch
//     capture/size  raw CUDA stream capture + instantiation whenever a size
//                   comes first, cached (instantiation included)
//   Targets: one exec per batch <= 1.05x the exact graph; 0 rebuilds; over
//   the first 256 batches (its one sg_exec_create included) >= 10x faster
//   than capture/size. Every approach's output is checked against a CPU
//   reference (rows past the batch must stay untouched).
//
// Each figure is the median of 15 samples after a warm-up. Prints a table;
// writes JSON with a targets list to argv[1] (default conditional_bench.json).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_check.h"
#include "streamgraph/cond_device.h"
#include "streamgraph/grid_device.h"
#include "streamgraph/streamgraph.h"

namespace {

__global__ void bump(unsigned *x, unsigned salt) {
  x[threadIdx.x] = x[threadIdx.x] * 1664525u + salt;
}

// state[0]: iterations left. Sets the condition (or, with flag, the flag
// word a host loop reads) to state[0] != 0.
__global__ void count_down(unsigned *state, sg_cond_ref more) {
  if (threadIdx.x == 0) {
    state[0]--;
    sg_cond_set(more, state[0] != 0);
  }
}

__global__ void count_down_flag(unsigned *state, unsigned *flag) {
  if (threadIdx.x == 0) {
    state[0]--;
    *(volatile unsigned *)flag = state[0] != 0;
  }
}

__global__ void set_state(unsigned *state, unsigned k, sg_cond_ref more) {
  if (threadIdx.x == 0) {
    state[0] = k;
    sg_cond_set(more, k != 0);
  }
}

// ---- batches of 1..256 rows --------------------------------------------------

constexpr unsigned kFeatures = 256, kMaxRows = 256;

__host__ __device__ unsigned batch_mix(unsigned a, unsigned b, unsigned salt) {
  unsigned x = a * 0x9e3779b1u ^ (b + salt + (a << 6) + (a >> 2));
  x ^= x >> 15;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

// The header (pinned host memory) holds the batch's row count.
__global__ void batch_admit(const unsigned *header, unsigned *grid) {
  if (threadIdx.x == 0) {
    const unsigned rows = *(const volatile unsigned *)header;
    grid[0] = rows < kMaxRows ? rows : kMaxRows;
    grid[1] = 1;
    grid[2] = 1;
  }
}

// One block per row, one thread per feature.
__global__ void batch_layer(const unsigned *x, unsigned *y, const unsigned *w, unsigned shift,
                            sg_grid_ref g) {
  if (!sg_grid_has_block(g, blockIdx.x, blockIdx.y, blockIdx.z)) return;
  const unsigned *row = x + (size_t)blockIdx.x * kFeatures;
  const unsigned c = threadIdx.x;
  y[(size_t)blockIdx.x * kFeatures + c] = batch_mix(row[c], row[(c * shift + 1) % kFeatures], w[c]);
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename F>
double median_us(F f, int samples = 15) {
  f(); // warm-up
  std::vector<double> t;
  for (int i = 0; i < samples; i++) {
    double a = now_us();
    f();
    t.push_back(now_us() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Kern {
  const void *func;
  std::vector<void *> args;
  std::vector<size_t> sizes;
  const char *name;
};

sg_status add_kernel(sg_graph *g, const void *func, void **args, size_t *sizes, unsigned n,
                     const sg_node *deps, size_t nd, sg_node *out, const char *name) {
  sg_kernel_desc k = {};
  k.func = func;
  k.grid = {1, 1, 1};
  k.block = {32, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = n;
  k.name = name;
  return sg_graph_add_kernel(g, &k, deps, nd, out);
}

sg_exec_options opts(sg_exec_mode mode) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = mode;
  o.build = SG_BUILD_EXPLICIT;
  return o;
}

// Fills `g` with B-1 bump kernels then count_down, in a chain.
void fill_body(sg_graph *g, unsigned *data, unsigned *state, sg_cond c, int B) {
  sg_node prev = {0};
  for (int i = 0; i < B - 1; i++) {
    unsigned salt = 17u + i;
    void *a[2] = {&data, &salt};
    size_t s[2] = {sizeof data, sizeof salt};
    sg_node n;
    SGK(add_kernel(g, (const void *)bump, a, s, 2, prev.opaque ? &prev : nullptr,
                   prev.opaque ? 1 : 0, &n, "bump"));
    prev = n;
  }
  sg_cond_ref ph = {0, nullptr};
  void *a[2] = {&state, &ph};
  size_t s[2] = {sizeof state, sizeof ph};
  sg_node n;
  SGK(add_kernel(g, (const void *)count_down, a, s, 2, prev.opaque ? &prev : nullptr,
                 prev.opaque ? 1 : 0, &n, "count_down"));
  SGK(sg_graph_kernel_bind_cond(g, n, 1, c));
}

struct WhileRow {
  int B;
  double sg_graph, sg_streams, host_loop, graph_iter, hand_cond;
};

WhileRow while_row(int B, unsigned K, unsigned *data, unsigned *state, unsigned *flag,
                   cudaStream_t stream) {
  WhileRow r = {B, 0, 0, 0, 0, 0};
  // streamgraph: set_state, then WHILE { body }.
  sg_graph *g;
  SGK(sg_graph_create(&g));
  sg_cond c;
  SGK(sg_graph_cond_create(g, 0, SG_COND_ASSIGN_DEFAULT, &c));
  sg_cond_ref ph = {0, nullptr};
  void *a[3] = {&state, &K, &ph};
  size_t s[3] = {sizeof state, sizeof K, sizeof ph};
  sg_node init, loop;
  SGK(add_kernel(g, (const void *)set_state, a, s, 3, nullptr, 0, &init, "init"));
  SGK(sg_graph_kernel_bind_cond(g, init, 2, c));
  sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
  sg_graph *body;
  SGK(sg_graph_add_conditional(g, &d, &init, 1, &loop, &body));
  fill_body(body, data, state, c, B);
  for (int m = 0; m < 2; m++) {
    sg_exec_options o = opts(m ? SG_MODE_STREAMS : SG_MODE_GRAPH);
    sg_exec *e;
    SGK(sg_exec_create(g, &o, &e));
    double t = median_us([&] {
      SGK(sg_exec_launch(e, nullptr));
      SGK(sg_exec_wait(e));
    }, m ? 5 : 15);
    unsigned left = 1;
    CK(cudaMemcpy(&left, state, sizeof left, cudaMemcpyDeviceToHost));
    if (left != 0) std::fprintf(stderr, "WHILE did not run to the end (%u left)\n", left);
    (m ? r.sg_streams : r.sg_graph) = t;
    SGK(sg_exec_destroy(e));
  }
  SGK(sg_graph_destroy(g));

  // Host loop: the body alone as an executable (streams mode), its flag
  // written to pinned memory.
  {
    sg_graph *hb;
    SGK(sg_graph_create(&hb));
    sg_node prev = {0};
    for (int i = 0; i < B - 1; i++) {
      unsigned salt = 17u + i;
      void *ba[2] = {&data, &salt};
      size_t bs[2] = {sizeof data, sizeof salt};
      sg_node n;
      SGK(add_kernel(hb, (const void *)bump, ba, bs, 2, prev.opaque ? &prev : nullptr,
                     prev.opaque ? 1 : 0, &n, "bump"));
      prev = n;
    }
    void *ca[2] = {&state, &flag};
    size_t cs[2] = {sizeof state, sizeof flag};
    SGK(add_kernel(hb, (const void *)count_down_flag, ca, cs, 2, prev.opaque ? &prev : nullptr,
                   prev.opaque ? 1 : 0, nullptr, "count_down"));
    sg_exec_options o = opts(SG_MODE_STREAMS);
    sg_exec *e;
    SGK(sg_exec_create(hb, &o, &e));
    r.host_loop = median_us([&] {
      CK(cudaMemcpy(state, &K, sizeof K, cudaMemcpyHostToDevice));
      CK(cudaStreamSynchronize(cudaStreamLegacy));  // landed before the non-blocking streams read it
      unsigned more = K != 0;
      while (more) {
        SGK(sg_exec_launch(e, nullptr));
        SGK(sg_exec_wait(e));
        more = *(volatile unsigned *)flag;
      }
    }, 5);
    SGK(sg_exec_destroy(e));
    SGK(sg_graph_destroy(hb));
  }

  // A hand-built graph of the body per iteration, and a hand-written CUDA
  // WHILE graph.
  {
    cudaGraph_t body_graph;
    CK(cudaGraphCreate(&body_graph, 0));
    cudaGraphNode_t prev = nullptr;
    unsigned salts[4] = {17, 18, 19, 20};
    for (int i = 0; i < B - 1; i++) {
      void *ba[2] = {&data, &salts[i]};
      cudaKernelNodeParams p = {};
      p.func = (void *)bump;
      p.gridDim = dim3(1);
      p.blockDim = dim3(32);
      p.kernelParams = ba;
      cudaGraphNode_t n;
      CK(cudaGraphAddKernelNode(&n, body_graph, prev ? &prev : nullptr, prev ? 1 : 0, &p));
      prev = n;
    }
    void *ca[2] = {&state, &flag};
    cudaKernelNodeParams p = {};
    p.func = (void *)count_down_flag;
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = ca;
    cudaGraphNode_t n;
    CK(cudaGraphAddKernelNode(&n, body_graph, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, body_graph, 0));
    r.graph_iter = median_us([&] {
      CK(cudaMemcpy(state, &K, sizeof K, cudaMemcpyHostToDevice));
      CK(cudaStreamSynchronize(cudaStreamLegacy));  // landed before the non-blocking streams read it
      unsigned more = K != 0;
      while (more) {
        CK(cudaGraphLaunch(ge, stream));
        CK(cudaStreamSynchronize(stream));
        more = *(volatile unsigned *)flag;
      }
    }, 5);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(body_graph));

    cudaGraph_t cg;
    CK(cudaGraphCreate(&cg, 0));
    cudaGraphConditionalHandle h;
    CK(cudaGraphConditionalHandleCreate(&h, cg, 0, cudaGraphCondAssignDefault));
    sg_cond_ref ref = {(unsigned long long)h, nullptr};
    void *ia[3] = {&state, &K, &ref};
    cudaKernelNodeParams ip = {};
    ip.func = (void *)set_state;
    ip.gridDim = dim3(1);
    ip.blockDim = dim3(32);
    ip.kernelParams = ia;
    cudaGraphNode_t in;
    CK(cudaGraphAddKernelNode(&in, cg, nullptr, 0, &ip));
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    cudaGraphNode_t wn;
#if CUDART_VERSION >= 13000
    CK(cudaGraphAddNode(&wn, cg, &in, nullptr, 1, &cp));
#else
    CK(cudaGraphAddNode(&wn, cg, &in, 1, &cp));
#endif
    cudaGraph_t wb = cp.conditional.phGraph_out[0];
    cudaGraphNode_t bprev = nullptr;
    for (int i = 0; i < B - 1; i++) {
      void *ba[2] = {&data, &salts[i]};
      cudaKernelNodeParams bp = {};
      bp.func = (void *)bump;
      bp.gridDim = dim3(1);
      bp.blockDim = dim3(32);
      bp.kernelParams = ba;
      cudaGraphNode_t bn;
      CK(cudaGraphAddKernelNode(&bn, wb, bprev ? &bprev : nullptr, bprev ? 1 : 0, &bp));
      bprev = bn;
    }
    void *da[2] = {&state, &ref};
    cudaKernelNodeParams dp = {};
    dp.func = (void *)count_down;
    dp.gridDim = dim3(1);
    dp.blockDim = dim3(32);
    dp.kernelParams = da;
    cudaGraphNode_t dn;
    CK(cudaGraphAddKernelNode(&dn, wb, bprev ? &bprev : nullptr, bprev ? 1 : 0, &dp));
    cudaGraphExec_t ce;
    CK(cudaGraphInstantiate(&ce, cg, 0));
    CK(cudaGraphUpload(ce, stream));
    r.hand_cond = median_us([&] {
      CK(cudaGraphLaunch(ce, stream));
      CK(cudaStreamSynchronize(stream));
    });
    CK(cudaGraphExecDestroy(ce));
    CK(cudaGraphDestroy(cg));
  }
  return r;
}

// A chain of 8 bump kernels; kernel 4 directly, inside an IF (condition 1)
// or as body 1 of a 4-way SWITCH (condition 1). Time per launch, in us.
double chain_us(int variant, unsigned *data) {
  sg_graph *g;
  SGK(sg_graph_create(&g));
  sg_cond c;
  SGK(sg_graph_cond_create(g, 1, SG_COND_ASSIGN_DEFAULT, &c));
  sg_node prev = {0};
  for (int i = 0; i < 8; i++) {
    unsigned salt = 3u + i;
    void *a[2] = {&data, &salt};
    size_t s[2] = {sizeof data, sizeof salt};
    sg_node n;
    const sg_node *deps = prev.opaque ? &prev : nullptr;
    const size_t nd = prev.opaque ? 1 : 0;
    if (i == 4 && variant) {
      sg_cond_node_desc d = {variant == 1 ? SG_COND_IF : SG_COND_SWITCH, c,
                             variant == 1 ? 1u : 4u, "decide"};
      sg_graph *bodies[4];
      SGK(sg_graph_add_conditional(g, &d, deps, nd, &n, bodies));
      SGK(add_kernel(bodies[variant == 1 ? 0 : 1], (const void *)bump, a, s, 2, nullptr, 0,
                     nullptr, "inside"));
    } else {
      SGK(add_kernel(g, (const void *)bump, a, s, 2, deps, nd, &n, "bump"));
    }
    prev = n;
  }
  sg_exec_options o = opts(SG_MODE_GRAPH);
  sg_exec *e;
  SGK(sg_exec_create(g, &o, &e));
  const int launches = 2000;
  double t = median_us([&] {
    for (int i = 0; i < launches; i++) SGK(sg_exec_launch(e, nullptr));
    SGK(sg_exec_wait(e));
  }, 9);
  SGK(sg_exec_destroy(e));
  SGK(sg_graph_destroy(g));
  return t / launches;
}

// The same chain as chain_us, written with raw CUDA calls: 8 bump kernels,
// the middle one directly (variant 0), in an IF node (1) or as body 1 of a
// 4-way SWITCH node (2), the condition 1 by default at each launch.
double hand_chain_us(int variant, unsigned *data, cudaStream_t stream) {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h = 0;
  if (variant) CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
  unsigned salts[8];
  void *args[8][2];
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < 8; i++) {
    salts[i] = 3u + i;
    args[i][0] = &data;
    args[i][1] = &salts[i];
    cudaKernelNodeParams p = {};
    p.func = (void *)bump;
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = args[i];
    cudaGraphNode_t n;
    if (i == 4 && variant) {
      cudaGraphNodeParams cp = {};
      cp.type = cudaGraphNodeTypeConditional;
      cp.conditional.handle = h;
#if CUDART_VERSION >= 12080
      cp.conditional.type = variant == 1 ? cudaGraphCondTypeIf : cudaGraphCondTypeSwitch;
#else
      cp.conditional.type = cudaGraphCondTypeIf;
#endif
      cp.conditional.size = variant == 1 ? 1 : 4;
#if CUDART_VERSION >= 13000
      CK(cudaGraphAddNode(&n, g, &prev, nullptr, 1, &cp));
#else
      CK(cudaGraphAddNode(&n, g, &prev, 1, &cp));
#endif
      cudaGraphNode_t inside;
      CK(cudaGraphAddKernelNode(&inside, cp.conditional.phGraph_out[variant == 1 ? 0 : 1],
                                nullptr, 0, &p));
    } else {
      CK(cudaGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    }
    prev = n;
  }
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphUpload(ge, stream));
  const int launches = 2000;
  double t = median_us([&] {
    for (int i = 0; i < launches; i++) CK(cudaGraphLaunch(ge, stream));
    CK(cudaStreamSynchronize(stream));
  }, 9);
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return t / launches;
}

struct BatchBufs {
  unsigned *header;              // pinned, mapped: the batch's row count
  unsigned *grid;                // device: the grid the admit kernel writes
  unsigned *in, *mid, *out, *w1, *w2;  // device
};

// admit -> layer 1 -> layer 2. exact_rows 0: the layers' grid comes from
// the device (bound kMaxRows); otherwise the grid is exact_rows.
sg_graph *batch_graph(const BatchBufs &b, unsigned exact_rows) {
  sg_graph *g;
  SGK(sg_graph_create(&g));
  void *aa[2] = {(void *)&b.header, (void *)&b.grid};
  size_t as[2] = {sizeof b.header, sizeof b.grid};
  sg_node admit;
  SGK(add_kernel(g, (const void *)batch_admit, aa, as, 2, nullptr, 0, &admit, "admit"));
  sg_node prev = admit;
  for (int l = 0; l < 2; l++) {
    const unsigned *x = l ? b.mid : b.in;
    unsigned *y = l ? b.out : b.mid;
    const unsigned *w = l ? b.w2 : b.w1;
    unsigned shift = l ? 7u : 3u;
    sg_grid_ref ref = {nullptr, exact_rows, 1, 1, 0};  // filled in when bound
    void *la[5] = {&x, &y, &w, &shift, &ref};
    size_t ls[5] = {sizeof x, sizeof y, sizeof w, sizeof shift, sizeof ref};
    sg_kernel_desc k = {};
    k.func = (const void *)batch_layer;
    k.grid = {exact_rows ? exact_rows : kMaxRows, 1, 1};
    k.block = {kFeatures, 1, 1};
    k.args = la;
    k.arg_sizes = ls;
    k.arg_count = 5;
    k.name = l ? "layer 2" : "layer 1";
    sg_node n;
    SGK(sg_graph_add_kernel(g, &k, &prev, 1, &n));
    if (!exact_rows) SGK(sg_graph_kernel_bind_grid(g, n, 4, b.grid));
    prev = n;
  }
  return g;
}

// The per-size capture a CUDA Graphs user writes: the same three kernels
// captured on `stream` with the exact grid, instantiated.
cudaGraphExec_t capture_exact(const BatchBufs &b, unsigned rows, cudaStream_t stream) {
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  batch_admit<<<1, 32, 0, stream>>>(b.header, b.grid);
  const sg_grid_ref ref = {nullptr, rows, 1, 1, 0};
  batch_layer<<<rows, kFeatures, 0, stream>>>(b.in, b.mid, b.w1, 3u, ref);
  batch_layer<<<rows, kFeatures, 0, stream>>>(b.mid, b.out, b.w2, 7u, ref);
  CK(cudaStreamEndCapture(stream, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphDestroy(g));
  return ge;
}

struct BatchRow {
  double one_exec_us, exact_us, streams_us;  // per batch
  double one_exec_first_us, capture_first_us; // the first 256 batches, in all
  unsigned distinct_first;                    // sizes among the first 256 batches
  unsigned long long rebuilds;
  unsigned mismatches;
  uint32_t seed;
};

// The CPU reference of every row (rows do not depend on each other).
std::vector<unsigned> batch_reference(const std::vector<unsigned> &in,
                                      const std::vector<unsigned> &w1,
                                      const std::vector<unsigned> &w2) {
  std::vector<unsigned> mid(in.size()), out(in.size());
  for (unsigned r = 0; r < kMaxRows; r++)
    for (unsigned c = 0; c < kFeatures; c++) {
      const unsigned *row = &in[(size_t)r * kFeatures];
      mid[(size_t)r * kFeatures + c] = batch_mix(row[c], row[(c * 3 + 1) % kFeatures], w1[c]);
    }
  for (unsigned r = 0; r < kMaxRows; r++)
    for (unsigned c = 0; c < kFeatures; c++) {
      const unsigned *row = &mid[(size_t)r * kFeatures];
      out[(size_t)r * kFeatures + c] = batch_mix(row[c], row[(c * 7 + 1) % kFeatures], w2[c]);
    }
  return out;
}

BatchRow batch_section(cudaStream_t stream) {
  BatchRow r = {};
  r.seed = static_cast<uint32_t>(std::random_device{}());
  std::mt19937 rng(r.seed);
  const size_t words = (size_t)kMaxRows * kFeatures;
  BatchBufs b;
  CK(cudaHostAlloc(&b.header, sizeof(unsigned), cudaHostAllocMapped));
  CK(cudaMalloc(&b.grid, 4 * sizeof(unsigned)));
  CK(cudaMalloc(&b.in, words * sizeof(unsigned)));
  CK(cudaMalloc(&b.mid, words * sizeof(unsigned)));
  CK(cudaMalloc(&b.out, words * sizeof(unsigned)));
  CK(cudaMalloc(&b.w1, kFeatures * sizeof(unsigned)));
  CK(cudaMalloc(&b.w2, kFeatures * sizeof(unsigned)));
  std::vector<unsigned> in(words), w1(kFeatures), w2(kFeatures);
  for (unsigned &v : in) v = rng();
  for (unsigned &v : w1) v = rng();
  for (unsigned &v : w2) v = rng();
  CK(cudaMemcpy(b.in, in.data(), words * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.w1, w1.data(), kFeatures * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.w2, w2.data(), kFeatures * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  const std::vector<unsigned> want = batch_reference(in, w1, w2);

  const unsigned seq_len = 1024;
  std::vector<unsigned> sizes(seq_len);
  for (unsigned &n : sizes) n = 1 + rng() % kMaxRows;
  {
    std::vector<char> seen(kMaxRows + 1, 0);
    for (unsigned i = 0; i < 256; i++) r.distinct_first += !seen[sizes[i]]++;
  }

  // Checks the output of a batch of `rows`: rows past it keep the marker
  // written before it ran.
  std::vector<unsigned> got(words);
  auto mark = [&] {
    CK(cudaMemset(b.out, 0xa5, words * sizeof(unsigned)));
    CK(cudaDeviceSynchronize());
  };
  auto check = [&](unsigned rows, const char *who) {
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), b.out, words * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned bad = 0;
    for (size_t i = 0; i < words; i++)
      bad += got[i] != (i < (size_t)rows * kFeatures ? want[i] : 0xa5a5a5a5u);
    if (bad && r.mismatches < 5)
      std::fprintf(stderr, "%s: batch of %u rows: %u words differ from the CPU reference\n", who,
                   rows, bad);
    r.mismatches += bad != 0;
  };
  auto serve = [&](sg_exec *e, unsigned rows) {
    *(volatile unsigned *)b.header = rows;
    SGK(sg_exec_launch(e, nullptr));
    SGK(sg_exec_wait(e));
  };
  // Median over rounds of the mean time per batch over the sequence.
  auto per_batch = [&](auto &&one) {
    return median_us([&] {
      for (unsigned n : sizes) one(n);
    }, 5) / seq_len;
  };

  // One executable: created once; its first 256 batches timed with it.
  sg_graph *g = batch_graph(b, 0);
  {
    double t0 = now_us();
    sg_exec_options o = opts(SG_MODE_GRAPH);
    sg_exec *e;
    SGK(sg_exec_create(g, &o, &e));
    for (unsigned i = 0; i < 256; i++) serve(e, sizes[i]);
    r.one_exec_first_us = now_us() - t0;
    r.one_exec_us = per_batch([&](unsigned n) { serve(e, n); });
    for (unsigned i = 0; i < 48; i++) {
      mark();
      serve(e, sizes[i]);
      check(sizes[i], "one exec");
    }
    sg_exec_stats st;
    SGK(sg_exec_get_stats(e, &st));
    r.rebuilds = st.rebuilds;
    SGK(sg_exec_destroy(e));
    o = opts(SG_MODE_STREAMS);
    SGK(sg_exec_create(g, &o, &e));
    r.streams_us = per_batch([&](unsigned n) { serve(e, n); });
    for (unsigned i = 0; i < 16; i++) {
      mark();
      serve(e, sizes[i]);
      check(sizes[i], "one exec (streams)");
    }
    SGK(sg_exec_destroy(e));
  }
  SGK(sg_graph_destroy(g));

  // A graph per exact size, all instantiated before timing.
  {
    std::vector<sg_exec *> exact(kMaxRows + 1, nullptr);
    for (unsigned n = 1; n <= kMaxRows; n++) {
      sg_graph *eg = batch_graph(b, n);
      sg_exec_options o = opts(SG_MODE_GRAPH);
      SGK(sg_exec_create(eg, &o, &exact[n]));
      SGK(sg_graph_destroy(eg));
    }
    r.exact_us = per_batch([&](unsigned n) { serve(exact[n], n); });
    for (unsigned i = 0; i < 16; i++) {
      mark();
      serve(exact[sizes[i]], sizes[i]);
      check(sizes[i], "exact graph");
    }
    for (sg_exec *e : exact)
      if (e) SGK(sg_exec_destroy(e));
  }

  // Capture per new size over the first 256 batches, instantiation included.
  {
    std::vector<cudaGraphExec_t> cache(kMaxRows + 1, nullptr);
    auto run = [&](unsigned n) {
      if (!cache[n]) cache[n] = capture_exact(b, n, stream);
      *(volatile unsigned *)b.header = n;
      CK(cudaGraphLaunch(cache[n], stream));
      CK(cudaStreamSynchronize(stream));
    };
    double t0 = now_us();
    for (unsigned i = 0; i < 256; i++) run(sizes[i]);
    r.capture_first_us = now_us() - t0;
    for (unsigned i = 0; i < 16; i++) {
      mark();
      run(sizes[i]);
      check(sizes[i], "capture/size");
    }
    for (cudaGraphExec_t ge : cache)
      if (ge) CK(cudaGraphExecDestroy(ge));
  }
  CK(cudaFreeHost(b.header));
  CK(cudaFree(b.grid));
  CK(cudaFree(b.in));
  CK(cudaFree(b.mid));
  CK(cudaFree(b.out));
  CK(cudaFree(b.w1));
  CK(cudaFree(b.w2));
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : "conditional_bench.json";
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("conditional_bench on %s, driver %d, runtime %d\n", prop.name, driver, runtime);
  unsigned *data, *state, *flag;
  CK(cudaMalloc(&data, 32 * sizeof(unsigned)));
  CK(cudaMalloc(&state, sizeof(unsigned)));
  CK(cudaHostAlloc(&flag, sizeof(unsigned), cudaHostAllocMapped));
  CK(cudaMemset(data, 0, 32 * sizeof(unsigned)));
  CK(cudaDeviceSynchronize());
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const unsigned K = 1000;
  std::vector<WhileRow> rows;
  std::printf("\nWHILE of K = %u iterations (us per loop, medians)\n", K);
  std::printf("B  sg_graph  sg_streams  host_loop  graph/iter  hand_cond  speedup  vs_hand\n");
  for (int B = 1; B <= 4; B++) {
    WhileRow r = while_row(B, K, data, state, flag, stream);
    rows.push_back(r);
    std::printf("%d %9.1f %11.1f %10.1f %11.1f %10.1f %8.2f %8.3f\n", B, r.sg_graph,
                r.sg_streams, r.host_loop, r.graph_iter, r.hand_cond,
                std::min(r.host_loop, r.graph_iter) / r.sg_graph, r.sg_graph / r.hand_cond);
    std::fflush(stdout);
  }
  const bool full = driver >= 12080 && runtime >= 12080;
  const double plain = chain_us(0, data), with_if = chain_us(1, data);
  const double with_switch = full ? chain_us(2, data) : 0;
  std::printf("\nper launch (us): chain %.2f, with IF %.2f (+%.2f)", plain, with_if,
              with_if - plain);
  if (full) std::printf(", with SWITCH %.2f (+%.2f)", with_switch, with_switch - plain);
  std::printf("\n");
  // The physical cost of a conditional node: the same chains by hand.
  const double hand_plain = hand_chain_us(0, data, stream), hand_if = hand_chain_us(1, data, stream);
  const double hand_switch = full ? hand_chain_us(2, data, stream) : 0;
  std::printf("hand-written CUDA (us): chain %.2f, with IF %.2f (+%.2f)", hand_plain, hand_if,
              hand_if - hand_plain);
  if (full) std::printf(", with SWITCH %.2f (+%.2f)", hand_switch, hand_switch - hand_plain);
  std::printf("\n");

  std::printf("\nbatches of 1..%u rows in random order (us per batch, launch + wait)\n", kMaxRows);
  const BatchRow br = batch_section(stream);
  std::printf("seed %u; %u sizes among the first 256 batches\n", br.seed, br.distinct_first);
  std::printf("one exec (graph) %8.2f   exact graph %8.2f   ratio %.3f   one exec (streams) %8.2f\n",
              br.one_exec_us, br.exact_us, br.one_exec_us / br.exact_us, br.streams_us);
  std::printf("first 256 batches (us, in all): one exec %.0f (its creation included), "
              "capture/size %.0f, speedup %.1fx; rebuilds %llu; outputs %s\n",
              br.one_exec_first_us, br.capture_first_us,
              br.capture_first_us / br.one_exec_first_us, br.rebuilds,
              br.mismatches ? "DIFFER from the CPU reference" : "match the CPU reference");

  double worst_speedup = 1e30, worst_vs_hand = 0;
  for (const WhileRow &r : rows) {
    worst_speedup = std::min(worst_speedup, std::min(r.host_loop, r.graph_iter) / r.sg_graph);
    worst_vs_hand = std::max(worst_vs_hand, r.sg_graph / r.hand_cond);
  }
  struct T {
    const char *what, *op;
    double limit, value;
  } targets[] = {
      {"while_speedup_over_host_loop", ">=", 5.0, worst_speedup},
      {"while_vs_hand_conditional", "<=", 1.05, worst_vs_hand},
      {"if_overhead_us", "<=", 2.0, with_if - plain},
      {"switch_overhead_us", "<=", 2.0, full ? with_switch - plain : -1},
      {"batch_vs_exact_graph", "<=", 1.05, br.one_exec_us / br.exact_us},
      {"batch_rebuilds", "<=", 0.0, (double)br.rebuilds},
      {"batch_first256_speedup_over_capture", ">=", 10.0,
       br.capture_first_us / br.one_exec_first_us},
  };
  std::printf("\ntarget                          limit    value  verdict\n");
  FILE *f = std::fopen(json, "w");
  if (f) {
    std::fprintf(f, "{\n  \"bench\": \"conditional_bench\",\n  \"device\": \"%s\",\n"
                    "  \"driver\": %d,\n  \"runtime\": %d,\n  \"K\": %u,\n  \"while\": [\n",
                 prop.name, driver, runtime, K);
    for (size_t i = 0; i < rows.size(); i++) {
      const WhileRow &r = rows[i];
      std::fprintf(f, "    {\"body_kernels\": %d, \"sg_graph_us\": %.2f, \"sg_streams_us\": %.2f, "
                      "\"host_loop_us\": %.2f, \"graph_per_iteration_us\": %.2f, "
                      "\"hand_conditional_us\": %.2f}%s\n",
                   r.B, r.sg_graph, r.sg_streams, r.host_loop, r.graph_iter, r.hand_cond,
                   i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"per_launch_us\": {\"chain\": %.3f, \"if\": %.3f, \"switch\": %.3f},\n",
                 plain, with_if, full ? with_switch : -1.0);
    std::fprintf(f, "  \"hand_written_per_launch_us\": {\"chain\": %.3f, \"if\": %.3f, "
                    "\"switch\": %.3f},\n", hand_plain, hand_if, full ? hand_switch : -1.0);
    std::fprintf(f, "  \"batches\": {\"seed\": %u, \"max_rows\": %u, \"one_exec_us\": %.3f, "
                    "\"exact_graph_us\": %.3f, \"one_exec_streams_us\": %.3f, "
                    "\"first256_one_exec_us\": %.1f, \"first256_capture_per_size_us\": %.1f, "
                    "\"first256_distinct_sizes\": %u, \"rebuilds\": %llu, \"verified\": %s},\n"
                    "  \"targets\": [\n",
                 br.seed, kMaxRows, br.one_exec_us, br.exact_us, br.streams_us,
                 br.one_exec_first_us, br.capture_first_us, br.distinct_first, br.rebuilds,
                 br.mismatches ? "false" : "true");
  }
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    const T &t = targets[i];
    const bool skipped = t.value < 0;
    const bool met = !skipped && (t.op[0] == '>' ? t.value >= t.limit : t.value <= t.limit);
    std::printf("%-30s %2s %5.2f %8.3f  %s\n", t.what, t.op, t.limit, t.value,
                skipped ? "skipped (CUDA < 12.8)" : met ? "met" : "MISSED");
    if (f)
      std::fprintf(f, "    {\"what\": \"%s\", \"op\": \"%s\", \"limit\": %.3f, \"value\": %.4f, "
                      "\"met\": %s}%s\n",
                   t.what, t.op, t.limit, t.value, skipped ? "null" : met ? "true" : "false",
                   i + 1 < sizeof targets / sizeof *targets ? "," : "");
  }
  if (f) {
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
  }
  std::printf("\nJSON: %s\n", json);
  CK(cudaStreamDestroy(stream));
  CK(cudaFreeHost(flag));
  CK(cudaFree(state));
  CK(cudaFree(data));
  return br.mismatches ? 1 : 0;  // a wrong output makes the figures worthless
}
