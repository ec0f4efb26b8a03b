/* The CUDA backend's device handling: making the executable's device
 * current around each call, and checking what a node needs of the device
 * (reachable memory, a CUDA function, shared memory within the limit), and
 * the op that carries each node out. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/memory_table.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/stage_mem.h"

sg_status sg__cuda_enter(int device, int *previous, const char *fn) {
  cudaError_t err = SG_CUDA(cudaGetDevice(previous));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", fn);
  /* Setting the device that is already current still costs a driver call
   * on some versions; a launch makes this check every time. */
  if (*previous == device) return SG_OK;
  err = SG_CUDA(cudaSetDevice(device));
  if (err != cudaSuccess) {
    char where[96];
    snprintf(where, sizeof where, "%s: device %d", fn, device);
    return sg__cuda_fail(err, "cudaSetDevice", where);
  }
  return SG_OK;
}

/* The driver's cuCtxGetCurrent (cuda.h: CUresult cuCtxGetCurrent(CUcontext *)),
 * with CUcontext spelled as void *, reached through the runtime's entry
 * points so that the library links the runtime only (as cuda_memset.c). */
typedef int (*ctx_get_current_fn)(void **ctx);

static pthread_once_t ctx_lookup_once = PTHREAD_ONCE_INIT;
static ctx_get_current_fn ctx_get_current;

/* Looked up once per process. Not a fault point: a fault here would stick
 * for the life of the process; the calls through the pointer are. */
static void ctx_lookup(void) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return; /* no fast path: every guard asks the runtime */
  }
  memcpy(&ctx_get_current, &p, sizeof ctx_get_current);
}

void *sg__cuda_current_context(void) {
  pthread_once(&ctx_lookup_once, ctx_lookup);
  void *ctx = NULL;
  if (!ctx_get_current || SG_CUDA((cudaError_t)ctx_get_current(&ctx)) != cudaSuccess)
    return NULL;
  return ctx;
}

sg_status sg__cuda_enter_exec(const sg__cuda_state *b, int *previous, const char *fn) {
  /* Every update and launch passes here, and on the update path the
   * library's whole budget is tens of nanoseconds beside the driver's
   * set-params: cudaGetDevice is a full runtime call (launch_bench's micro
   * section times it), cuCtxGetCurrent a read of the driver's thread
   * state. When the current context is the one the executable's streams
   * and graph were made in, its device is current: the runtime works in the
   * current context, and cudaSetDevice makes the device's primary context
   * current at once (CUDA >= 12), so the runtime's current device cannot
   * differ from the current context's. Anything else (another context,
   * none yet on this thread, no entry point) takes the full guard. */
#if CUDART_VERSION >= 12000
  if (b->context && sg__cuda_current_context() == b->context) {
    *previous = b->device;
    return SG_OK;
  }
#endif
  return sg__cuda_enter(b->device, previous, fn);
}

void sg__cuda_leave(int device, int previous) {
  /* Not a fault point: restoring the caller's device cannot be reported
   * (the work is done) and must not be skipped. */
  if (previous != device) cudaSetDevice(previous);
}

/* "sg_exec_create: copy node 'c' (#3)"; made only when a message needs it,
 * since updates pass through here on their fast path. */
static const char *where_of(const char *fn, const sg__node *node, uint32_t index,
                            char buf[SG__LABEL_BYTES + 96]) {
  char label[SG__LABEL_BYTES];
  snprintf(buf, SG__LABEL_BYTES + 96, "%s: %s node %s", fn, sg__node_kind_name(node->kind),
           sg__node_label(node, index, label));
  return buf;
}

static sg_status refuse_host_device(const char *where, const char *what) {
  return sg__fail(SG_ERR_INVALID_COPY,
                  "%s: %s host-backend \"device\" memory (sg_mem_alloc(SG_BACKEND_HOST, ...)), "
                  "which the GPU cannot reach; allocate it with SG_BACKEND_CUDA",
                  where, what);
}

/* Raises the function's dynamic shared memory limit when the node asks for
 * more than the default (48 KiB), after checking the device can give it.
 * The attribute belongs to the function (process-wide, per device); it is
 * only ever raised, so other users of the function are not affected. */
static sg_status check_shared(sg__cuda_state *b, const sg__node *node, uint32_t index,
                              const char *fn) {
  const sg__kernel *k = &node->u.kernel;
  if (k->shared_bytes == 0) return SG_OK;
  char where[SG__LABEL_BYTES + 96];
  where_of(fn, node, index, where);
  struct cudaFuncAttributes a;
  cudaError_t err = SG_CUDA(cudaFuncGetAttributes(&a, k->func));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaFuncGetAttributes", where);
  if (a.sharedSizeBytes + k->shared_bytes > (size_t)b->max_shared_optin)
    return sg__fail(SG_ERR_INVALID_LAUNCH,
                    "%s: %zu bytes of dynamic shared memory (plus %zu static) exceed device "
                    "%d's limit of %d bytes per block",
                    where, k->shared_bytes, a.sharedSizeBytes, b->device, b->max_shared_optin);
  if (k->shared_bytes <= (size_t)a.maxDynamicSharedSizeBytes) return SG_OK;
  if (k->func_kind == SG_KERNEL_CUDA_KERNEL) {
    err = SG_CUDA(cudaKernelSetAttributeForDevice((cudaKernel_t)(uintptr_t)k->func,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)k->shared_bytes, b->device));
    if (err != cudaSuccess) return sg__cuda_fail(err, "cudaKernelSetAttributeForDevice", where);
  } else {
    err = SG_CUDA(cudaFuncSetAttribute(k->func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)k->shared_bytes));
    if (err != cudaSuccess) return sg__cuda_fail(err, "cudaFuncSetAttribute", where);
  }
  return SG_OK;
}

/* A copy's op. Between host memory on both sides, a host thread copies
 * (cudaMemcpyAsync would copy at once, out of stream order). Otherwise
 * staging's classification is the one decision: a pageable side, or a
 * buffer pinned only by the registration cache (pageable memory to the
 * user, kept registered while copies use it), makes a staged copy. */
static sg__cuda_op copy_op(const sg__copy *c, sg__stage_dir *dir) {
  *dir = SG__STAGE_NONE;
  if (sg__memory_is_host(c->src_memory) && sg__memory_is_host(c->dst_memory))
    return SG__OP_HOST_WORK;
  *dir = sg__staging_classify(&sg__cuda_stage_mem, c);
  return *dir ? SG__OP_STAGED_COPY : SG__OP_COPY;
}

sg_status sg__cuda_check_node(sg__cuda_state *b, const sg__node *node, uint32_t index,
                              const char *fn, sg__cuda_op *op, sg__stage_dir *dir) {
  char where[SG__LABEL_BYTES + 96];
  *dir = SG__STAGE_NONE;
  /* This backend runs an executable on its one device: a node set on
   * another would otherwise run where it was not asked to. */
  if (node->device != SG_DEVICE_DEFAULT && node->device != b->device)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s is set on device %d, but the CUDA backend runs this executable on "
                    "device %d only; leave the node on SG_DEVICE_DEFAULT or set "
                    "sg_exec_options.device",
                    where_of(fn, node, index, where), node->device, b->device);
  switch (node->kind) {
    case SG__NODE_COPY:
      if (node->u.copy.src_memory == SG_MEMORY_HOST_DEVICE)
        return refuse_host_device(where_of(fn, node, index, where), "the source is");
      if (node->u.copy.dst_memory == SG_MEMORY_HOST_DEVICE)
        return refuse_host_device(where_of(fn, node, index, where), "the destination is");
      *op = copy_op(&node->u.copy, dir);
      return SG_OK;
    case SG__NODE_MEMSET:
      if (node->u.memset.dst_memory == SG_MEMORY_HOST_DEVICE)
        return refuse_host_device(where_of(fn, node, index, where), "the destination is");
      /* The GPU cannot set pageable memory; a host thread can, in order. */
      *op = sg__memory_is_host(node->u.memset.dst_memory) ? SG__OP_HOST_WORK : SG__OP_MEMSET;
      return SG_OK;
    case SG__NODE_KERNEL:
      if (!node->u.kernel.func)
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s has no CUDA function (func is NULL, only a host twin): it can run "
                        "only on the host backend",
                        where_of(fn, node, index, where));
      *op = SG__OP_KERNEL;
      return check_shared(b, node, index, fn);
    case SG__NODE_HOST:
      *op = SG__OP_HOST_WORK;
      return SG_OK;
    case SG__NODE_STREAM_FN:
      if (!node->u.stream_fn->fn)
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s has no stream function (fn is NULL, only a host twin): it can run "
                        "only on the host backend",
                        where_of(fn, node, index, where));
      *op = SG__OP_STREAM_FN;
      return SG_OK;
    case SG__NODE_NCCL:
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: this build's CUDA backend does not run NCCL nodes (the host backend "
                      "refuses them too)",
                      where_of(fn, node, index, where));
    default:
      *op = SG__OP_NOTHING;
      return SG_OK;
  }
}
