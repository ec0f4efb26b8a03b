/* Enqueueing one node on a stream: the body of a streams-mode launch (and of
 * the capture build, for the ops that capture as they are). Kept to one
 * switch and one CUDA call per node, so that a launch costs what a
 * hand-written loop of the same calls costs. */
#include <stdio.h>
#include <string.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

const char *sg__cuda_where(const sg__cuda_state *b, const char *fn, uint32_t index,
                           char buf[SG__LABEL_BYTES + 64]) {
  char label[SG__LABEL_BYTES];
  snprintf(buf, SG__LABEL_BYTES + 64, "%s: node %s", fn,
           sg__node_label(&b->nodes[index], index, label));
  return buf;
}

static dim3 to_dim3(sg_dim3 d) {
  dim3 r;
  r.x = d.x;
  r.y = d.y;
  r.z = d.z;
  return r;
}

void sg__cuda_kernel_params(const sg__kernel *k, struct cudaKernelNodeParams *p) {
  memset(p, 0, sizeof *p);
  /* A cudaKernel_t (SG_KERNEL_CUDA_KERNEL) is passed the same way: the
   * runtime takes any pointer it has no __global__ registered for as one. */
  p->func = (void *)(uintptr_t)k->func;
  p->gridDim = to_dim3(k->grid);
  p->blockDim = to_dim3(k->block);
  p->sharedMemBytes = (unsigned)k->shared_bytes;
  p->kernelParams = k->arg_ptrs;
  p->extra = NULL;
}

sg_status sg__cuda_enqueue(sg__cuda_state *b, uint32_t index, const sg__node *n,
                           cudaStream_t stream, const char *fn, char *msg, size_t cap) {
  const char *call = "";
  cudaError_t err;
  switch ((sg__cuda_op)b->op[index]) {
    case SG__OP_KERNEL: {
      const sg__kernel *k = &n->u.kernel;
      if (b->pdl_launch && b->pdl_launch[index]) { /* graph_pdl.c */
        call = "cudaLaunchKernelExC (programmatic stream serialization)";
        err = sg__cuda_launch_programmatic(k, stream);
        break;
      }
      call = "cudaLaunchKernel";
      err = SG_CUDA(cudaLaunchKernel(k->func, to_dim3(k->grid), to_dim3(k->block), k->arg_ptrs,
                                     k->shared_bytes, stream));
      break;
    }
    case SG__OP_COPY:
      call = "cudaMemcpyAsync";
      err = SG_CUDA(cudaMemcpyAsync(n->u.copy.dst, n->u.copy.src, n->u.copy.bytes,
                                    cudaMemcpyDefault, stream));
      break;
    case SG__OP_STAGED_COPY: /* staging has failures of its own (SG_ERR_POOL_EXHAUSTED) */
      return sg__cuda_staged_copy_enqueue(b, index, &n->u.copy, stream, fn, msg, cap);
    case SG__OP_PEER_STAGED:
      return sg__cuda_peer_staged_enqueue(b, index, &n->u.copy, stream, fn, msg, cap);
    case SG__OP_NCCL:
      return sg__cuda_nccl_enqueue(b, index, n, stream, fn, msg, cap);
    case SG__OP_MEMSET:
      err = sg__cuda_memset_enqueue(&n->u.memset, stream, &call);
      break;
    case SG__OP_HOST_WORK:
      call = "cudaLaunchHostFunc";
      err = SG_CUDA(cudaLaunchHostFunc(stream, sg__cuda_work_run, b->work[index]));
      break;
    case SG__OP_STREAM_FN: {
      const sg__stream_fn_payload *p = n->u.stream_fn;
      int rc = p->fn((void *)stream, p->user_data);
      if (rc == 0) return SG_OK;
      char where[SG__LABEL_BYTES + 64];
      snprintf(msg, cap, "%s: stream-function node returned %d",
               sg__cuda_where(b, fn, index, where), rc);
      return SG_ERR_CALLBACK;
    }
    default:
      return SG_OK;
  }
  if (err == cudaSuccess) return SG_OK;
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_format(msg, cap, err, call, sg__cuda_where(b, fn, index, where));
  return SG_ERR_CUDA;
}
