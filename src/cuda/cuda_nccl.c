/* NCCL nodes on the CUDA backend: which stream each call is issued on, and
 * capturing the calls into a child graph for graph mode. The calls
 * themselves go through nccl_node.c (or no_nccl.c without NCCL).
 *
 * A node sits on its own device's stream in the plan. A call whose
 * communicator is on another device runs on that device's stream of the
 * executable (cuda_devices.h), forked from the node's stream by an event
 * before the group and joined back after it, so that the node still starts
 * after its dependencies and ends before its successors on every device it
 * touches. All calls of a node are one NCCL group: one thread driving the
 * ranks of several GPUs must issue their calls together.
 *
 * Graph mode: the node's calls are captured once, on the stream of the
 * node's device (forks and joins included), into a child graph that each
 * launch replays, as NCCL supports (NCCL 2.9 and newer). New buffers
 * (sg_exec_set_nccl) are captured again and swapped in place. */
#include <stdio.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/nccl_node.h"

void sg__cuda_nccl_free(sg__cuda_nccl *x) {
  if (!x) return;
  if (x->fork) cudaEventDestroy(x->fork);
  for (uint32_t h = 0; x->hop_join && h < x->hop_count; h++)
    if (x->hop_join[h]) cudaEventDestroy(x->hop_join[h]);
  sg__free(x->call_device);
  sg__free(x->call_index);
  sg__free(x->hop_index);
  sg__free(x->hop_join);
  sg__free(x->streams);
  sg__free(x);
}

/* The events of the hops, each made on its own device. */
static sg_status make_events(sg__cuda_state *b, sg__cuda_nccl *x, int node_device,
                             const char *where) {
  int current;
  cudaError_t err = SG_CUDA(cudaGetDevice(&current));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", where);
  const int restore = current;
  const char *call = "cudaSetDevice";
  err = sg__cuda_switch(&current, node_device);
  if (err == cudaSuccess) {
    call = "cudaEventCreateWithFlags";
    err = SG_CUDA(cudaEventCreateWithFlags(&x->fork, cudaEventDisableTiming));
    if (err != cudaSuccess) x->fork = NULL;
  }
  for (uint32_t h = 0; h < x->hop_count && err == cudaSuccess; h++) {
    call = "cudaSetDevice";
    err = sg__cuda_switch(&current, b->dev.ordinal[x->hop_index[h]]);
    if (err == cudaSuccess) {
      call = "cudaEventCreateWithFlags";
      err = SG_CUDA(cudaEventCreateWithFlags(&x->hop_join[h], cudaEventDisableTiming));
      if (err != cudaSuccess) x->hop_join[h] = NULL;
    }
  }
  if (current != restore) cudaSetDevice(restore);
  return err == cudaSuccess ? SG_OK : sg__cuda_fail(err, call, where);
}

sg_status sg__cuda_nccl_setup(sg__cuda_state *b, uint32_t index, const sg__node *node,
                              const char *fn, sg__cuda_nccl **out) {
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_where(b, fn, index, where);
  const sg__nccl *n = &node->u.nccl;
  sg__cuda_nccl *x = sg__calloc(1, sizeof *x);
  if (x) {
    x->call_count = n->call_count;
    x->call_device = sg__calloc(n->call_count, sizeof *x->call_device);
    x->call_index = sg__calloc(n->call_count, sizeof *x->call_index);
    x->hop_index = sg__calloc(n->call_count, sizeof *x->hop_index);
    x->hop_join = sg__calloc(n->call_count, sizeof *x->hop_join);
    x->streams = sg__calloc(n->call_count, sizeof *x->streams);
  }
  if (!x || !x->call_device || !x->call_index || !x->hop_index || !x->hop_join || !x->streams) {
    sg__cuda_nccl_free(x);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  }
  sg_status st = sg__nccl_check(n, x->call_device, where);
  const int node_device = b->dev.node_device[index];
  for (unsigned i = 0; i < n->call_count && !st; i++) {
    st = sg__cuda_devices_add(&b->dev, x->call_device[i], where, &x->call_index[i]);
    if (st || x->call_device[i] == node_device) continue;
    uint32_t h = 0;
    while (h < x->hop_count && x->hop_index[h] != x->call_index[i]) h++;
    if (h == x->hop_count) x->hop_index[x->hop_count++] = x->call_index[i];
  }
  if (!st) st = make_events(b, x, node_device, where);
  if (st) {
    sg__cuda_nccl_free(x);
    return st;
  }
  *out = x;
  return SG_OK;
}

sg_status sg__cuda_nccl_recheck(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                const char *fn) {
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_where(b, fn, index, where);
  const sg__cuda_nccl *x = b->nccl[index];
  int *devices = sg__calloc(fresh->u.nccl.call_count, sizeof *devices);
  if (!devices) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  sg_status st = sg__nccl_check(&fresh->u.nccl, devices, where);
  /* Same communicators (the front end checked), so the same devices. */
  for (unsigned i = 0; !st && i < fresh->u.nccl.call_count; i++)
    if (devices[i] != x->call_device[i])
      st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: call %u: the communicator now reports device %d (it was %d)", where, i,
                    devices[i], x->call_device[i]);
  sg__free(devices);
  return st;
}

sg_status sg__cuda_nccl_enqueue(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                cudaStream_t stream, const char *fn, char *msg, size_t cap) {
  sg__cuda_nccl *x = b->nccl[index];
  const int node_device = b->dev.node_device[index];
  char where[SG__LABEL_BYTES + 64];
  cudaError_t err = cudaSuccess;
  const char *call = "cudaEventRecord (before the NCCL group)";
  if (x->hop_count) err = SG_CUDA(cudaEventRecord(x->fork, stream));
  for (uint32_t h = 0; h < x->hop_count && err == cudaSuccess; h++) {
    call = "cudaStreamWaitEvent (a device's stream before the NCCL group)";
    err = SG_CUDA(cudaStreamWaitEvent(b->dev.stream[x->hop_index[h]], x->fork, 0));
  }
  if (err != cudaSuccess) {
    sg__cuda_format(msg, cap, err, call, sg__cuda_where(b, fn, index, where));
    return SG_ERR_CUDA;
  }
  for (unsigned i = 0; i < x->call_count; i++)
    x->streams[i] = x->call_device[i] == node_device ? (void *)stream
                                                     : (void *)b->dev.stream[x->call_index[i]];
  sg_status st = sg__nccl_enqueue(&node->u.nccl, x->streams, sg__cuda_where(b, fn, index, where),
                                  msg, cap);
  if (st) return st;
  for (uint32_t h = 0; h < x->hop_count && err == cudaSuccess; h++) {
    call = "cudaEventRecord (a device's stream after the NCCL group)";
    err = SG_CUDA(cudaEventRecord(x->hop_join[h], b->dev.stream[x->hop_index[h]]));
    if (err == cudaSuccess) {
      call = "cudaStreamWaitEvent (after the NCCL group)";
      err = SG_CUDA(cudaStreamWaitEvent(stream, x->hop_join[h], 0));
    }
  }
  if (err == cudaSuccess) return SG_OK;
  sg__cuda_format(msg, cap, err, call, sg__cuda_where(b, fn, index, where));
  return SG_ERR_CUDA;
}

sg_status sg__cuda_nccl_capture(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                const char *fn, cudaGraph_t *child) {
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_where(b, fn, index, where);
  const int node_device = b->dev.node_device[index];
  cudaStream_t origin = sg__cuda_device_stream(b, node_device);
  *child = NULL;
  int current;
  cudaError_t err = SG_CUDA(cudaGetDevice(&current));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGetDevice", where);
  const int restore = current;
  if ((err = sg__cuda_switch(&current, node_device)) != cudaSuccess)
    return sg__cuda_fail(err, "cudaSetDevice", where);
  /* Thread-local, as every capture of the library: another thread's
   * unsafe calls do not invalidate it. */
  err = SG_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  if (err != cudaSuccess) {
    if (current != restore) cudaSetDevice(restore);
    return sg__cuda_fail(err, "cudaStreamBeginCapture (the NCCL node's calls)", where);
  }
  char msg[SG_ERROR_MESSAGE_BYTES];
  sg_status st = sg__cuda_nccl_enqueue(b, index, node, origin, fn, msg, sizeof msg);
  cudaGraph_t g = NULL;
  err = SG_CUDA_AFTER(cudaStreamEndCapture(origin, &g));
  cudaSetDevice(restore); /* NCCL may have left another device current */
  if (st || err != cudaSuccess) {
    if (g) cudaGraphDestroy(g);
    cudaGetLastError(); /* a failed capture is not sticky */
    if (st) return sg__fail(st, "%s", msg);
    return sg__cuda_fail(err, "cudaStreamEndCapture (the NCCL node's calls)", where);
  }
  *child = g;
  return SG_OK;
}
