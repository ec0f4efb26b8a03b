/* Kernels from CUDA C source at run time (NVRTC, cached on disk), with a
 * host twin: the same computation in C, which the host backend runs. */
#include <math.h>

#include "check.h"

static const char *source =
    "extern \"C\" __global__ void saxpy(float *y, const float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* The host twin: the kernel's arguments, as pointers to their values. */
static void saxpy_host(const sg_kernel_launch *launch, void *const *args) {
  (void)launch;
  float *y = *(float **)args[0];
  const float *x = *(const float **)args[1];
  float a = *(const float *)args[2];
  int n = *(const int *)args[3];
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

int main(void) {
  enum { N = 10000 };
  static float x[N], y[N], out[N];
  for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 1.0f;
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);

  /* On the CUDA backend, compile the source for this GPU; without one,
   * only the host twin is needed (func stays NULL). */
  const void *func = NULL;
  sg_module *module = NULL;
  if (backend == SG_BACKEND_CUDA) {
    CHECK(sg_module_create_from_source(source, NULL, &module));
    CHECK(sg_module_get_kernel(module, "saxpy", &func));
  }

  void *dx, *dy;
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, sizeof x, &dx));
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, sizeof y, &dy));
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node ux, uy, k, down;
  sg_copy_desc c = {dx, x, sizeof x, SG_COPY_AUTO, "x"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &ux));
  c = (sg_copy_desc){dy, y, sizeof y, SG_COPY_AUTO, "y"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &uy));
  float a = 2.0f;
  int n = N;
  void *args[] = {&dy, &dx, &a, &n};    /* captured by value when the node is added */
  size_t sizes[] = {sizeof dy, sizeof dx, sizeof a, sizeof n};
  sg_kernel_desc kd = {func, SG_KERNEL_CUDA_KERNEL, {(N + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                       args, sizes, 4, saxpy_host, "saxpy", 0};
  sg_node after[] = {ux, uy};
  CHECK(sg_graph_add_kernel(g, &kd, after, 2, &k));
  c = (sg_copy_desc){out, dy, sizeof out, SG_COPY_AUTO, "result"};
  CHECK(sg_graph_add_copy(g, &c, &k, 1, &down));

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += fabsf(out[i] - (2.0f * (float)i + 1.0f)) > 1e-3f;
  printf("run-time kernel (%s): %s\n",
         module ? "compiled with NVRTC" : "its host twin, on the host backend",
         wrong ? "WRONG" : "correct");
  CHECK(sg_exec_destroy(e));
  CHECK(sg_graph_destroy(g));
  if (module) CHECK(sg_module_destroy(module));  /* executables keep what they launch */
  CHECK(sg_mem_free(dx));
  CHECK(sg_mem_free(dy));
  return wrong != 0;
}
