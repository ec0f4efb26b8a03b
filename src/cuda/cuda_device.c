/* The CUDA backend's device handling: making the executable's device
 * current around each call, and checking what a node needs of the device
 * (reachable memory, a CUDA function, shared memory within the limit), and
 * the op that carries each node out. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/device.h"
#include "core/memory_table.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/nccl_node.h"
#include "cuda/peer_access.h"
#include "cuda/stage_mem.h"
#include "exec/backend_rules.h"

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
                            char buf[SG__BACKEND_WHERE_BYTES]) {
  return sg__backend_where(fn, node, index, buf);
}

static sg_status refuse_host_device(const char *where, const char *what) {
  return sg__fail(SG_ERR_INVALID_COPY,
                  "%s: %s host-backend \"device\" memory (sg_mem_alloc(SG_BACKEND_HOST, ...)), "
                  "which the GPU cannot reach; allocate it with SG_BACKEND_CUDA",
                  where, what);
}

/* The driver's cuKernelGetFunction (cuda.h: CUresult cuKernelGetFunction(
 * CUfunction *, CUkernel)), with both handles spelled as void *: the
 * function of a library kernel (a cudaKernel_t, sg_module) in the current
 * context, loaded into it when it is not yet. */
typedef int (*kernel_get_function_fn)(void **function, const void *kernel);

static pthread_once_t kernel_lookup_once = PTHREAD_ONCE_INIT;
static kernel_get_function_fn kernel_get_function;

/* Looked up once per process (not a fault point, as ctx_lookup). Without
 * it, cudaFuncGetAttributes is the only load. */
static void kernel_lookup(void) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuKernelGetFunction", &p, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return;
  }
  memcpy(&kernel_get_function, &p, sizeof kernel_get_function);
}

/* Loads the node's function into its device's context, and raises the
 * function's dynamic shared memory limit when the node asks for more than
 * the default (48 KiB), after checking the device can give it. The
 * attribute belongs to the function (process-wide, per device); it is only
 * ever raised, so other users of the function are not affected.
 *
 * Loading: under lazy module loading (CUDA's default) a kernel is loaded
 * at its first launch, and loading may synchronise the context. A launch
 * whose first node is a host node that waits (for a gate the caller opens
 * once later launches are queued) would then wait inside cudaLaunchKernel
 * for its own host node, for ever. cudaFuncGetAttributes loads the
 * function, so it is asked before any launch: at creation (`loaded` 0), and
 * when an update brings another function; an update with the same function
 * (the per-batch path) costs one comparison. A library kernel (cudaKernel_t)
 * is context-independent: cudaFuncGetAttributes reads its attributes for
 * the device and is not documented to load it into the context, so its
 * function in the current context is asked for as well (cuKernelGetFunction
 * loads it there), the context its launches run in. */
static sg_status load_function(sg__cuda_state *b, const sg__node *node, uint32_t index,
                               int loaded, const char *fn) {
  const sg__kernel *k = &node->u.kernel;
  const int device = b->dev.node_device[index];
  /* Graphs repeat one kernel over many nodes: it is loaded once. */
  if (k->func == b->loaded_func && device == b->loaded_device) loaded = 1;
  if (loaded && k->shared_bytes == 0) return SG_OK;
  char where[SG__LABEL_BYTES + 96];
  where_of(fn, node, index, where);
  /* Function attributes belong to a device's context: its device current. */
  const int limit = b->dev.shared_optin[sg__cuda_device_index(&b->dev, device)];
  int current;
  cudaError_t err = SG_CUDA(cudaGetDevice(&current));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", where);
  const int restore = current;
  const char *call = "cudaSetDevice";
  sg_status st = SG_OK;
  struct cudaFuncAttributes a;
  if ((err = sg__cuda_switch(&current, device)) == cudaSuccess) {
    call = "cudaFuncGetAttributes";
    err = SG_CUDA(cudaFuncGetAttributes(&a, k->func));
  }
  if (err == cudaSuccess && k->func_kind == SG_KERNEL_CUDA_KERNEL) {
    pthread_once(&kernel_lookup_once, kernel_lookup);
    void *function = NULL;
    call = "cuKernelGetFunction";
    if (kernel_get_function)
      err = SG_CUDA((cudaError_t)kernel_get_function(&function, k->func));
  }
  if (err == cudaSuccess && a.sharedSizeBytes + k->shared_bytes > (size_t)limit) {
    st = sg__fail(SG_ERR_INVALID_LAUNCH,
                  "%s: %zu bytes of dynamic shared memory (plus %zu static) exceed device "
                  "%d's limit of %d bytes per block",
                  where, k->shared_bytes, a.sharedSizeBytes, device, limit);
  } else if (err == cudaSuccess && k->shared_bytes > (size_t)a.maxDynamicSharedSizeBytes) {
    if (k->func_kind == SG_KERNEL_CUDA_KERNEL) {
      call = "cudaKernelSetAttributeForDevice";
      err = SG_CUDA(cudaKernelSetAttributeForDevice((cudaKernel_t)(uintptr_t)k->func,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    (int)k->shared_bytes, device));
    } else {
      call = "cudaFuncSetAttribute";
      err = SG_CUDA(cudaFuncSetAttribute(k->func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)k->shared_bytes));
    }
  }
  if (current != restore) cudaSetDevice(restore);
  if (!st && err != cudaSuccess) st = sg__cuda_fail(err, call, where);
  if (!st) {
    b->loaded_func = k->func;
    b->loaded_device = device;
  }
  return st;
}

/* The device `p` is memory of (device memory only; -1 for anything else,
 * and without a second device, where the question never matters). */
static sg_status memory_device(const void *p, int *device, const char *where) {
  *device = -1;
  if (sg__device_count() < 2) return SG_OK;
  struct cudaPointerAttributes a;
  cudaError_t err = SG_CUDA(cudaPointerGetAttributes(&a, p));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaPointerGetAttributes", where);
  }
  if (a.type == cudaMemoryTypeDevice) *device = a.device;
  return SG_OK;
}

/* A copy on device `node` whose device memory lies on other GPUs: direct
 * (SG__OP_COPY) when every GPU involved reaches the others (peer access
 * enabled once per pair), else through host memory (SG__OP_PEER_STAGED).
 * Host memory on one side: the driver reaches the other GPU's memory
 * through unified addressing, directly where the pair has peer access. */
static sg_status cross_device_op(const sg__copy *c, int node, sg__cuda_op *op,
                                 const char *where) {
  int src = -1, dst = -1;
  sg_status st = SG_OK;
  if (c->src_memory == SG_MEMORY_DEVICE) st = memory_device(c->src, &src, where);
  if (!st && c->dst_memory == SG_MEMORY_DEVICE) st = memory_device(c->dst, &dst, where);
  if (st) return st;
  int direct = 1, ok = 1;
  if (src >= 0 && dst >= 0) {
    if (src != dst && !(st = sg__cuda_peer_pair(src, dst, &ok, where))) direct &= ok;
    if (!st && src != node && !(st = sg__cuda_peer_pair(node, src, &ok, where))) direct &= ok;
    if (!st && dst != node && !(st = sg__cuda_peer_pair(node, dst, &ok, where))) direct &= ok;
    if (!st && !direct) *op = SG__OP_PEER_STAGED;
    return st;
  }
  int other = src >= 0 ? src : dst;
  if (other >= 0 && other != node) st = sg__cuda_peer_pair(node, other, &ok, where);
  return st;
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
  char where[SG__BACKEND_WHERE_BYTES];
  *dir = SG__STAGE_NONE;
  switch (node->kind) {
    case SG__NODE_COPY:
      if (node->u.copy.src_memory == SG_MEMORY_HOST_DEVICE)
        return refuse_host_device(where_of(fn, node, index, where), "the source is");
      if (node->u.copy.dst_memory == SG_MEMORY_HOST_DEVICE)
        return refuse_host_device(where_of(fn, node, index, where), "the destination is");
      *op = copy_op(&node->u.copy, dir);
      if (*op == SG__OP_STAGED_COPY) {
        sg_status refused = sg__backend_check_staged_device(
            where_of(fn, node, index, where), b->dev.node_device[index], b->device);
        if (refused) return refused;
      }
      if (*op == SG__OP_COPY)
        return cross_device_op(&node->u.copy, b->dev.node_device[index], op,
                               where_of(fn, node, index, where));
      return SG_OK;
    case SG__NODE_MEMSET: {
      if (node->u.memset.dst_memory == SG_MEMORY_HOST_DEVICE)
        return refuse_host_device(where_of(fn, node, index, where), "the destination is");
      /* The GPU cannot set pageable memory; a host thread can, in order. */
      *op = sg__memory_is_host(node->u.memset.dst_memory) ? SG__OP_HOST_WORK : SG__OP_MEMSET;
      if (*op != SG__OP_MEMSET || node->u.memset.dst_memory != SG_MEMORY_DEVICE) return SG_OK;
      const int on = b->dev.node_device[index];
      int dst = -1, direct = 1;
      where_of(fn, node, index, where);
      sg_status st = memory_device(node->u.memset.dst, &dst, where);
      if (!st && dst >= 0 && dst != on) st = sg__cuda_peer_pair(on, dst, &direct, where);
      return st ? st : sg__backend_check_memset_reach(where, on, dst, direct);
    }
    case SG__NODE_NCCL:
      if (!sg__nccl_built())
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s cannot run: the library was built without NCCL (sg_nccl_version)",
                        where_of(fn, node, index, where));
      *op = SG__OP_NCCL;
      return SG_OK;
    case SG__NODE_COND:
      *op = SG__OP_COND;
      return sg__cuda_cond_check(b, node, index, b->dev.node_device[index], fn);
    case SG__NODE_KERNEL:
      if (node->u.kernel.grid_arg) {
        sg_status st = sg__cuda_grid_check(&node->u.kernel, where_of(fn, node, index, where));
        if (st) return st;
      }
      if (node->u.kernel.cond_arg) {
        sg_status st = sg__cuda_cond_check_kernel(b, &node->u.kernel,
                                                  where_of(fn, node, index, where));
        if (st) return st;
      }
      if (!node->u.kernel.func)
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s has no CUDA function (func is NULL, only a host twin): it can run "
                        "only on the host backend",
                        where_of(fn, node, index, where));
      *op = SG__OP_KERNEL;
      /* Creation passes the executable's own node; an update, the new one. */
      return load_function(b, node, index,
                           node != &b->nodes[index] &&
                               b->nodes[index].kind == SG__NODE_KERNEL &&
                               b->nodes[index].u.kernel.func == node->u.kernel.func,
                           fn);
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
    default:
      *op = SG__OP_NOTHING;
      return SG_OK;
  }
}
