/* THE STAGING SEAM: every copy node whose host side is pageable memory
 * (sg__copy.src_memory or dst_memory == SG_MEMORY_HOST_PAGEABLE, and the
 * other side on the GPU) is carried out by one of the three functions of
 * this file, and by nothing else:
 *
 *   sg__cuda_pageable_copy_enqueue   streams mode, at every launch
 *   sg__cuda_pageable_copy_add_node  graph mode, both builds, once per build
 *   sg__cuda_pageable_copy_set_node  graph mode, a parameter update in place
 *
 * Pinned staging (src/staging/) plugs in here: this is where a copy can be
 * split into chunks through the pinned pool, or go through a registered
 * (pinned in place) buffer, and where sg__exec_count_copies is told so.
 * Copies between pinned or device memory never come here (cuda_nodes.c and
 * the graph builders call cudaMemcpyAsync / memcpy nodes directly), nor do
 * host->host copies (host work, cuda_work.c).
 *
 * Staging decides (src/cuda/staged_copy.h; edits here by the staging
 * engineer, marked "staging:"): a candidate copy (pageable memory on one
 * side, device or managed memory on the other) is staged through the
 * pinned pool or copied through a registered buffer, by policy; in streams
 * mode the DIRECT route (SG_STAGING_NONE, small AUTO copies) takes the
 * driver's own pageable path, cudaMemcpyAsync. From a pageable source the
 * driver copies the source when the call is made, not when the stream gets
 * there, so the stream is first synchronised: otherwise data written by an
 * earlier node of the same launch (a host callback, a copy) would be read
 * stale. To a pageable destination the call returns once the copy is
 * complete, which already includes the earlier work. Both block the
 * launching thread; that is the cost pinned staging removes.
 *
 * In a CUDA graph there is no DIRECT route: the driver does not carry out a
 * memcpy node with a pageable side in graph order (on the H200 it read the
 * source before the host node that writes it had run), so staging stages or
 * registers every candidate of graph mode, whatever the policy, and fails
 * the build rather than leave one to a plain node (src/staging/policy.h).
 * Stream capture does not capture these copies; the capture builder adds
 * the same node through here, so both builds share one path. A caller
 * capturing a streams-mode launch gets a pageable copy only through a
 * buffer registered already; staging refuses the launch otherwise. */
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/staged_copy.h" /* staging: the pinned ring and the registration cache */

/* The driver's own pageable path in a stream (see above). */
static cudaError_t driver_enqueue(const sg__copy *c, cudaStream_t stream, const char **call) {
  if (c->src_memory == SG_MEMORY_HOST_PAGEABLE) {
    /* Unless a caller is capturing this launch into its own graph, where a
     * synchronisation is illegal (staging: a candidate never gets here
     * then; this is for copies staging does not know). */
    enum cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    *call = "cudaStreamIsCapturing";
    cudaError_t err = SG_CUDA(cudaStreamIsCapturing(stream, &capturing));
    if (err == cudaSuccess && capturing == cudaStreamCaptureStatusNone) {
      *call = "cudaStreamSynchronize";
      err = SG_CUDA(cudaStreamSynchronize(stream));
    }
    if (err != cudaSuccess) return err;
  }
  *call = "cudaMemcpyAsync";
  return SG_CUDA(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDefault, stream));
}

sg_status sg__cuda_pageable_copy_enqueue(sg__cuda_state *b, uint32_t index, cudaStream_t stream,
                                         const char *fn, char *msg, size_t cap) {
  int taken = 0; /* staging: a staged or registered copy */
  sg_status st = sg__staging_cuda_enqueue(b->staging, index, stream, fn, &taken);
  if (taken) {
    if (st) sg__format(msg, cap, "%s", sg_last_error());
    return st;
  }
  const char *call = "";
  cudaError_t err = driver_enqueue(&b->exec->snap.nodes[index].u.copy, stream, &call);
  /* staging: the driver has the pageable range; registrations may touch it again */
  sg__staging_direct_end(b->staging, index);
  if (err == cudaSuccess) return SG_OK;
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_format(msg, cap, err, call, sg__cuda_where(b, fn, index, where));
  return SG_ERR_CUDA;
}

/* staging: the node index of `c`. The builders pass the snapshot's own copy
 * (a rebuild swaps new parameters into the snapshot's node); anything else
 * is UINT32_MAX, which staging leaves to the driver's path. */
static uint32_t index_of_copy(const sg__cuda_state *b, const sg__copy *c) {
  const sg__node *nodes = b->exec->snap.nodes;
  uint32_t n = b->exec->snap.node_count;
  if (!nodes || n == 0) return UINT32_MAX;
  uintptr_t base = (uintptr_t)&nodes[0].u.copy, p = (uintptr_t)c;
  if (p < base) return UINT32_MAX;
  size_t i = (size_t)(p - base) / sizeof(sg__node);
  return i < n && &nodes[i].u.copy == c ? (uint32_t)i : UINT32_MAX;
}

cudaError_t sg__cuda_pageable_copy_add_node(sg__cuda_state *b, const sg__copy *c,
                                            cudaGraph_t graph, const cudaGraphNode_t *deps,
                                            size_t dep_count, cudaGraphNode_t *node,
                                            const char **call) {
  /* staging: a child graph for a staged copy, a held registration; every
   * candidate is taken (there is no pageable memcpy node in a graph) */
  int taken = 0;
  cudaError_t err = sg__staging_cuda_add_node(b->staging, index_of_copy(b, c), c, graph, deps,
                                              dep_count, node, call, &taken);
  if (taken) return err;
  *call = "cudaGraphAddMemcpyNode1D";
  return SG_CUDA(cudaGraphAddMemcpyNode1D(node, graph, deps, dep_count, c->dst, c->src, c->bytes,
                                          cudaMemcpyDefault));
}

cudaError_t sg__cuda_pageable_copy_set_node(sg__cuda_state *b, const sg__copy *c,
                                            cudaGraphExec_t exec, cudaGraphNode_t node,
                                            const char **call) {
  /* staging: a staged copy's ring and pointers are baked into the graph;
   * staging answers cudaErrorNotSupported when it must be rebuilt. */
  uint32_t index = UINT32_MAX;
  for (uint32_t i = 0; i < b->s->node_count && index == UINT32_MAX; i++)
    if (b->g.nodes[i] == node) index = i;
  int taken = 0;
  cudaError_t err = sg__staging_cuda_set_node(b->staging, index, c, call, &taken);
  if (taken) return err;
  *call = "cudaGraphExecMemcpyNodeSetParams1D";
  return SG_CUDA(cudaGraphExecMemcpyNodeSetParams1D(exec, node, c->dst, c->src, c->bytes,
                                                    cudaMemcpyDefault));
}
