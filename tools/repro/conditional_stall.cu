// Raw CUDA replay of the random nested conditional graphs of
// tests/gpu/gpu_conditional_test.cpp (ConditionalGpu.RandomNested...): the
// same random sequence builds the same graph with the CUDA graph API alone,
// no streamgraph, so a stall seen there can be told apart from a library
// defect. With --chain, each graph level's conditional nodes are ordered one
// after another, as streamgraph's graph mode builds them.
//
//   nvcc -std=c++17 -arch=sm_90 -O2 tools/repro/conditional_stall.cu -o /tmp/conditional_stall
//   /tmp/conditional_stall [--chain] SEED [COUNT]
//   /tmp/conditional_stall --print SEED    (the graph's outline; no GPU needed)
//
// Runs seeds SEED .. SEED+COUNT-1 (default 1), three launches each, and
// prints per seed "ok" or "STALL" (a launch not done after 5 s: the process
// then exits 1, as a stalled context cannot be reused). Exit 2: a CUDA error.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

namespace {

enum { MIX = 0, DECIDE = 1, STEP = 2, MAX_IN = 6 };
enum { IF = 0, WHILE = 1, SWITCH = 2 };

struct spec_t {
  uint32_t op, dst, n_in, in[MAX_IN], salt, kind, bodies, counter;
};

__device__ uint32_t cmix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t x = a * 0x9e3779b1u ^ (b + salt + (a << 6) + (a >> 2));
  x ^= x >> 15;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

// The test's node work (gpu_conditional_kernels.cu), setting the handle directly.
__global__ void spec_kernel(uint32_t *mem, spec_t s, cudaGraphConditionalHandle h) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  uint32_t v = cmix(s.salt, mem[s.dst], s.salt);
  for (uint32_t i = 0; i < s.n_in; i++) v = cmix(v, mem[s.in[i]], s.salt);
  mem[s.dst] = v;
  if (s.op == DECIDE) {
    if (s.kind == WHILE) {
      mem[s.counter] = (v >> 3) % 4;
      cudaGraphSetConditional(h, mem[s.counter] != 0);
    } else if (s.kind == IF) {
      cudaGraphSetConditional(h, (v >> 3) & 1u);
    } else {
      cudaGraphSetConditional(h, (v >> 3) % (s.bodies + 1));
    }
  } else if (s.op == STEP) {
    if (mem[s.counter]) mem[s.counter]--;
    cudaGraphSetConditional(h, mem[s.counter] != 0);
  }
}

struct Builder {
  std::mt19937 rng;
  cudaGraph_t root = nullptr;
  uint32_t *mem = nullptr;
  uint32_t slots = 0;
  bool chain = false;
  bool print = false; /* outline only: no CUDA call */
  unsigned conds = 0;
  explicit Builder(uint32_t seed) : rng(seed) {}

  cudaGraphConditionalHandle cond_create(unsigned value, unsigned flags) {
    cudaGraphConditionalHandle h = ++conds;
    if (!print) CK(cudaGraphConditionalHandleCreate(&h, root, value, flags));
    return h;
  }

  cudaGraphNode_t add(cudaGraph_t g, const spec_t &s, cudaGraphConditionalHandle h,
                      const std::vector<cudaGraphNode_t> &deps) {
    if (print) {
      static uintptr_t fake = 0;
      return reinterpret_cast<cudaGraphNode_t>(++fake);
    }
    uint32_t *m = mem;
    spec_t copy = s;
    void *args[3] = {&m, &copy, &h};
    cudaKernelNodeParams p = {};
    p.func = reinterpret_cast<void *>(spec_kernel);
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = args;
    cudaGraphNode_t n;
    CK(cudaGraphAddKernelNode(&n, g, deps.data(), deps.size(), &p));
    return n;
  }

  spec_t spec(uint32_t op, const std::vector<uint32_t> &in) {
    spec_t s = {};
    s.op = op;
    s.dst = slots++;
    s.n_in = 0;
    for (size_t i = in.size(); i-- > 0 && s.n_in < MAX_IN;) s.in[s.n_in++] = in[i];
    s.salt = rng();
    return s;
  }

  // The same calls to rng() in the same order as the test's GpuBuilder::build.
  std::vector<uint32_t> build(cudaGraph_t g, unsigned depth, const std::vector<uint32_t> &ctx,
                              const spec_t *loop, cudaGraphConditionalHandle loop_cond) {
    const uint32_t n = 1 + rng() % (depth == 0 ? 8u : 3u);
    std::vector<cudaGraphNode_t> handles;
    std::vector<std::vector<uint32_t>> outs;
    std::vector<uint32_t> written;
    cudaGraphNode_t last_cond = nullptr;
    for (uint32_t v = 0; v < n; v++) {
      std::vector<uint32_t> inputs;
      std::vector<cudaGraphNode_t> deps;
      for (uint32_t u = 0; u < handles.size(); u++)
        if (rng() % 10 < 3) {
          inputs.insert(inputs.end(), outs[u].begin(), outs[u].end());
          deps.push_back(handles[u]);
        }
      if (deps.empty()) inputs = ctx;
      if (depth < 3 && rng() % 4 == 0) {
        unsigned kind = rng() % 3;
        const unsigned bodies = kind == WHILE ? 1 : kind == IF ? 1 + rng() % 2 : 1 + rng() % 3;
        cudaGraphConditionalHandle c =
            cond_create(rng() % 3, rng() % 2 ? cudaGraphCondAssignDefault : 0);
        spec_t d = spec(DECIDE, inputs);
        d.kind = kind;
        d.bodies = bodies;
        if (kind == WHILE) d.counter = slots++;
        cudaGraphNode_t dn = add(g, d, c, deps);
        if (print)
          std::printf("%*skernel sets cond %u (slot %u), %zu deps\n", 2 * depth, "", (unsigned)c,
                      d.dst, deps.size());
        handles.push_back(dn);
        outs.push_back({d.dst});
        written.push_back(d.dst);
        std::vector<cudaGraphNode_t> cdeps = {dn};
        if (chain && last_cond) cdeps.push_back(last_cond);
        cudaGraphNodeParams cp = {};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = c;
        cp.conditional.type = kind == IF      ? cudaGraphCondTypeIf
                              : kind == WHILE ? cudaGraphCondTypeWhile
                                              : cudaGraphCondTypeSwitch;
        cp.conditional.size = bodies;
        cudaGraphNode_t cn = add(g, d, 0, cdeps); /* a stand-in when printing */
        std::vector<cudaGraph_t> bg(bodies, nullptr);
        if (print) {
          std::printf("%*s%s on cond %u, %u bodies, after node %u\n", 2 * depth, "",
                      kind == IF ? "IF" : kind == WHILE ? "WHILE" : "SWITCH", (unsigned)c,
                      bodies, v - 0);
        } else {
#if CUDART_VERSION >= 13000
          CK(cudaGraphAddNode(&cn, g, cdeps.data(), nullptr, cdeps.size(), &cp));
#else
          CK(cudaGraphAddNode(&cn, g, cdeps.data(), cdeps.size(), &cp));
#endif
          bg.assign(cp.conditional.phGraph_out, cp.conditional.phGraph_out + bodies);
        }
        last_cond = cn;
        std::vector<uint32_t> body_ctx = inputs, cond_out = {d.dst};
        body_ctx.push_back(d.dst);
        for (unsigned b = 0; b < bodies; b++) {
          auto w = build(bg[b], depth + 1, body_ctx, kind == WHILE ? &d : nullptr, c);
          cond_out.insert(cond_out.end(), w.begin(), w.end());
        }
        handles.push_back(cn);
        written.insert(written.end(), cond_out.begin(), cond_out.end());
        outs.push_back(cond_out);
      } else {
        spec_t s = spec(MIX, inputs);
        handles.push_back(add(g, s, 0, deps));
        if (print) std::printf("%*skernel (slot %u), %zu deps\n", 2 * depth, "", s.dst, deps.size());
        outs.push_back({s.dst});
        written.push_back(s.dst);
      }
    }
    if (loop) {
      std::vector<uint32_t> inputs;
      for (auto &o : outs) inputs.insert(inputs.end(), o.begin(), o.end());
      spec_t s = spec(STEP, inputs);
      s.counter = loop->counter;
      s.kind = WHILE;
      add(g, s, loop_cond, handles);
      if (print)
        std::printf("%*sstep sets cond %u (slot %u), after all %zu\n", 2 * depth, "",
                    (unsigned)loop_cond, s.dst, handles.size());
      written.push_back(s.dst);
    }
    return written;
  }
};

}  // namespace

int main(int argc, char **argv) {
  int a = 1;
  bool chain = false;
  if (a < argc && !std::strcmp(argv[a], "--chain")) chain = true, a++;
  if (a + 1 < argc + 1 && a < argc && !std::strcmp(argv[a], "--print")) {
    if (a + 1 >= argc) return 2;
    Builder b(static_cast<uint32_t>(std::strtoul(argv[a + 1], nullptr, 10)));
    b.print = true;
    b.build(nullptr, 0, {}, nullptr, 0);
    return 0;
  }
  if (a >= argc) {
    std::printf("usage: conditional_stall [--chain] SEED [COUNT]\n");
    return 2;
  }
  const uint32_t base = static_cast<uint32_t>(std::strtoul(argv[a], nullptr, 10));
  const uint32_t count = a + 1 < argc ? static_cast<uint32_t>(std::strtoul(argv[a + 1], nullptr, 10)) : 1;
  uint32_t *mem;
  CK(cudaMallocManaged(&mem, 1024 * sizeof *mem));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (uint32_t i = 0; i < count; i++) {
    const uint32_t seed = base + i;
    CK(cudaDeviceSynchronize());
    std::memset(mem, 0, 1024 * sizeof *mem);
    Builder b(seed);
    b.mem = mem;
    b.chain = chain;
    CK(cudaGraphCreate(&b.root, 0));
    b.build(b.root, 0, {}, nullptr, 0);
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, b.root, 0));
    for (int launch = 0; launch < 3; launch++) {
      CK(cudaGraphLaunch(exec, stream));
      const auto t0 = std::chrono::steady_clock::now();
      cudaError_t q;
      while ((q = cudaStreamQuery(stream)) == cudaErrorNotReady) {
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(5)) {
          std::printf("seed %u%s: STALL at launch %d\n", seed, chain ? " (chained)" : "", launch);
          std::fflush(stdout);
          std::_Exit(1);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      CK(q);
    }
    std::printf("seed %u%s: ok\n", seed, chain ? " (chained)" : "");
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(b.root));
  }
  return 0;
}
