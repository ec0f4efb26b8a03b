/* memplan_bench's GPU section (memplan_graphmem.h): temporaries as CUDA
 * graph memory nodes, for comparison with the plan's arena.
 *
 * The driver reuses a freed allocation's memory for another allocation of
 * the same graph only when the free node is ordered before the allocation
 * node. Each temporary's allocation comes right before its first user in
 * the issue order (depending on that user's predecessors) and its free
 * right after its last (depending on every user); the free precedes the
 * users' successors that come later in the issue order. Every added edge
 * goes forward in the issue order (allocation and free nodes placed beside
 * those users), so the graph stays acyclic, and a temporary is reachable
 * between its allocation and its free from every user. */
#define _POSIX_C_SOURCE 200809L
#include "memplan_graphmem.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CU(x)                                                                           \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      rc = -1;                                                                          \
      goto done;                                                                        \
    }                                                                                   \
  } while (0)

int graphmem_measure(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                     const sg__access_table *t, graphmem_result *out) {
  memset(out, 0, sizeof *out);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return 1;
  }
  const uint32_t n = s->node_count, T = t->temp_count;
  int rc = 0;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaStream_t stream = NULL;
  uint32_t *rank = calloc((size_t)n + 1, sizeof *rank);
  uint32_t *first = malloc(((size_t)T + 1) * sizeof *first);
  uint32_t *last = malloc(((size_t)T + 1) * sizeof *last);
  uint32_t *pred_start = calloc((size_t)n + 2, sizeof *pred_start);
  uint32_t *pred = malloc(((size_t)succ_start[n] + 1) * sizeof *pred);
  uint32_t *mark = malloc(((size_t)n + 1) * sizeof *mark);
  cudaGraphNode_t *empty = calloc((size_t)n + 1, sizeof *empty);
  /* A node's dependencies: its predecessors, allocations and frees (at most
   * n + 2 T), or a free's users (at most n). */
  cudaGraphNode_t *deps = malloc(((size_t)n + 2 * (size_t)T + 1) * sizeof *deps);
  cudaGraphNode_t *alloc = calloc((size_t)T + 1, sizeof *alloc);
  cudaGraphNode_t *freed = calloc((size_t)T + 1, sizeof *freed);
  void **dptr = calloc((size_t)T + 1, sizeof *dptr);
  uint32_t *use_start = calloc((size_t)n + 1, sizeof *use_start);
  uint32_t *after_start = calloc((size_t)n + 1, sizeof *after_start);
  uint32_t *use_fill = malloc(((size_t)n + 1) * sizeof *use_fill);
  uint32_t *after_fill = malloc(((size_t)n + 1) * sizeof *after_fill);
  uint32_t *use = NULL, *after = NULL;
  if (!rank || !first || !last || !pred_start || !pred || !mark || !empty || !deps || !alloc ||
      !freed || !dptr || !use_start || !after_start || !use_fill || !after_fill) {
    fprintf(stderr, "graphmem: out of memory\n");
    rc = -1;
    goto done;
  }
  for (uint32_t k = 0; k < n; k++) rank[s->order[k]] = k;
  /* Each temporary's first and last user in the issue order. */
  for (uint32_t k = 0; k < T; k++) first[k] = UINT32_MAX, last[k] = 0;
  for (uint32_t i = 0; i < t->count; i++) {
    const sg__access *a = &t->acc[i];
    if (a->temp == SG__NO_TEMP || a->node >= n) continue;
    if (first[a->temp] == UINT32_MAX) {
      first[a->temp] = last[a->temp] = a->node;
    } else {
      if (rank[a->node] < rank[first[a->temp]]) first[a->temp] = a->node;
      if (rank[a->node] > rank[last[a->temp]]) last[a->temp] = a->node;
    }
  }
  for (uint32_t e = 0; e < succ_start[n]; e++) pred_start[succ[e] + 2]++;
  for (uint32_t v = 0; v < n; v++) pred_start[v + 2] += pred_start[v + 1];
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = succ_start[u]; e < succ_start[u + 1]; e++) pred[pred_start[succ[e] + 1]++] = u;

  /* Each node's temporaries (use_*), and the temporaries whose free must
   * precede it (after_*): two passes, counting then filling, with `mark`
   * (the temporary a node was last listed for) keeping each pair once. */
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      for (uint32_t v = 0; v < n; v++) use_start[v + 1] += use_start[v];
      for (uint32_t v = 0; v < n; v++) after_start[v + 1] += after_start[v];
      use = malloc(((size_t)use_start[n] + 1) * sizeof *use);
      after = malloc(((size_t)after_start[n] + 1) * sizeof *after);
      if (!use || !after) {
        fprintf(stderr, "graphmem: out of memory\n");
        rc = -1;
        goto done;
      }
      memcpy(use_fill, use_start, (size_t)n * sizeof *use_fill);
      memcpy(after_fill, after_start, (size_t)n * sizeof *after_fill);
    }
    for (uint32_t v = 0; v < n; v++) mark[v] = UINT32_MAX;
    for (uint32_t k = 0; k < T; k++) {
      if (first[k] == UINT32_MAX) continue;
      for (uint32_t i = 0; i < t->count; i++) {
        const sg__access *a = &t->acc[i];
        if (a->temp != k || a->node >= n || mark[a->node] == k) continue;
        mark[a->node] = k;
        if (pass) use[use_fill[a->node]++] = k;
        else use_start[a->node + 1]++;
      }
    }
    for (uint32_t v = 0; v < n; v++) mark[v] = UINT32_MAX;
    for (uint32_t k = 0; k < T; k++) {
      if (first[k] == UINT32_MAX) continue;
      for (uint32_t i = 0; i < t->count; i++) {
        const sg__access *a = &t->acc[i];
        if (a->temp != k || a->node >= n) continue;
        for (uint32_t e = succ_start[a->node]; e < succ_start[a->node + 1]; e++) {
          uint32_t w = succ[e];
          if (rank[w] <= rank[last[k]] || mark[w] == k) continue;
          mark[w] = k;
          if (pass) after[after_fill[w]++] = k;
          else after_start[w + 1]++;
        }
      }
    }
  }

  /* Nodes are added in the issue order, each with its dependencies. */
  int dev = 0;
  CU(cudaSetDevice(dev));
  CU(cudaGraphCreate(&graph, 0));
  for (uint32_t o = 0; o < n; o++) {
    uint32_t v = s->order[o], nd = 0;
    for (uint32_t i = use_start[v]; i < use_start[v + 1]; i++) {
      uint32_t k = use[i];
      if (first[k] != v) continue;
      uint32_t np = 0;
      for (uint32_t j = pred_start[v]; j < pred_start[v + 1]; j++) deps[np++] = empty[pred[j]];
      struct cudaMemAllocNodeParams p;
      memset(&p, 0, sizeof p);
      p.poolProps.allocType = cudaMemAllocationTypePinned;
      p.poolProps.location.type = cudaMemLocationTypeDevice;
      p.poolProps.location.id = dev;
      p.bytesize = t->temps[k].bytes;
      CU(cudaGraphAddMemAllocNode(&alloc[k], graph, deps, np, &p));
      dptr[k] = p.dptr;
    }
    for (uint32_t j = pred_start[v]; j < pred_start[v + 1]; j++) deps[nd++] = empty[pred[j]];
    for (uint32_t i = use_start[v]; i < use_start[v + 1]; i++) deps[nd++] = alloc[use[i]];
    for (uint32_t i = after_start[v]; i < after_start[v + 1]; i++) deps[nd++] = freed[after[i]];
    CU(cudaGraphAddEmptyNode(&empty[v], graph, deps, nd));
    for (uint32_t i = use_start[v]; i < use_start[v + 1]; i++) {
      uint32_t k = use[i], nu = 0;
      if (last[k] != v) continue;
      /* Its users, found again through the accesses. */
      for (uint32_t j = 0; j < t->count; j++) {
        const sg__access *a = &t->acc[j];
        if (a->temp != k || a->node >= n || mark[a->node] == k + T) continue;
        mark[a->node] = k + T;
        deps[nu++] = empty[a->node];
      }
      CU(cudaGraphAddMemFreeNode(&freed[k], graph, deps, nu, dptr[k]));
    }
  }
  CU(cudaDeviceGraphMemTrim(dev));
  {
    unsigned long long zero = 0;
    CU(cudaDeviceSetGraphMemAttribute(dev, cudaGraphMemAttrUsedMemHigh, &zero));
    CU(cudaDeviceSetGraphMemAttribute(dev, cudaGraphMemAttrReservedMemHigh, &zero));
  }
  double t0 = now_ms();
  CU(cudaGraphInstantiate(&exec, graph, 0));
  out->instantiate_ms = now_ms() - t0;
  CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  t0 = now_ms();
  CU(cudaGraphLaunch(exec, stream));
  CU(cudaStreamSynchronize(stream));
  out->launch_ms = now_ms() - t0;
  {
    unsigned long long used = 0, reserved = 0;
    CU(cudaDeviceGetGraphMemAttribute(dev, cudaGraphMemAttrUsedMemHigh, &used));
    CU(cudaDeviceGetGraphMemAttribute(dev, cudaGraphMemAttrReservedMemHigh, &reserved));
    out->used_high = (size_t)used;
    out->reserved_high = (size_t)reserved;
  }
done:
  if (stream) cudaStreamDestroy(stream);
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  cudaDeviceGraphMemTrim(0);
  free(rank);
  free(first);
  free(last);
  free(pred_start);
  free(pred);
  free(mark);
  free(empty);
  free(deps);
  free(alloc);
  free(freed);
  free(dptr);
  free(use_start);
  free(after_start);
  free(use_fill);
  free(after_fill);
  free(use);
  free(after);
  return rc;
}
