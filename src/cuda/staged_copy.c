/* The CUDA backend's seam into staging (cuda_staging.h): staged copies as
 * cudaMemcpyAsync on the copy's stream and host callbacks on a helper
 * stream beside it (cuda_lanes.h), or as a child graph of memcpy nodes and
 * host nodes, in the order of stage_run.h.
 *
 * Only what CUDA guarantees is relied on: work in a stream runs in order, a
 * host function runs after the work before it and the work after it waits
 * for it to return, and a graph's edges order its nodes. The callbacks make
 * no CUDA call and never wait for another callback (stage_run.h), so the
 * driver may run them on one thread for every stream without deadlock. */
#include "cuda/staged_copy.h"

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h" /* the executable's streams, for the broken-device check */
#include "cuda/stage_lanes.h"
#include "cuda/staged_memops.h"
#include "staging/pinned_mem.h"
#include "staging/stage_conductor.h"

static void CUDART_CB h2d_gate_cb(void *arg) {
  sg__stage_step *step = arg;
  sg__stage_h2d_gate(step->run, step->chunk);
}

static void CUDART_CB d2h_post_cb(void *arg) {
  sg__stage_step *step = arg;
  sg__stage_d2h_post(step->run, step->chunk);
}

/* The last post of a per-launch run: the destination is complete and the
 * ring goes back to the pool. */
static void CUDART_CB d2h_last_cb(void *arg) {
  sg__stage_step *step = arg;
  sg__stage_run *run = step->run;
  sg__stage_d2h_post(run, step->chunk);
  sg__stage_run_free(run);
}

/* After a per-launch host->device run's last DMA, or after whatever part of
 * a run was enqueued before an enqueue failed. */
static void CUDART_CB finish_cb(void *arg) { sg__stage_run_free(arg); /* quiesces first */ }

/* Every DMA names its kind cudaMemcpyDefault: the device side may be device
 * or managed memory, and unified addressing tells them apart. */

static sg_status fail(cudaError_t err, const char *call, const char *where, const char *label) {
  char context[SG_ERROR_MESSAGE_BYTES];
  sg__format(context, sizeof context, "%s: %s", where, label);
  return sg__cuda_fail(err, call, context);
}

static int stream_broken(void *stream) { return sg__staging_cuda_stream_broken(stream); }

/* Memop protocol: a copy the conductor had to release fails the launch
 * (sg_exec_wait returns it); its device side is checked on `stream`, one
 * of the executable's own streams (valid until the executable goes, which
 * disowns its copies first). */
static void report_failure(void *ctx, sg_status status, const char *message) {
  sg__staging *st = ctx;
  sg__exec_fail(st->exec, status, "%s", message);
}

/* The conductor's check, made only after a copy was quiet for a while, on
 * the executable's first stream (a broken context shows on every stream of
 * it), with the executable's device current on the conductor's thread (so
 * that no other device's context is made there). Only an error that breaks
 * the context counts. Not a fault point: an injected "failure" would fail
 * and leak a healthy copy at a moment no test can choose. */
static int device_broken(void *ctx) {
  const sg__staging *st = ctx;
  const sg__cuda_state *b = st->exec->backend;
  if (!b || !b->streams) return 0;
  if (cudaSetDevice(st->exec->options.device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  cudaError_t err = cudaStreamQuery(b->streams[0]);
  if (err == cudaSuccess || err == cudaErrorNotReady) return 0;
  cudaGetLastError();
  return sg__cuda_sticky(err);
}

static sg__stage_watch watch_for(sg__staging *st) {
  return (sg__stage_watch){report_failure, st, device_broken, st};
}

/* `to` waits for what `from` has been given so far, through `ev`. */
static cudaError_t order(cudaStream_t from, cudaEvent_t ev, cudaStream_t to, const char **call) {
  *call = "cudaEventRecord (staging)";
  cudaError_t err = SG_CUDA(cudaEventRecord(ev, from));
  if (err != cudaSuccess) return err;
  *call = "cudaStreamWaitEvent (staging)";
  return SG_CUDA(cudaStreamWaitEvent(to, ev, 0));
}

static cudaError_t host_fn(cudaStream_t stream, cudaHostFn_t fn, void *arg, const char **call) {
  *call = "cudaLaunchHostFunc";
  return SG_CUDA(cudaLaunchHostFunc(stream, fn, arg));
}

static cudaError_t dma(cudaStream_t stream, void *dst, const void *src, size_t len,
                       const char **call) {
  *call = "cudaMemcpyAsync";
  return SG_CUDA(cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, stream));
}

/* Host->device on lane `l` (stage_run.h, lag L): the helper stream runs the
 * gates, gate(k) after DMA(k-L); the copy's stream runs DMA(k) after
 * gate(k). */
static cudaError_t enqueue_h2d(sg__stage_run *run, sg__stage_lane *l, const char **call) {
  const uint32_t n = run->g.chunks, lag = run->g.lag;
  cudaError_t err = order(l->stream, l->start, l->helper, call); /* the source is ready */
  for (uint32_t k = 0; k < n && err == cudaSuccess; k++) {
    if (k >= lag) {
      *call = "cudaStreamWaitEvent (staging)";
      err = SG_CUDA(cudaStreamWaitEvent(l->helper, l->dma_done[k % lag], 0));
    }
    if (err == cudaSuccess) err = host_fn(l->helper, h2d_gate_cb, &run->steps[k], call);
    if (err == cudaSuccess) err = order(l->helper, l->gated, l->stream, call);
    if (err == cudaSuccess)
      err = dma(l->stream, run->device + sg__stage_offset(run, k), sg__stage_slot(run, k),
                sg__stage_len(run, k), call);
    if (err == cudaSuccess && k + lag < n) {
      *call = "cudaEventRecord (staging)";
      err = SG_CUDA(cudaEventRecord(l->dma_done[k % lag], l->stream));
    }
  }
  return err;
}

/* Device->host on lane `l`: the copy's stream runs DMA(k), k >= R, after
 * post(k-L); the helper stream runs post(k) after DMA(k), the last one
 * freeing a per-launch (`transient`) run (*handed_off is set once it is
 * enqueued); the copy's stream ends once the last post has returned. */
static cudaError_t enqueue_d2h(sg__stage_run *run, sg__stage_lane *l, int transient,
                               int *handed_off, const char **call) {
  const uint32_t n = run->g.chunks, lag = run->g.lag;
  cudaError_t err = cudaSuccess;
  for (uint32_t k = 0; k < n && err == cudaSuccess; k++) {
    if (k >= run->g.ring) {
      *call = "cudaStreamWaitEvent (staging)";
      err = SG_CUDA(cudaStreamWaitEvent(l->stream, l->posted[(k - lag) % lag], 0));
    }
    if (err == cudaSuccess)
      err = dma(l->stream, sg__stage_slot(run, k), run->device + sg__stage_offset(run, k),
                sg__stage_len(run, k), call);
    if (err == cudaSuccess) err = order(l->stream, l->dma_done[0], l->helper, call);
    const int last = transient && k + 1 == n;
    if (err == cudaSuccess)
      err = host_fn(l->helper, last ? d2h_last_cb : d2h_post_cb, &run->steps[k], call);
    if (err == cudaSuccess && last) *handed_off = 1;
    if (err == cudaSuccess) {
      *call = "cudaEventRecord (staging)";
      err = SG_CUDA(cudaEventRecord(l->posted[k % lag], l->helper));
    }
  }
  if (err == cudaSuccess) {
    *call = "cudaStreamWaitEvent (staging)";
    err = SG_CUDA(cudaStreamWaitEvent(l->stream, l->posted[(n - 1) % lag], 0));
  }
  return err;
}

/* A per-launch run whose enqueue failed part way: what went in on either
 * stream still runs and still uses the run, so it is freed after both. */
static void abandon(sg__stage_run *run, sg__stage_lane *l) {
  cudaGetLastError(); /* the failure is reported through the status */
  const char *call;
  if (order(l->helper, l->gated, l->stream, &call) == cudaSuccess &&
      host_fn(l->stream, finish_cb, run, &call) == cudaSuccess)
    return;
  cudaGetLastError();
  if (SG_CUDA(cudaStreamSynchronize(l->helper)) == cudaSuccess &&
      SG_CUDA(cudaStreamSynchronize(l->stream)) == cudaSuccess) {
    sg__stage_run_free(run);
    return;
  }
  cudaGetLastError();
  /* The context is broken. Host functions are not called after a context
   * error, so nothing will touch the run again, but whether the device
   * still reads the ring is unknowable: the run and its ring are left
   * allocated rather than freed under it. */
}

/* A copy through a registered buffer, per launch: the fence recorded after
 * it (`fence`) keeps the registration from eviction until the copy is done.
 * A captured copy has no fence (an event recorded in a capture cannot be
 * queried); its binding holds the registration instead. */
static sg_status enqueue_registered(sg__staging *st, uint32_t index, cudaStream_t stream,
                                    const char *where, const char *label, const char *context,
                                    int fence) {
  const sg__copy *c = &st->exec->snap.nodes[index].u.copy;
  sg__reg_binding *b = st->nodes[index].reg;
  cudaError_t err = SG_CUDA(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDefault, stream));
  if (err != cudaSuccess) {
    cudaGetLastError();
    sg__reg_use_end(b, NULL, context);
    return fail(err, "cudaMemcpyAsync", where, label);
  }
  sg_status s = sg__reg_use_end(b, fence ? stream : NULL, context);
  if (s) {
    /* No fence: wait for the copy here instead, so that the registration
     * is never released under it. */
    char message[SG_ERROR_MESSAGE_BYTES];
    sg__format(message, sizeof message, "%s", sg_last_error());
    cudaGetLastError();
    cudaStreamSynchronize(stream);
    cudaGetLastError();
    return sg__fail(s, "%s", message);
  }
  sg__staging_count(st, SG__ROUTE_REGISTERED);
  return SG_OK;
}

/* Per-launch regime: the node's parameters may have changed since the
 * route bookkeeping was made (streams-mode updates only touch the
 * snapshot); start it again if so. */
static void refresh(sg__staging *st, uint32_t index) {
  sg__staged_node *sn = &st->nodes[index];
  const sg__copy *c = &st->exec->snap.nodes[index].u.copy;
  if (sn->seen_src == c->src && sn->seen_dst == c->dst && sn->seen_bytes == c->bytes) return;
  sg__staging_update_node(st, index, &st->exec->snap.nodes[index]);
  sn->seen_src = c->src;
  sn->seen_dst = c->dst;
  sn->seen_bytes = c->bytes;
}

/* A caller is capturing this streams-mode launch into a graph of its own.
 * The copy becomes a node of that graph, which may run any number of times
 * after this launch returns: a per-launch ring cannot serve it, and a memcpy
 * node with a pageable side does not run in graph order (policy.h). A
 * buffer registered already (REGISTER, or AUTO once it registered, on an
 * uncaptured launch) can go in as a plain copy: the node holds the
 * registration from now on, until its parameters change or the executable
 * is destroyed, so that the caller's graph never reads unpinned pages.
 * Nothing here may allocate or register: that is not allowed while the
 * caller's thread is capturing. */
static sg_status enqueue_captured(sg__staging *st, uint32_t index, cudaStream_t stream,
                                  const char *where, const char *label, const char *context) {
  sg__reg_binding *b = st->nodes[index].reg;
  if (!b || !sg__reg_use_begin(b))
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: %s: the launch is being captured into a CUDA graph, and a copy with a "
                    "pageable side cannot be part of one as it is (CUDA does not run it in graph "
                    "order); use graph mode (SG_MODE_GRAPH stages it), pinned memory, or "
                    "SG_STAGING_REGISTER with one launch before the capture",
                    where, label);
  sg__reg_hold(b);
  return enqueue_registered(st, index, stream, where, label, context, 0);
}

sg_status sg__staging_cuda_enqueue(sg__staging *st, uint32_t index, cudaStream_t stream,
                                   const char *where, int *taken) {
  *taken = 0;
  if (!st || index >= st->node_count || st->persistent) return SG_OK;
  refresh(st, index);
  sg__staged_node *sn = &st->nodes[index];
  if (!sn->dir) return SG_OK;
  const sg__copy *c = &st->exec->snap.nodes[index].u.copy;
  char label[SG__LABEL_BYTES + 16];
  sg__staging_label(st, index, label);

  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing(stream, &capture));
  *taken = 1;
  if (err != cudaSuccess) {
    cudaGetLastError();
    return fail(err, "cudaStreamIsCapturing", where, label);
  }
  char context[SG__LABEL_BYTES + 64];
  sg__format(context, sizeof context, "%s: %s", where, label);
  if (capture != cudaStreamCaptureStatusNone)
    return enqueue_captured(st, index, stream, where, label, context);

  sg__copy_route route;
  sg_status s = sg__staging_route(st, index, context, &route);
  if (s) return s;
  if (route == SG__ROUTE_DIRECT) {
    *taken = 0;
    return SG_OK;
  }
  if (route == SG__ROUTE_REGISTERED)
    return enqueue_registered(st, index, stream, where, label, context, 1);

  const char *call = NULL;
  void *host, *device;
  sg__staging_sides(c, sn->dir, &host, &device);
  sg__stage_geometry g;
  sg__staging_geometry(st, sn->dir, c->bytes, &g);
  sg__stage_run *run;
  if (st->protocol == SG__STAGE_MEMOPS) {
    s = sg__stage_run_new(st->pool, sn->dir, host, device, &g, 0, stream_broken, stream, context,
                          &run);
    if (!s && (s = sg__stage_run_use_memops(run, context))) sg__stage_run_free(run);
    if (s) return s;
    sg__staging_trace_run(st, run, index);
    const sg__stage_watch w = watch_for(st);
    err = sg__cuda_memops_enqueue(run, stream, &w, context, &call); /* the run is not ours now */
    if (err != cudaSuccess) return fail(err, call, where, label);
    sg__staging_count(st, SG__ROUTE_STAGE);
    return SG_OK;
  }
  sg__stage_lane *lane;
  err = sg__stage_lane_get(&st->lanes, stream, &lane, &call);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return fail(err, call, where, label);
  }
  s = sg__stage_run_new(st->pool, sn->dir, host, device, &g, 0, stream_broken, stream, context,
                        &run);
  if (s) return s;
  sg__staging_trace_run(st, run, index);
  int handed_off = 0; /* a callback frees the run */
  if (run->dir == SG__STAGE_H2D) {
    err = enqueue_h2d(run, lane, &call);
    /* after the last DMA: the ring goes back to the pool */
    if (err == cudaSuccess) err = host_fn(stream, finish_cb, run, &call);
  } else {
    err = enqueue_d2h(run, lane, 1, &handed_off, &call);
  }
  if (err != cudaSuccess) {
    const char *failed = call;
    if (handed_off) cudaGetLastError();
    else abandon(run, lane);
    return fail(err, failed, where, label);
  }
  sg__staging_count(st, SG__ROUTE_STAGE);
  return SG_OK;
}

/* A staged copy as a graph (stage_run.h, lag L, ring R): for host->device
 * gate(k) after gate(k-1) and DMA(k-L), DMA(k) after gate(k) and DMA(k-1);
 * for device->host DMA(k) after DMA(k-1) and post(k-L) (k >= R), post(k)
 * after DMA(k) and post(k-1). The last DMA (host->device) or post
 * (device->host) comes after every other node. */
static cudaError_t build_child(sg__stage_run *run, cudaGraph_t child, const char **call) {
  const uint32_t n = run->g.chunks, lag = run->g.lag;
  cudaGraphNode_t *dmas = sg__calloc(2 * (size_t)n, sizeof *dmas);
  if (!dmas) {
    *call = "staging (out of host memory for a graph)";
    return cudaErrorMemoryAllocation;
  }
  cudaGraphNode_t *hosts = dmas + n; /* gates or posts */
  const int h2d = run->dir == SG__STAGE_H2D;
  cudaError_t err = cudaSuccess;
  for (uint32_t k = 0; k < n && err == cudaSuccess; k++) {
    char *dev = run->device + sg__stage_offset(run, k);
    char *slot = sg__stage_slot(run, k);
    size_t len = sg__stage_len(run, k);
    struct cudaHostNodeParams host = {h2d ? h2d_gate_cb : d2h_post_cb, &run->steps[k]};
    cudaGraphNode_t deps[2];
    size_t nd = 0;
    if (h2d) {
      if (k > 0) deps[nd++] = hosts[k - 1];
      if (k >= lag) deps[nd++] = dmas[k - lag];
      *call = "cudaGraphAddHostNode";
      err = SG_CUDA(cudaGraphAddHostNode(&hosts[k], child, nd ? deps : NULL, nd, &host));
      if (err != cudaSuccess) break;
      nd = 0;
      deps[nd++] = hosts[k];
      if (k > 0) deps[nd++] = dmas[k - 1];
      *call = "cudaGraphAddMemcpyNode1D";
      err = SG_CUDA(cudaGraphAddMemcpyNode1D(&dmas[k], child, deps, nd, dev, slot, len,
                                             cudaMemcpyDefault));
    } else {
      if (k > 0) deps[nd++] = dmas[k - 1];
      if (k >= run->g.ring) deps[nd++] = hosts[k - lag];
      *call = "cudaGraphAddMemcpyNode1D";
      err = SG_CUDA(cudaGraphAddMemcpyNode1D(&dmas[k], child, nd ? deps : NULL, nd, slot, dev,
                                             len, cudaMemcpyDefault));
      if (err != cudaSuccess) break;
      nd = 0;
      deps[nd++] = dmas[k];
      if (k > 0) deps[nd++] = hosts[k - 1];
      *call = "cudaGraphAddHostNode";
      err = SG_CUDA(cudaGraphAddHostNode(&hosts[k], child, nd ? deps : NULL, nd, &host));
    }
  }
  sg__free(dmas);
  return err;
}

cudaError_t sg__staging_cuda_add_node(sg__staging *st, uint32_t index, const sg__copy *c,
                                      cudaGraph_t graph, const cudaGraphNode_t *deps,
                                      size_t dep_count, cudaGraphNode_t *out, const char **call,
                                      int *taken) {
  *taken = 0;
  if (!st || !st->persistent || index >= st->node_count || !sg__staging_classify(st, c))
    return cudaSuccess;
  *taken = 1;
  const sg__pstate *p = sg__staging_find(st, index, c);
  if (!p || p->route == SG__ROUTE_DIRECT) {
    /* Every candidate's state is prepared before a build (creation, and
     * sg__staging_prepare_update); a plain memcpy node would not run in
     * graph order, so a missing one fails the build instead. */
    *call = "staging (no prepared ring or registration for a copy with a pageable side)";
    return cudaErrorInvalidValue;
  }
  if (p->route == SG__ROUTE_REGISTERED) { /* pinned in place: a plain copy, held for the graph */
    *call = "cudaGraphAddMemcpyNode1D";
    return SG_CUDA(cudaGraphAddMemcpyNode1D(out, graph, deps, dep_count, c->dst, c->src, c->bytes,
                                            cudaMemcpyDefault));
  }
  cudaGraph_t child = NULL;
  *call = "cudaGraphCreate";
  cudaError_t err = SG_CUDA(cudaGraphCreate(&child, 0));
  if (err == cudaSuccess)
    err = p->run->protocol == SG__STAGE_MEMOPS ? sg__cuda_memops_build(p->run, child, call)
                                               : build_child(p->run, child, call);
  if (err == cudaSuccess) {
    *call = "cudaGraphAddChildGraphNode";
    err = SG_CUDA(cudaGraphAddChildGraphNode(out, graph, deps, dep_count, child));
  }
  if (child) cudaGraphDestroy(child); /* the node holds its own copy */
  return err;
}

cudaError_t sg__staging_cuda_set_node(sg__staging *st, uint32_t index, const sg__copy *fresh,
                                      const char **call, int *taken) {
  *taken = 0;
  if (!st || !st->persistent || index >= st->node_count) return cudaSuccess;
  /* No build is under way and the live graph was built from the
   * snapshot's parameters: other states are unused. */
  sg__staging_gc(st, index, fresh);
  const sg__copy *now = &st->exec->snap.nodes[index].u.copy;
  char where[SG__LABEL_BYTES + 64], label[SG__LABEL_BYTES + 16];
  sg__format(where, sizeof where, "sg_exec_set_copy: %s", sg__staging_label(st, index, label));
  /* Normally prepared already (sg__staging_prepare_update refuses the
   * update when it cannot be); if not, the rebuild this asks for fails in
   * sg__staging_cuda_add_node rather than build a pageable memcpy node. */
  if (sg__staging_prepare(st, index, fresh, where)) cudaGetLastError();
  if (!sg__staging_classify(st, now) && !sg__staging_classify(st, fresh))
    return cudaSuccess; /* the seam updates the plain copy */
  const sg__pstate *before = sg__staging_find(st, index, now);
  const sg__pstate *after = sg__staging_find(st, index, fresh);
  *taken = 1;
  *call = "staging (a staged copy's ring and pointers are baked into the graph)";
  return before && before == after ? cudaSuccess : cudaErrorNotSupported;
}

void sg__staging_cuda_release(sg__staging *st) {
  if (!st) return;
  sg__staging_disown(st, st); /* before the streams the conductor may query go */
  sg__stage_lanes_free(st->lanes);
  st->lanes = NULL;
}

sg_status sg__staging_cuda_graph_launch_check(sg__staging *st, cudaStream_t stream) {
  if (!st || !st->persistent || st->protocol != SG__STAGE_MEMOPS || !stream) return SG_OK;
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing(stream, &capture));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaStreamIsCapturing", "sg_exec_launch");
  }
  if (capture == cudaStreamCaptureStatusNone) return SG_OK;
  for (uint32_t i = 0; i < st->node_count; i++) {
    const sg__pstate *p = sg__staging_find(st, i, &st->exec->snap.nodes[i].u.copy);
    if (!st->nodes[i].states || !p || p->route != SG__ROUTE_STAGE) continue;
    char label[SG__LABEL_BYTES + 16];
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "sg_exec_launch: %s: the launch is being captured into a CUDA graph, and this "
                    "staged copy is served per launch by the host (memop protocol), which a "
                    "captured graph replayed later would not get; set "
                    "SG_STAGING_PROTOCOL=callbacks before creating the executable, register the "
                    "buffer (SG_STAGING_REGISTER), or use pinned memory",
                    sg__staging_label(st, i, label));
  }
  return SG_OK;
}

void sg__staging_cuda_graph_launched(sg__staging *st) {
  if (!st || !st->persistent || st->protocol != SG__STAGE_MEMOPS) return;
  const sg__stage_watch w = watch_for(st);
  sg__staging_arm_launch(st, &w);
}
