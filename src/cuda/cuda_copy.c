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
 * For now the driver's own pageable path is used:
 * - streams mode: cudaMemcpyAsync. From a pageable source the driver copies
 *   the source when the call is made, not when the stream gets there, so
 *   the stream is first synchronised: otherwise data written by an earlier
 *   node of the same launch (a host callback, a copy) would be read stale.
 *   To a pageable destination the call returns once the copy is complete,
 *   which already includes the earlier work. Both block the launching
 *   thread; that is the cost pinned staging removes. (When a caller captures
 *   a streams-mode launch into its own graph, no synchronisation is made:
 *   the copy becomes a memcpy node that runs in graph order.)
 * - graph mode: a memcpy node, which the driver executes in graph order.
 *   Stream capture does not capture these copies; the capture builder adds
 *   the same node through here, so both builds share one path. */
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

cudaError_t sg__cuda_pageable_copy_enqueue(sg__cuda_state *b, const sg__copy *c,
                                           cudaStream_t stream, const char **call) {
  (void)b;
  if (c->src_memory == SG_MEMORY_HOST_PAGEABLE) {
    /* Unless a caller is capturing this launch into its own graph, where a
     * synchronisation is illegal and the memcpy node runs in graph order. */
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

cudaError_t sg__cuda_pageable_copy_add_node(sg__cuda_state *b, const sg__copy *c,
                                            cudaGraph_t graph, const cudaGraphNode_t *deps,
                                            size_t dep_count, cudaGraphNode_t *node,
                                            const char **call) {
  (void)b;
  *call = "cudaGraphAddMemcpyNode1D";
  return SG_CUDA(cudaGraphAddMemcpyNode1D(node, graph, deps, dep_count, c->dst, c->src, c->bytes,
                                          cudaMemcpyDefault));
}

cudaError_t sg__cuda_pageable_copy_set_node(sg__cuda_state *b, const sg__copy *c,
                                            cudaGraphExec_t exec, cudaGraphNode_t node,
                                            const char **call) {
  (void)b;
  *call = "cudaGraphExecMemcpyNodeSetParams1D";
  return SG_CUDA(cudaGraphExecMemcpyNodeSetParams1D(exec, node, c->dst, c->src, c->bytes,
                                                    cudaMemcpyDefault));
}
