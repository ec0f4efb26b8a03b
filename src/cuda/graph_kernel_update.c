/* Graph mode: in-place kernel-node updates through the driver.
 *
 * cudaGraphExecKernelNodeSetParams wraps the driver's
 * cuGraphExecKernelNodeSetParams, and the runtime's layer costs more than
 * the library's own update path (launch_bench's update_all breakdown,
 * bench/RESULTS.md). Updating every node of a graph before each launch pays
 * it per node, so the in-place update of a __global__ kernel calls the
 * driver directly, with the kernel's CUfunction looked up once per node and
 * function. The driver is reached through the runtime's entry-point query,
 * so the library still links only the runtime. Anything the fast path
 * cannot do (a cudaKernel_t, a missing entry point, a refusal) falls back
 * to the runtime's call, which then gives the answer. */
#include <cuda.h> /* types only */
#include <pthread.h>
#include <string.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

typedef CUresult (*kernel_set_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);

static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;
static kernel_set_fn driver_kernel_set;

/* Looked up once per process; NULL if the driver does not offer the CUDA 12
 * form of the call. Not a fault point: it would stick for the process. */
static void lookup(void) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuGraphExecKernelNodeSetParams", &p, 12000,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    p = NULL;
  }
  memcpy(&driver_kernel_set, &p, sizeof driver_kernel_set); /* object to function pointer */
}

/* The CUfunction of node `index`'s kernel, cached per node (the cache is
 * made on first use and lives with the instantiated graph). NULL if unknown. */
static CUfunction function_of(sg__cuda_graph *g, uint32_t node_count, uint32_t index,
                              const void *func) {
  if (!g->kernel_fns && !(g->kernel_fns = sg__calloc(node_count, sizeof *g->kernel_fns)))
    return NULL;
  sg__cuda_kernel_fn *c = &g->kernel_fns[index];
  if (c->func != func) {
    cudaFunction_t f = NULL;
    if (SG_CUDA(cudaGetFuncBySymbol(&f, func)) != cudaSuccess) {
      cudaGetLastError();
      return NULL;
    }
    c->func = func;
    c->function = f;
  }
  return (CUfunction)c->function;
}

cudaError_t sg__cuda_graph_set_kernel(sg__cuda_state *b, sg__cuda_graph *g, uint32_t index,
                                      const sg__kernel *k) {
  pthread_once(&lookup_once, lookup);
  CUfunction f = NULL;
  if (driver_kernel_set && k->func_kind == SG_KERNEL_FUNCTION)
    f = function_of(g, b->s->node_count, index, k->func);
  if (f && !sg__fault_hit_at(SG_FAULT_CUDA, SG__SITE("cuGraphExecKernelNodeSetParams"))) {
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = k->grid.x;
    p.gridDimY = k->grid.y;
    p.gridDimZ = k->grid.z;
    p.blockDimX = k->block.x;
    p.blockDimY = k->block.y;
    p.blockDimZ = k->block.z;
    p.sharedMemBytes = (unsigned)k->shared_bytes;
    p.kernelParams = k->arg_ptrs;
    if (driver_kernel_set((CUgraphExec)g->exec, (CUgraphNode)g->nodes[index], &p) == CUDA_SUCCESS)
      return cudaSuccess;
  }
  /* The runtime's call: for what the fast path cannot do, and to give the
   * answer (success, or the refusal that leads to a rebuild) otherwise. */
  struct cudaKernelNodeParams rp;
  sg__cuda_kernel_params(k, &rp);
  return SG_CUDA(cudaGraphExecKernelNodeSetParams(g->exec, g->nodes[index], &rp));
}
