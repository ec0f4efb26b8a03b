/* Every copy node with a pageable host side (op SG__OP_STAGED_COPY: a
 * staging candidate, staging/staging.h) is carried out here, and nowhere
 * else:
 *
 *   sg__cuda_staged_copy_enqueue    streams mode, at every launch
 *   sg__cuda_staged_copy_add_node   graph mode, both builds, once per build
 *   sg__cuda_staged_copy_set_in_place  graph mode, a parameter update in place
 *   sg__cuda_staged_copy_queue      graph mode, at every launch: its pageable sides
 *   sg__cuda_staged_copy_prepare    before any update is applied
 *
 * Staging (src/staging) decides the route, by policy: a candidate is staged
 * through the pinned pool (a ring of chunks, staging/stage_run.h) or copied
 * through a registered buffer; in streams mode the DIRECT route
 * (SG_STAGING_NONE, small AUTO copies) takes the driver's own pageable
 * path, cudaMemcpyAsync. From a pageable source the driver copies the
 * source when the call is made, not when the stream gets there, so the
 * stream is first synchronised: otherwise data written by an earlier node
 * of the same launch (a host callback, a copy) would be read stale. To a
 * pageable destination the call returns once the copy is complete, which
 * already includes the earlier work. Both block the launching thread; that
 * is the cost pinned staging removes.
 *
 * Staged copies run as cudaMemcpyAsync on the copy's stream and host
 * callbacks on a helper stream beside it (stage_lanes.h), or as a child
 * graph of memcpy nodes and host nodes, in the order of stage_run.h. Only
 * what CUDA guarantees is relied on: work in a stream runs in order, a host
 * function runs after the work before it and the work after it waits for
 * it to return, and a graph's edges order its nodes. The callbacks make no
 * CUDA call and never wait for another callback (stage_run.h), so the
 * driver may run them on one thread for every stream without deadlock.
 *
 * In a CUDA graph there is no DIRECT route: the driver does not carry out a
 * memcpy node with a pageable side in graph order (on the H200 it read the
 * source before the host node that writes it had run; the regression test
 * StagingGpu.HardwareFindingPageableMemcpyNodeInAGraph), so staging stages
 * or registers every candidate of graph mode, whatever the policy, and the
 * build fails rather than leave one to a plain node (staging/policy.h).
 * Stream capture does not capture these copies; the capture build adds the
 * same node through here, so both builds share one path. A caller
 * capturing a streams-mode launch gets a pageable copy only through a
 * buffer registered already; the launch is refused otherwise. */
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/stage_lanes.h"
#include "cuda/stage_mem.h"
#include "cuda/staged_memops.h"
#include "staging/stage_conductor.h"

/* "sg_exec_launch: copy node 'c' (#3)": the start of every message here. */
static const char *where_of(const sg__cuda_state *b, const char *fn, uint32_t index,
                            char buf[SG__STAGING_LABEL_BYTES + 64]) {
  char label[SG__STAGING_LABEL_BYTES];
  sg__format(buf, SG__STAGING_LABEL_BYTES + 64, "%s: %s", fn,
             sg__staging_label(&b->nodes[index], index, label));
  return buf;
}

/* ---- callbacks (stage_run.h's protocol) --------------------------------- */

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

/* ---- the memop protocol's watch ---------------------------------------- */

/* Memop protocol: a copy the conductor had to release fails the launch
 * (sg_exec_wait returns it). The context is the backend's state, valid
 * until the executable goes (which disowns its copies first). */
static void report_failure(void *ctx, sg_status status, const char *message) {
  sg__cuda_state *b = ctx;
  sg__exec_fail(b->exec, status, "%s", message);
}

/* The conductor's check, made only after a copy was quiet for a while, on
 * the executable's first stream (a broken context shows on every stream of
 * it), with the executable's device current on the conductor's thread (so
 * that no other device's context is made there). Only an error that breaks
 * the context counts. Not a fault point: an injected "failure" would fail
 * and leak a healthy copy at a moment no test can choose. */
static int device_broken(void *ctx) {
  const sg__cuda_state *b = ctx;
  if (!b->streams) return 0;
  if (cudaSetDevice(b->device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  cudaError_t err = cudaStreamQuery(b->streams[0]);
  if (err == cudaSuccess || err == cudaErrorNotReady) return 0;
  cudaGetLastError();
  return sg__cuda_sticky(err);
}

static sg__stage_watch watch_for(sg__cuda_state *b) {
  return (sg__stage_watch){report_failure, b, device_broken, b};
}

/* ---- streams mode ------------------------------------------------------- */

/* Every DMA names its kind cudaMemcpyDefault: the device side may be device
 * or managed memory, and unified addressing tells them apart. */

static int stream_broken(void *stream) { return sg__cuda_stream_broken(stream); }

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

/* The copy through a registration made of pieces, one DMA per piece its
 * host range spans (each DMA then lies in one cudaHostRegister'ed range;
 * the driver may refuse a copy over a range it does not see pinned as
 * one). */
static cudaError_t copy_by_pieces(const sg__copy *c, sg__stage_dir dir,
                                  const sg__reg_binding *binding, cudaStream_t stream) {
  void *host, *device;
  sg__staging_sides(c, dir, &host, &device);
  uintptr_t base;
  size_t piece;
  sg__reg_binding_pieces(binding, &base, &piece);
  cudaError_t err = cudaSuccess;
  for (size_t at = 0; at < c->bytes && err == cudaSuccess;) {
    /* host + at >= base: the registration covers the host range */
    const size_t into = (size_t)((uintptr_t)host + at - base) % piece;
    size_t n = piece - into;
    if (n > c->bytes - at) n = c->bytes - at;
    err = SG_CUDA(cudaMemcpyAsync((char *)c->dst + at, (const char *)c->src + at, n,
                                  cudaMemcpyDefault, stream));
    at += n;
  }
  return err;
}

/* A copy through a registered buffer, per launch: the fence recorded after
 * it (`fence`) keeps the registration from eviction until the copy is done.
 * A captured copy has no fence (an event recorded in a capture cannot be
 * queried); its binding holds the registration instead. */
static sg_status enqueue_registered(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                    cudaStream_t stream, const char *where, int fence) {
  sg__reg_binding *binding = b->staging->nodes[index].reg;
  cudaError_t err = copy_by_pieces(c, b->staging->nodes[index].dir, binding, stream);
  if (err != cudaSuccess) {
    cudaGetLastError();
    sg__reg_use_end(binding, NULL, where);
    return sg__cuda_fail(err, "cudaMemcpyAsync", where);
  }
  sg_status s = sg__reg_use_end(binding, fence ? stream : NULL, where);
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
  sg__exec_count_copies(b->exec, 0, 1);
  return SG_OK;
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
static sg_status enqueue_captured(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                  cudaStream_t stream, const char *where) {
  sg__reg_binding *binding = b->staging->nodes[index].reg;
  if (!binding || !sg__reg_use_begin(binding))
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: the launch is being captured into a CUDA graph, and a copy with a "
                    "pageable side cannot be part of one as it is (CUDA does not run it in graph "
                    "order); use graph mode (SG_MODE_GRAPH stages it), pinned memory, or "
                    "SG_STAGING_REGISTER with one launch before the capture",
                    where);
  sg__reg_hold(binding);
  return enqueue_registered(b, index, c, stream, where, 0);
}

/* A staged copy on `stream`, its ring taken from the pool now (this may
 * wait for rings other launches give back; SG_ERR_POOL_EXHAUSTED when none
 * will come) and given back by its last host callback. Ordered on `stream`
 * like a cudaMemcpyAsync: it starts after the work before it, and the work
 * after it starts once the source has been read, or the destination
 * written. */
static sg_status enqueue_staged(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                cudaStream_t stream, const char *where) {
  sg__staging *st = b->staging;
  const sg__stage_dir dir = st->nodes[index].dir;
  void *host, *device;
  sg__staging_sides(c, dir, &host, &device);
  sg__stage_geometry g;
  sg__staging_geometry(st, dir, c->bytes, &g);
  sg__stage_run *run;
  sg_status s;
  if (st->protocol == SG__STAGE_MEMOPS) {
    s = sg__stage_run_new(st->pool, dir, host, device, &g, 0, stream_broken, stream, where, &run);
    if (!s && (s = sg__stage_run_use_memops(run, where))) sg__stage_run_free(run);
    if (s) return s;
    sg__staging_trace_run(st, run, index, b->nodes[index].name);
    const sg__stage_watch w = watch_for(b);
    const char *failed = NULL;
    cudaError_t e = sg__cuda_memops_enqueue(run, stream, &w, where, &failed); /* not ours now */
    if (e != cudaSuccess) return sg__cuda_fail(e, failed, where);
    sg__exec_count_copies(b->exec, 1, 0);
    return SG_OK;
  }
  sg__stage_lane *lane;
  s = sg__stage_lane_get(&b->lanes, stream, where, &lane);
  if (s) return s;
  s = sg__stage_run_new(st->pool, dir, host, device, &g, 0, stream_broken, stream, where, &run);
  if (s) return s;
  sg__staging_trace_run(st, run, index, b->nodes[index].name);
  int handed_off = 0; /* a callback frees the run */
  const char *call = NULL;
  cudaError_t err;
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
    return sg__cuda_fail(err, failed, where);
  }
  sg__exec_count_copies(b->exec, 1, 0);
  return SG_OK;
}

/* The driver's own pageable path in a stream (see the top of this file). */
static cudaError_t driver_enqueue(const sg__copy *c, cudaStream_t stream, const char **call) {
  if (c->src_memory == SG_MEMORY_HOST_PAGEABLE) {
    /* Unless a caller is capturing this launch into its own graph, where a
     * synchronisation is illegal (a candidate never gets here then: it is
     * refused or registered). */
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

/* Streams mode, on the launching thread. */
static sg_status enqueue(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                         cudaStream_t stream, const char *fn, int *direct) {
  char where[SG__STAGING_LABEL_BYTES + 64];
  where_of(b, fn, index, where);
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing(stream, &capture));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaStreamIsCapturing", where);
  }
  if (capture != cudaStreamCaptureStatusNone)
    return enqueue_captured(b, index, c, stream, where);
  sg__copy_route route;
  sg_status s = sg__staging_route(b->staging, index, c, where, &route);
  if (s) return s;
  switch (route) {
    case SG__ROUTE_REGISTERED: return enqueue_registered(b, index, c, stream, where, 1);
    case SG__ROUTE_STAGE: return enqueue_staged(b, index, c, stream, where);
    default: *direct = 1; return SG_OK;
  }
}

static sg_status copy_enqueue(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                              cudaStream_t stream, const char *fn, char *msg, size_t cap) {
  int direct = 0;
  sg_status st = enqueue(b, index, c, stream, fn, &direct);
  if (st) {
    sg__format(msg, cap, "%s", sg_last_error());
    return st;
  }
  if (!direct) return SG_OK;
  const char *call = "";
  cudaError_t err = driver_enqueue(c, stream, &call);
  /* The driver has the pageable range: registrations may touch it again. */
  sg__staging_direct_end(b->staging, index, c);
  if (err == cudaSuccess) return SG_OK;
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_format(msg, cap, err, call, sg__cuda_where(b, fn, index, where));
  return SG_ERR_CUDA;
}

sg_status sg__cuda_staged_copy_enqueue(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                       cudaStream_t stream, const char *fn, char *msg,
                                       size_t cap) {
  /* No piece of a background registration is pinned meanwhile. */
  sg__staging_enqueue_begin(b->staging);
  sg_status st = copy_enqueue(b, index, c, stream, fn, msg, cap);
  sg__staging_enqueue_end(b->staging);
  return st;
}

/* ---- graph mode ---------------------------------------------------------- */

/* A staged copy as a graph (stage_run.h, lag L, ring R): for host->device
 * gate(k) after gate(k-1) and DMA(k-L), DMA(k) after gate(k) and DMA(k-1);
 * for device->host DMA(k) after DMA(k-1) and post(k-L) (k >= R), post(k)
 * after DMA(k) and post(k-1). The last DMA (host->device) or post
 * (device->host) comes after every other node. `device` is the copy's
 * device side; `hosts` and `dmas` hold the chunks' nodes (chunks each). */
static cudaError_t build_child(sg__stage_run *run, char *device, cudaGraph_t child,
                               cudaGraphNode_t *dmas, cudaGraphNode_t *hosts, const char **call) {
  const uint32_t n = run->g.chunks, lag = run->g.lag;
  const int h2d = run->dir == SG__STAGE_H2D;
  cudaError_t err = cudaSuccess;
  for (uint32_t k = 0; k < n && err == cudaSuccess; k++) {
    char *dev = device + sg__stage_offset(run, k);
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
  return err;
}

/* The child graph of staged copy `c` through `run`: the same shape for
 * every copy the run serves, so that a new device side is an in-place
 * update of the child graph node. */
static sg_status child_make(sg__stage_run *run, const sg__copy *c, cudaGraph_t *out,
                            const char *where) {
  void *host, *device;
  sg__staging_sides(c, run->dir, &host, &device);
  cudaGraphNode_t *nodes = sg__calloc(2 * (size_t)run->g.chunks, sizeof *nodes);
  if (!nodes) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a graph", where);
  cudaGraph_t child = NULL;
  const char *call = "cudaGraphCreate";
  cudaError_t err = SG_CUDA(cudaGraphCreate(&child, 0));
  if (err == cudaSuccess)
    err = run->protocol == SG__STAGE_MEMOPS
              ? sg__cuda_memops_build(run, device, child, &call)
              : build_child(run, device, child, nodes, nodes + run->g.chunks, &call);
  sg__free(nodes);
  if (err != cudaSuccess) {
    if (child) cudaGraphDestroy(child);
    return sg__cuda_fail(err, call, where);
  }
  *out = child;
  return SG_OK;
}

/* The child graph of a staged copy, added after `deps`. */
static sg_status add_staged(sg__stage_run *run, const sg__copy *c, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t dep_count, cudaGraphNode_t *out,
                            const char *where) {
  cudaGraph_t child = NULL;
  sg_status st = child_make(run, c, &child, where);
  if (st) return st;
  cudaError_t err = SG_CUDA(cudaGraphAddChildGraphNode(out, graph, deps, dep_count, child));
  cudaGraphDestroy(child); /* the node holds its own copy */
  return err == cudaSuccess ? SG_OK : sg__cuda_fail(err, "cudaGraphAddChildGraphNode", where);
}

/* Records that the graph being built (`g`) uses state `p` for node `index`. */
static sg_status record_state(sg__cuda_state *b, sg__cuda_graph *g, uint32_t index, sg__pstate *p,
                              const char *where) {
  if (!g->staged && !(g->staged = sg__calloc(b->s->node_count, sizeof *g->staged)))
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a graph", where);
  g->staged[index] = p;
  return SG_OK;
}

sg_status sg__cuda_staged_copy_add_node(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                        cudaGraph_t graph, const cudaGraphNode_t *deps,
                                        size_t dep_count, cudaGraphNode_t *node, const char *fn,
                                        sg__cuda_graph *counts) {
  char where[SG__STAGING_LABEL_BYTES + 64];
  sg__pstate *p = sg__staging_find(b->staging, index, c);
  if (!p || p->route == SG__ROUTE_DIRECT)
    /* Every candidate's state is prepared before a build (creation, and
     * sg__cuda_staged_copy_prepare); a plain memcpy node would not run in
     * graph order, so a missing one fails the build instead. */
    return sg__fail(SG_ERR_POOL_EXHAUSTED,
                    "%s: no staging ring or registration was prepared for the copy, and a copy "
                    "with a pageable side cannot be a plain node of a CUDA graph",
                    where_of(b, fn, index, where));
  sg__cuda_where(b, fn, index, where);
  sg_status st = record_state(b, counts, index, p, where);
  if (st) return st;
  if (p->route == SG__ROUTE_REGISTERED) { /* pinned in place: a plain copy, held for the graph */
    cudaError_t err = SG_CUDA(cudaGraphAddMemcpyNode1D(node, graph, deps, dep_count, c->dst,
                                                       c->src, c->bytes, cudaMemcpyDefault));
    if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGraphAddMemcpyNode1D", where);
    counts->registered_copies++;
    return SG_OK;
  }
  st = add_staged(p->run, c, graph, deps, dep_count, node, where);
  if (!st) counts->staged_copies++;
  return st;
}

/* The device side of the staged copy behind graph node `node` becomes
 * `fresh`'s: the same child graph with other addresses, updated in place
 * (1), or refused by the driver (0: rebuild). */
static int set_child(sg__cuda_state *b, uint32_t index, sg__stage_run *run, const sg__copy *fresh) {
  char where[SG__LABEL_BYTES + 64];
  cudaGraph_t child = NULL;
  if (child_make(run, fresh, &child, sg__cuda_where(b, "sg_exec_set_copy", index, where))) {
    cudaGetLastError();
    return 0; /* the rebuild reports it, if it fails too */
  }
  cudaError_t err =
      SG_CUDA(cudaGraphExecChildGraphNodeSetParams(b->g.exec, b->g.nodes[index], child));
  cudaGraphDestroy(child);
  if (err == cudaSuccess) return 1;
  cudaGetLastError(); /* a refused update is not sticky */
  return 0;
}

int sg__cuda_staged_copy_set_in_place(sg__cuda_state *b, uint32_t index, const sg__copy *now,
                                      const sg__copy *fresh) {
  sg__staging *st = b->staging;
  sg__pstate *before = b->g.staged ? b->g.staged[index] : NULL;
  /* No build is under way and the live graph uses `before`: other states
   * are unused (an in-place update never changes the state a graph uses,
   * so launches in flight use `before` too). */
  if (before) sg__staging_gc(st, index, before, sg__staging_find(st, index, fresh));
  /* Normally prepared already (sg__cuda_staged_copy_prepare refuses the
   * update when it cannot be); if not, the rebuild this asks for fails in
   * sg__cuda_staged_copy_add_node rather than build a pageable memcpy node. */
  char where[SG__STAGING_LABEL_BYTES + 64];
  if (sg__staging_prepare(st, index, b->nodes[index].name, fresh,
                          where_of(b, "sg_exec_set_copy", index, where)))
    cudaGetLastError();
  sg__pstate *after = sg__staging_find(st, index, fresh);
  /* Another size or direction (another ring), or another route or
   * registered buffer: rebuilt, after the launches in flight (which may
   * use the old ring or registration) are over. */
  if (!before || before != after) return 0;
  void *host_now, *device_now, *host_fresh, *device_fresh;
  sg__staging_sides(now, before->dir, &host_now, &device_now);
  sg__staging_sides(fresh, after->dir, &host_fresh, &device_fresh);
  if (device_now == device_fresh && host_now == host_fresh) return 1;
  if (after->route == SG__ROUTE_REGISTERED) { /* the same buffer, another device side */
    cudaError_t err = SG_CUDA(cudaGraphExecMemcpyNodeSetParams1D(
        b->g.exec, b->g.nodes[index], fresh->dst, fresh->src, fresh->bytes, cudaMemcpyDefault));
    if (err == cudaSuccess) return 1;
    cudaGetLastError();
    return 0;
  }
  /* Staged: the pageable side comes with each launch (sg__cuda_staged_copy_queue). */
  return device_now == device_fresh ? 1 : set_child(b, index, after->run, fresh);
}

void sg__cuda_staged_copy_collect(sg__cuda_state *b, uint32_t index) {
  sg__staging_gc(b->staging, index, b->g.staged ? b->g.staged[index] : NULL, NULL);
}

sg_status sg__cuda_staged_copy_prepare(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                       sg__cuda_op op, sg__stage_dir dir, const char *fn) {
  if (fresh->kind != SG__NODE_COPY) return SG_OK;
  char where[SG__STAGING_LABEL_BYTES + 64];
  where_of(b, "sg_exec_set_copy", index, where);
  /* Graph mode keeps the old state for the graph built with it until the
   * update is done one way or the other (sg__staging_gc). */
  return sg__staging_update(b->staging, index, b->nodes[index].name, &fresh->u.copy, dir,
                            b->mode != SG_MODE_GRAPH, where);
}

/* ---- graph launches ------------------------------------------------------ */

/* The ring of node `i` in the live graph, or NULL when it has none. */
static sg__stage_run *live_run(const sg__cuda_state *b, uint32_t i) {
  const sg__pstate *p = b->g.staged ? b->g.staged[i] : NULL;
  return p && p->route == SG__ROUTE_STAGE ? p->run : NULL;
}

sg_status sg__cuda_staged_copy_launch_check(sg__cuda_state *b, cudaStream_t stream) {
  sg__staging *st = b->staging;
  if (!st || !st->persistent || st->protocol != SG__STAGE_MEMOPS || !stream) return SG_OK;
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing(stream, &capture));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaStreamIsCapturing", "sg_exec_launch");
  }
  if (capture == cudaStreamCaptureStatusNone) return SG_OK;
  for (uint32_t i = 0; i < b->s->node_count; i++) {
    if (!live_run(b, i)) continue;
    char label[SG__STAGING_LABEL_BYTES];
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "sg_exec_launch: %s: the launch is being captured into a CUDA graph, and this "
                    "staged copy is served per launch by the host (memop protocol), which a "
                    "captured graph replayed later would not get; set "
                    "SG_STAGING_PROTOCOL=callbacks before creating the executable, register the "
                    "buffer (SG_STAGING_REGISTER), or use pinned memory",
                    sg__staging_label(&b->nodes[i], i, label));
  }
  return SG_OK;
}

sg_status sg__cuda_staged_copy_queue(sg__cuda_state *b) {
  if (!b->g.staged) return SG_OK;
  char where[SG__STAGING_LABEL_BYTES + 64];
  for (uint32_t i = 0; i < b->s->node_count; i++) {
    sg__stage_run *run = live_run(b, i);
    if (run && sg__stage_launch_reserve(run, where_of(b, "sg_exec_launch", i, where)))
      return SG_ERR_OUT_OF_MEMORY; /* nothing queued yet */
  }
  const sg__stage_watch w = watch_for(b);
  for (uint32_t i = 0; i < b->s->node_count; i++) {
    sg__stage_run *run = live_run(b, i);
    if (!run) continue;
    void *host, *device;
    sg__staging_sides(&b->nodes[i].u.copy, run->dir, &host, &device);
    sg__stage_launch_queue(run, host);
    /* The conductor waits for the device's `go`: serving starts only when
     * the graph gets there, whenever cudaGraphLaunch returns. */
    if (run->protocol == SG__STAGE_MEMOPS)
      sg__stage_arm(run, &w, where_of(b, "sg_exec_launch", i, where));
  }
  return SG_OK;
}

void sg__cuda_staged_copy_launched(sg__cuda_state *b, int launched) {
  if (!b->g.staged || launched) return;
  for (uint32_t i = 0; i < b->s->node_count; i++) {
    sg__stage_run *run = live_run(b, i);
    if (!run) continue;
    if (run->protocol == SG__STAGE_MEMOPS) sg__stage_unarm(run);
    sg__stage_launch_unqueue(run);
  }
}
