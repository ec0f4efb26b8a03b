/* Programmatic dependent launch: how the CUDA backend maps the plan's
 * programmatic nodes (plan/programmatic.c; schedule.programmatic).
 *
 * Graph mode, explicit build: every reduced edge into a programmatic node
 * becomes a programmatic edge (cudaGraphEdgeData: type
 * cudaGraphDependencyTypeProgrammatic from the predecessor's
 * cudaGraphKernelNodePortProgrammatic port), so the kernel may launch once
 * every block of its predecessors has triggered
 * (cudaTriggerProgrammaticLaunchCompletion) or ended, and waits for their
 * completion and memory in cudaGridDependencySynchronize.
 *
 * Streams mode (and the capture build, which records it as the same edge):
 * a programmatic node whose stream's previous node is a kernel and which
 * waits for no event is launched with cudaLaunchKernelExC and
 * cudaLaunchAttributeProgrammaticStreamSerialization; its predecessors are
 * then all before it on its stream. Other programmatic nodes launch as
 * usual (an event wait stays a full dependency).
 *
 * Not used: before sm_90 (the device's compute capability), for traced
 * executables (their event records sit between the kernels, and times of
 * overlapping kernels would mean little), and with a CUDA runtime older than
 * 12.3 in graph mode (no edge data). */
#include <string.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

#if CUDART_VERSION >= 13000
#define SG__ADD_EDGES(graph, from, to, data, n) cudaGraphAddDependencies(graph, from, to, data, n)
#define SG__HAVE_EDGE_DATA 1
#elif CUDART_VERSION >= 12030
#define SG__ADD_EDGES(graph, from, to, data, n) cudaGraphAddDependencies_v2(graph, from, to, data, n)
#define SG__HAVE_EDGE_DATA 1
#else
#define SG__HAVE_EDGE_DATA 0
#endif

sg_status sg__cuda_pdl_setup(sg__cuda_state *b, int traced, const char *fn) {
  const sg__schedule *s = b->s;
  b->pdl = NULL;
  b->pdl_launch = NULL;
  if (!s->programmatic || traced) return SG_OK;
  int major = 0;
  cudaError_t err =
      SG_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, b->device));
  if (err != cudaSuccess)
    return sg__cuda_fail(err, "cudaDeviceGetAttribute (compute capability)", fn);
  if (major < 9) return SG_OK;
  if (b->mode == SG_MODE_GRAPH && b->build == SG_BUILD_EXPLICIT) {
    if (SG__HAVE_EDGE_DATA) b->pdl = s->programmatic;
    return SG_OK;
  }
  const uint32_t n = s->node_count;
  uint8_t *launch = sg__calloc(n ? n : 1, 1);
  if (!launch) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  int any = 0;
  for (uint32_t v = 0; v < n; v++) {
    if (!s->programmatic[v] || s->wait_start[v] != s->wait_start[v + 1] || s->position[v] == 0)
      continue;
    const uint32_t k = s->stream_of[v];
    const uint32_t before = s->stream_nodes[s->stream_start[k] + s->position[v] - 1];
    if (b->op[before] != SG__OP_KERNEL) continue;
    launch[v] = 1;
    any = 1;
  }
  if (any) b->pdl_launch = launch;
  else sg__free(launch);
  return SG_OK;
}

void sg__cuda_pdl_free(sg__cuda_state *b) {
  sg__free(b->pdl_launch);
  b->pdl_launch = NULL;
  b->pdl = NULL;
}

cudaError_t sg__cuda_launch_programmatic(const sg__kernel *k, cudaStream_t stream) {
  cudaLaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config;
  memset(&config, 0, sizeof config);
  config.gridDim = (dim3){k->grid.x, k->grid.y, k->grid.z};
  config.blockDim = (dim3){k->block.x, k->block.y, k->block.z};
  config.dynamicSmemBytes = k->shared_bytes;
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  /* A cudaKernel_t goes the same way as a __global__ address (cuda_nodes.c). */
  return SG_CUDA(cudaLaunchKernelExC(&config, (const void *)(uintptr_t)k->func, k->arg_ptrs));
}

cudaError_t sg__cuda_graph_add_programmatic(cudaGraphNode_t *added, cudaGraph_t graph,
                                            const cudaGraphNode_t *deps, size_t nd,
                                            const struct cudaKernelNodeParams *p,
                                            const char **call) {
  *call = "cudaGraphAddKernelNode";
  cudaError_t err = SG_CUDA(cudaGraphAddKernelNode(added, graph, NULL, 0, p));
#if SG__HAVE_EDGE_DATA
  cudaGraphEdgeData edge;
  memset(&edge, 0, sizeof edge);
  edge.from_port = cudaGraphKernelNodePortProgrammatic;
  edge.type = cudaGraphDependencyTypeProgrammatic;
  *call = "cudaGraphAddDependencies (programmatic edge)";
  for (size_t i = 0; i < nd && err == cudaSuccess; i++)
    err = SG_CUDA(SG__ADD_EDGES(graph, &deps[i], added, &edge, 1));
#else
  (void)deps;
  (void)nd;
  if (err == cudaSuccess) err = cudaErrorNotSupported; /* sg__cuda_pdl_setup never asks */
#endif
  return err;
}
