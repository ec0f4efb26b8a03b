/* NCCL nodes' calls through NCCL (see nccl_node.h). Only this file includes
 * nccl.h; it is built when CMake found NCCL (cmake/nccl.cmake). */
#include "cuda/nccl_node.h"

#include <nccl.h>
#include <stdio.h>

#include "core/error.h"
#include "cuda/cuda_call.h"
#include "streamgraph/nccl.h"

/* NCCL calls are fault points like CUDA calls: a due fault returns
 * ncclUnhandledCudaError without making the call. Only calls outside a
 * group are: skipping one call of a group would leave the ranks unmatched. */
#define SG_NCCL(call) \
  (sg__fault_hit_at(SG_FAULT_CUDA, SG__SITE(#call)) ? ncclUnhandledCudaError : (call))

int sg__nccl_built(void) { return 1; }

sg_status sg_nccl_version(int *version) {
  if (!version) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: version is NULL", __func__);
  ncclResult_t r = ncclGetVersion(version);
  if (r != ncclSuccess)
    return sg__fail(SG_ERR_CUDA, "%s: ncclGetVersion failed: %s", __func__, ncclGetErrorString(r));
  return SG_OK;
}

static ncclDataType_t nccl_type(sg_nccl_type t) {
  switch (t) {
    case SG_NCCL_INT8: return ncclInt8;
    case SG_NCCL_UINT8: return ncclUint8;
    case SG_NCCL_INT32: return ncclInt32;
    case SG_NCCL_UINT32: return ncclUint32;
    case SG_NCCL_INT64: return ncclInt64;
    case SG_NCCL_UINT64: return ncclUint64;
    case SG_NCCL_FLOAT16: return ncclFloat16;
    case SG_NCCL_FLOAT32: return ncclFloat32;
    case SG_NCCL_FLOAT64: return ncclFloat64;
    default: return ncclBfloat16;
  }
}

static ncclRedOp_t nccl_op(sg_nccl_reduce r) {
  switch (r) {
    case SG_NCCL_PROD: return ncclProd;
    case SG_NCCL_MAX: return ncclMax;
    case SG_NCCL_MIN: return ncclMin;
    case SG_NCCL_AVG: return ncclAvg;
    default: return ncclSum;
  }
}

static sg_status nccl_fail(ncclResult_t r, const char *call, const char *where, unsigned i,
                           ncclComm_t comm) {
  const char *detail = comm ? ncclGetLastError(comm) : "";
  return sg__fail(SG_ERR_CUDA, "%s: call %u: %s failed: %s%s%s", where, i, call,
                  ncclGetErrorString(r), detail && *detail ? ": " : "", detail ? detail : "");
}

/* The buffer `what` of call i must be memory the communicator's device can
 * use: device memory of that device, or managed memory. */
static sg_status check_buffer(const void *p, const char *what, int device, unsigned i,
                              const char *op, const char *where) {
  struct cudaPointerAttributes a;
  cudaError_t err = SG_CUDA(cudaPointerGetAttributes(&a, p));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaPointerGetAttributes", where);
  }
  if (a.type == cudaMemoryTypeManaged) return SG_OK;
  if (a.type != cudaMemoryTypeDevice)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: call %u (%s): %s %p is %s memory, not device memory of the "
                    "communicator's device %d",
                    where, i, op, what, p, a.type == cudaMemoryTypeHost ? "pinned host" : "host",
                    device);
  if (a.device != device)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: call %u (%s): %s %p is memory of device %d, but the communicator is on "
                    "device %d; NCCL needs the communicator's device memory",
                    where, i, op, what, p, a.device, device);
  return SG_OK;
}

sg_status sg__nccl_check(const sg__nccl *n, int *devices, const char *where) {
  for (unsigned i = 0; i < n->call_count; i++) {
    const sg_nccl_call *c = &n->calls[i];
    ncclComm_t comm = (ncclComm_t)c->comm;
    const char *op = sg__nccl_op_name(c->op);
    int ranks = 0;
    ncclResult_t r = SG_NCCL(ncclCommCuDevice(comm, &devices[i]));
    if (r != ncclSuccess) return nccl_fail(r, "ncclCommCuDevice", where, i, NULL);
    if ((r = SG_NCCL(ncclCommCount(comm, &ranks))) != ncclSuccess)
      return nccl_fail(r, "ncclCommCount", where, i, NULL);
    if ((c->op == SG_NCCL_SEND || c->op == SG_NCCL_RECV) && c->peer >= ranks)
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: call %u (%s): peer %d is not a rank of the communicator (%d ranks)",
                      where, i, op, c->peer, ranks);
    sg_status st = SG_OK;
    if (c->send) st = check_buffer(c->send, "send", devices[i], i, op, where);
    if (!st && c->recv) st = check_buffer(c->recv, "recv", devices[i], i, op, where);
    if (st) return st;
  }
  return SG_OK;
}

/* Enqueues call i; outside the group's fault point, so never skipped. */
static ncclResult_t issue(const sg_nccl_call *c, cudaStream_t s, const char **call) {
  ncclComm_t comm = (ncclComm_t)c->comm;
  ncclDataType_t t = nccl_type(c->type);
  switch (c->op) {
    case SG_NCCL_ALL_REDUCE:
      *call = "ncclAllReduce";
      return ncclAllReduce(c->send, c->recv, c->count, t, nccl_op(c->reduce), comm, s);
    case SG_NCCL_ALL_GATHER:
      *call = "ncclAllGather";
      return ncclAllGather(c->send, c->recv, c->count, t, comm, s);
    case SG_NCCL_SEND:
      *call = "ncclSend";
      return ncclSend(c->send, c->count, t, c->peer, comm, s);
    default:
      *call = "ncclRecv";
      return ncclRecv(c->recv, c->count, t, c->peer, comm, s);
  }
}

sg_status sg__nccl_enqueue(const sg__nccl *n, void *const *streams, const char *where, char *msg,
                           size_t cap) {
  ncclResult_t r = SG_NCCL(ncclGroupStart());
  if (r != ncclSuccess) {
    snprintf(msg, cap, "%s: ncclGroupStart failed: %s", where, ncclGetErrorString(r));
    return SG_ERR_CUDA;
  }
  /* A failing call marks the group failed; ncclGroupEnd must still close
   * it (and then launches nothing of it). */
  ncclResult_t first = ncclSuccess;
  const char *failed_call = "";
  unsigned failed_index = 0;
  for (unsigned i = 0; i < n->call_count && first == ncclSuccess; i++) {
    const char *call = "";
    ncclResult_t ri = issue(&n->calls[i], (cudaStream_t)streams[i], &call);
    if (ri != ncclSuccess) {
      first = ri;
      failed_call = call;
      failed_index = i;
    }
  }
  r = ncclGroupEnd();
  if (first == ncclSuccess && r == ncclSuccess) return SG_OK;
  if (first != ncclSuccess) {
    const char *detail = ncclGetLastError((ncclComm_t)n->calls[failed_index].comm);
    snprintf(msg, cap, "%s: call %u: %s failed: %s%s%s", where, failed_index, failed_call,
             ncclGetErrorString(first), detail && *detail ? ": " : "", detail ? detail : "");
  } else {
    const char *detail = ncclGetLastError(NULL);
    snprintf(msg, cap, "%s: ncclGroupEnd failed: %s%s%s", where, ncclGetErrorString(r),
             detail && *detail ? ": " : "", detail ? detail : "");
  }
  return SG_ERR_CUDA;
}
