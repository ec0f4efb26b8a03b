// conditional_solver: Newton's iteration for the square roots of a vector,
// run to convergence entirely on the device. One launch of one executable
// runs the whole loop: a WHILE node repeats its body (a step kernel and a
// check kernel) while the check kernel, which reduces the largest relative
// change, says so through the condition (sg_cond_set). No host round trip
// per iteration in graph mode; each kernel has a host twin, so the same
// graph runs on the host backend too (and does, without a GPU).
//
//   usage: sg_conditional_solver [n] [tolerance] [host|streams|graph]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "streamgraph/cond_device.h"
#include "streamgraph/streamgraph.h"

#define MAX_ITERS 100u

struct Work {
  float *a;          // the inputs
  float *x;          // the estimates
  float *delta;      // per element: relative change of the last step
  unsigned *iters;   // iterations done
  unsigned n;
  float tol;
};

// ---- kernels and their host twins ---------------------------------------

__global__ void init_kernel(Work w, sg_cond_ref more) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < w.n) w.x[i] = w.a[i] > 1.0f ? w.a[i] : 1.0f;
  if (i == 0) {
    *w.iters = 0;
    sg_cond_set(more, 1);
  }
}

__global__ void step_kernel(Work w) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= w.n) return;
  float x = w.x[i], next = 0.5f * (x + w.a[i] / x);
  w.delta[i] = fabsf(next - x) / next;
  w.x[i] = next;
}

// One block: the largest change, then the decision.
__global__ void check_kernel(Work w, sg_cond_ref more) {
  __shared__ float top[256];
  float m = 0.0f;
  for (unsigned i = threadIdx.x; i < w.n; i += blockDim.x) m = fmaxf(m, w.delta[i]);
  top[threadIdx.x] = m;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) top[threadIdx.x] = fmaxf(top[threadIdx.x], top[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    unsigned it = ++*w.iters;
    sg_cond_set(more, top[0] > w.tol && it < MAX_ITERS);
  }
}

static void init_twin(const sg_kernel_launch *, void *const *args) {
  const Work &w = *static_cast<const Work *>(args[0]);
  for (unsigned i = 0; i < w.n; i++) w.x[i] = w.a[i] > 1.0f ? w.a[i] : 1.0f;
  *w.iters = 0;
  sg_cond_set(*static_cast<const sg_cond_ref *>(args[1]), 1);
}

static void step_twin(const sg_kernel_launch *, void *const *args) {
  const Work &w = *static_cast<const Work *>(args[0]);
  for (unsigned i = 0; i < w.n; i++) {
    float x = w.x[i], next = 0.5f * (x + w.a[i] / x);
    w.delta[i] = std::fabs(next - x) / next;
    w.x[i] = next;
  }
}

static void check_twin(const sg_kernel_launch *, void *const *args) {
  const Work &w = *static_cast<const Work *>(args[0]);
  float m = 0.0f;
  for (unsigned i = 0; i < w.n; i++) m = std::fmax(m, w.delta[i]);
  unsigned it = ++*w.iters;
  sg_cond_set(*static_cast<const sg_cond_ref *>(args[1]), m > w.tol && it < MAX_ITERS);
}

// ---- the program ----------------------------------------------------------

#define CHECK(call)                                                                 \
  do {                                                                              \
    sg_status st_ = (call);                                                         \
    if (st_ != SG_OK) {                                                             \
      std::fprintf(stderr, "%s: %s\n", sg_status_name(st_), sg_last_error());       \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

static sg_kernel_desc kernel(const void *func, sg_host_twin_fn twin, unsigned n, unsigned block,
                             void **args, size_t *sizes, unsigned argc, const char *name) {
  sg_kernel_desc k = {};
  k.func = func;
  k.grid = {n ? (n + block - 1) / block : 1, 1, 1};
  k.block = {block, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = argc;
  k.host_twin = twin;
  k.name = name;
  return k;
}

int main(int argc, char **argv) {
  const unsigned n = argc > 1 ? (unsigned)std::strtoul(argv[1], nullptr, 10) : 1u << 20;
  const float tol = argc > 2 ? std::strtof(argv[2], nullptr) : 1e-6f;
  const char *way = argc > 3 ? argv[3] : (sg_cuda_device_count() > 0 ? "graph" : "host");
  const bool on_gpu = std::strcmp(way, "host") != 0;
  if (n == 0) return std::fprintf(stderr, "n must be > 0\n"), 1;

  // Memory both the GPU and the host twins can use.
  Work w = {};
  w.n = n;
  w.tol = tol;
  void *mem = nullptr;
  const size_t bytes = 3 * (size_t)n * sizeof(float) + sizeof(unsigned);
  if (on_gpu ? cudaMallocManaged(&mem, bytes) != cudaSuccess : !(mem = std::malloc(bytes)))
    return std::fprintf(stderr, "cannot allocate %zu bytes\n", bytes), 1;
  w.a = static_cast<float *>(mem);
  w.x = w.a + n;
  w.delta = w.x + n;
  w.iters = reinterpret_cast<unsigned *>(w.delta + n);
  for (unsigned i = 0; i < n; i++) w.a[i] = 0.5f + (float)(i % 10007) * 37.25f;

  sg_graph *g;
  CHECK(sg_graph_create(&g));
  CHECK(sg_graph_set_name(g, "newton-sqrt"));
  sg_cond more;
  CHECK(sg_graph_cond_create(g, 0, SG_COND_ASSIGN_DEFAULT, &more));

  sg_cond_ref placeholder = {0, nullptr};  // each executable fills in its own
  void *init_args[2] = {&w, &placeholder};
  size_t init_sizes[2] = {sizeof w, sizeof placeholder};
  sg_kernel_desc init = kernel((const void *)init_kernel, init_twin, n, 256, init_args,
                               init_sizes, 2, "init");
  sg_node init_node, loop_node, step_node, check_node;
  CHECK(sg_graph_add_kernel(g, &init, nullptr, 0, &init_node));
  CHECK(sg_graph_kernel_bind_cond(g, init_node, 1, more));

  sg_cond_node_desc loop = {SG_COND_WHILE, more, 1, "iterate"};
  sg_graph *body;
  CHECK(sg_graph_add_conditional(g, &loop, &init_node, 1, &loop_node, &body));
  void *step_args[1] = {&w};
  size_t step_sizes[1] = {sizeof w};
  sg_kernel_desc step = kernel((const void *)step_kernel, step_twin, n, 256, step_args,
                               step_sizes, 1, "step");
  CHECK(sg_graph_add_kernel(body, &step, nullptr, 0, &step_node));
  sg_kernel_desc check = kernel((const void *)check_kernel, check_twin, 1, 256, init_args,
                                init_sizes, 2, "check");
  check.grid = {1, 1, 1};
  CHECK(sg_graph_add_kernel(body, &check, &step_node, 1, &check_node));
  CHECK(sg_graph_kernel_bind_cond(body, check_node, 1, more));

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = on_gpu ? SG_BACKEND_CUDA : SG_BACKEND_HOST;
  o.mode = std::strcmp(way, "streams") == 0 ? SG_MODE_STREAMS : SG_MODE_GRAPH;
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  CHECK(sg_graph_destroy(g));  // the executable keeps what it needs
  CHECK(sg_exec_launch(e, nullptr));
  CHECK(sg_exec_wait(e));
  if (on_gpu) cudaDeviceSynchronize();

  double worst = 0;
  for (unsigned i = 0; i < n; i++)
    worst = std::fmax(worst, std::fabs(w.x[i] - std::sqrt((double)w.a[i])) / std::sqrt((double)w.a[i]));
  std::printf("%s: %u square roots in %u iterations (one launch), worst relative error %.3g\n",
              way, n, *w.iters, worst);
  CHECK(sg_exec_destroy(e));
  if (on_gpu) cudaFree(mem); else std::free(mem);
  return worst < 1e-5 ? 0 : 1;
}
