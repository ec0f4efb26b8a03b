/* Child graphs of graph mode. Stream-function nodes: the user's function is
 * called once, on a stream of the node's device (streams[0] with one
 * device) under thread-local stream capture, with that device current, and
 * what it enqueued becomes a child graph. Its payload (and whatever the captured work refers
 * to, such as a cuBLAS workspace) is kept alive by the executable's
 * snapshot for as long as the graph can be launched; see `release` in
 * streamgraph/graph.h. Called only while no other capture is active on the
 * stream. NCCL nodes (cuda_nccl.c) and copies between GPUs through host
 * memory (peer_copy.c) are child graphs too: sg__cuda_child_graph. */
#include <stdio.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

sg_status sg__cuda_stream_fn_capture(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                     const char *fn, cudaGraph_t *child) {
  char label[SG__LABEL_BYTES], where[SG__LABEL_BYTES + 64];
  snprintf(where, sizeof where, "%s: node %s", fn, sg__node_label(node, index, label));
  const sg__stream_fn_payload *p = node->u.stream_fn;
  const int device = b->dev.node_device[index];
  cudaStream_t s = sg__cuda_device_stream(b, device);
  *child = NULL;
  int current;
  cudaError_t err = SG_CUDA(cudaGetDevice(&current));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", where);
  const int restore = current;
  if ((err = sg__cuda_switch(&current, device)) != cudaSuccess)
    return sg__cuda_fail(err, "cudaSetDevice", where);

  /* Thread-local: another thread's unsafe calls (cudaMalloc, say) do not
   * invalidate this capture, and ours are checked against it only. */
  err = SG_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  if (err != cudaSuccess) {
    if (current != restore) cudaSetDevice(restore);
    return sg__cuda_fail(err, "cudaStreamBeginCapture", where);
  }
  int rc = p->fn((void *)s, p->user_data);
  cudaGraph_t g = NULL;
  err = SG_CUDA_AFTER(cudaStreamEndCapture(s, &g));
  cudaSetDevice(restore); /* the function may have switched devices too */
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

sg_status sg__cuda_child_graph(sg__cuda_state *b, uint32_t index, const sg__node *node,
                               const char *fn, cudaGraph_t *child) {
  switch ((sg__cuda_op)b->op[index]) {
    case SG__OP_STREAM_FN:
      return sg__cuda_stream_fn_capture(b, index, node, fn, child);
    case SG__OP_NCCL:
      return sg__cuda_nccl_capture(b, index, node, fn, child);
    default: { /* SG__OP_PEER_STAGED: memcpy nodes in the node's device's context */
      char where[SG__LABEL_BYTES + 64];
      int current;
      cudaError_t err = SG_CUDA(cudaGetDevice(&current));
      if (err != cudaSuccess)
        return sg__cuda_fail(err, "cudaGetDevice", sg__cuda_where(b, fn, index, where));
      const int restore = current;
      if ((err = sg__cuda_switch(&current, b->dev.node_device[index])) != cudaSuccess)
        return sg__cuda_fail(err, "cudaSetDevice", sg__cuda_where(b, fn, index, where));
      sg_status st = sg__cuda_peer_staged_graph(b, index, &node->u.copy, fn, child);
      if (current != restore) cudaSetDevice(restore);
      return st;
    }
  }
}
