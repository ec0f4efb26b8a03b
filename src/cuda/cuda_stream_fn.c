/* Stream-function nodes in graph mode: the user's function is called once,
 * on streams[0] under thread-local stream capture, and what it enqueued
 * becomes a child graph. Its payload (and whatever the captured work refers
 * to, such as a cuBLAS workspace) is kept alive by the executable's
 * snapshot for as long as the graph can be launched; see `release` in
 * streamgraph/graph.h. Called only while no other capture is active on the
 * stream. */
#include <stdio.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

sg_status sg__cuda_stream_fn_capture(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                     const char *fn, cudaGraph_t *child) {
  char label[SG__LABEL_BYTES], where[SG__LABEL_BYTES + 64];
  snprintf(where, sizeof where, "%s: node %s", fn, sg__node_label(node, index, label));
  const sg__stream_fn_payload *p = node->u.stream_fn;
  cudaStream_t s = b->streams[0];
  *child = NULL;

  /* Thread-local: another thread's unsafe calls (cudaMalloc, say) do not
   * invalidate this capture, and ours are checked against it only. */
  cudaError_t err = SG_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaStreamBeginCapture", where);
  int rc = p->fn((void *)s, p->user_data);
  cudaGraph_t g = NULL;
  err = SG_CUDA_AFTER(cudaStreamEndCapture(s, &g));
  if (rc != 0) {
    if (g) cudaGraphDestroy(g);
    return sg__fail(SG_ERR_CALLBACK, "%s: stream-function node returned %d while its work was "
                    "captured", where, rc);
  }
  if (err != cudaSuccess) {
    if (g) cudaGraphDestroy(g);
    cudaGetLastError(); /* a failed capture is not sticky; do not let it surface later */
    return sg__cuda_fail(err, "cudaStreamEndCapture (the stream function's capture)", where);
  }

  /* A function that enqueued nothing still needs a node to stand for it. */
  size_t count = 0;
  err = SG_CUDA(cudaGraphGetNodes(g, NULL, &count));
  if (err == cudaSuccess && count == 0) {
    cudaGraphNode_t empty;
    err = SG_CUDA(cudaGraphAddEmptyNode(&empty, g, NULL, 0));
  }
  if (err != cudaSuccess) {
    cudaGraphDestroy(g);
    return sg__cuda_fail(err, "building the stream function's child graph", where);
  }
  *child = g;
  return SG_OK;
}
