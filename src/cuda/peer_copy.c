/* Copies between two GPUs' memory where the pair has no peer access (or
 * SG_PEER_ACCESS=off): through a pinned bounce buffer of the node's own,
 * SG__PEER_CHUNK bytes at a time, device to host then host to device, in
 * order on the node's stream (or, in graph mode, as a chain of memcpy nodes
 * in a child graph). The two directions take turns on one buffer, so the
 * rate is about half the pinned copy rate: the price of a pair the hardware
 * cannot join. A node gets its buffer the first time it takes this route
 * and keeps it until the executable goes (updates never need another: it
 * is one chunk whatever the copy's size). Pairs with peer access copy
 * directly (SG__OP_COPY). */
#include <stdio.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

sg_status sg__cuda_peer_bounce(sg__cuda_state *b, uint32_t index, const char *fn) {
  if (b->bounce[index]) return SG_OK;
  /* Portable: pinned for every device's context, whichever runs the copy. */
  cudaError_t err = SG_CUDA(cudaHostAlloc(&b->bounce[index], SG__PEER_CHUNK, cudaHostAllocPortable));
  if (err == cudaSuccess) return SG_OK;
  b->bounce[index] = NULL;
  char where[SG__LABEL_BYTES + 64];
  return sg__cuda_fail(err, "cudaHostAlloc (the copy's bounce buffer between devices)",
                       sg__cuda_where(b, fn, index, where));
}

void sg__cuda_peer_bounce_free(sg__cuda_state *b) {
  if (!b->bounce) return;
  for (uint32_t i = 0; i < b->s->node_count; i++)
    if (b->bounce[i]) cudaFreeHost(b->bounce[i]);
  sg__free(b->bounce);
  b->bounce = NULL;
}

sg_status sg__cuda_peer_staged_enqueue(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                       cudaStream_t stream, const char *fn, char *msg,
                                       size_t cap) {
  void *bounce = b->bounce[index];
  cudaError_t err = cudaSuccess;
  const char *call = "cudaMemcpyAsync (device to host, between devices)";
  for (size_t off = 0; off < c->bytes && err == cudaSuccess; off += SG__PEER_CHUNK) {
    size_t len = c->bytes - off < SG__PEER_CHUNK ? c->bytes - off : SG__PEER_CHUNK;
    call = "cudaMemcpyAsync (device to host, between devices)";
    err = SG_CUDA(cudaMemcpyAsync(bounce, (const char *)c->src + off, len, cudaMemcpyDefault,
                                  stream));
    if (err == cudaSuccess) {
      call = "cudaMemcpyAsync (host to device, between devices)";
      err = SG_CUDA(cudaMemcpyAsync((char *)c->dst + off, bounce, len, cudaMemcpyDefault, stream));
    }
  }
  if (err == cudaSuccess) return SG_OK;
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_format(msg, cap, err, call, sg__cuda_where(b, fn, index, where));
  return SG_ERR_CUDA;
}

sg_status sg__cuda_peer_staged_graph(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                     const char *fn, cudaGraph_t *child) {
  void *bounce = b->bounce[index];
  cudaGraph_t g = NULL;
  const char *call = "cudaGraphCreate";
  cudaError_t err = SG_CUDA(cudaGraphCreate(&g, 0));
  if (err != cudaSuccess) g = NULL;
  cudaGraphNode_t last = NULL;
  for (size_t off = 0; off < c->bytes && err == cudaSuccess; off += SG__PEER_CHUNK) {
    size_t len = c->bytes - off < SG__PEER_CHUNK ? c->bytes - off : SG__PEER_CHUNK;
    cudaGraphNode_t down, up;
    call = "cudaGraphAddMemcpyNode1D (device to host, between devices)";
    err = SG_CUDA(cudaGraphAddMemcpyNode1D(&down, g, last ? &last : NULL, last ? 1 : 0, bounce,
                                           (const char *)c->src + off, len, cudaMemcpyDefault));
    if (err == cudaSuccess) {
      call = "cudaGraphAddMemcpyNode1D (host to device, between devices)";
      err = SG_CUDA(cudaGraphAddMemcpyNode1D(&up, g, &down, 1, (char *)c->dst + off, bounce, len,
                                             cudaMemcpyDefault));
      last = up;
    }
  }
  if (err != cudaSuccess) {
    if (g) cudaGraphDestroy(g);
    char where[SG__LABEL_BYTES + 64];
    return sg__cuda_fail(err, call, sg__cuda_where(b, fn, index, where));
  }
  *child = g;
  return SG_OK;
}
