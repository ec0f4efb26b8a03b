/* The CUDA backend's entry points (sg__backend_ops): creation and node
 * checks, dispatch to streams or graph mode, waiting, querying, parameter
 * updates and traces. Entry points that create, enqueue or change CUDA work
 * make the executable's device current and restore the caller's after;
 * waits and queries need no current device. */
#include <stdio.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/stage_lanes.h"
#include "cuda/stage_mem.h"

/* ---- waiting ------------------------------------------------------------ */

void sg__cuda_collect_trace(sg__cuda_state *b, const char *fn) {
  if (!b->tracer.trace) return;
  if (sg__exec_has_failed(b->exec)) {
    sg__cuda_tracer_forget(&b->tracer); /* a failed launch's events may never complete */
    return;
  }
  int previous;
  if (sg__cuda_enter(b->device, &previous, fn)) return;
  sg__cuda_tracer_collect(&b->tracer, b->home);
  sg__cuda_leave(b->device, previous);
}

sg_status sg__cuda_wait_idle(sg__cuda_state *b, const char *fn) {
  return sg__cuda_wait_through(b, b->launches, 1, fn);
}

static sg_status cuda_wait(void *state) { return sg__cuda_wait_idle(state, "sg_exec_wait"); }

static sg_status cuda_query(void *state) {
  sg__cuda_state *b = state;
  return sg__cuda_wait_through(b, b->launches, 0, "sg_exec_query");
}

static sg_status cuda_wait_launch(void *state, uint64_t launch) {
  return sg__cuda_wait_through(state, launch, 1, "sg_exec_wait_launch");
}

static sg_status cuda_query_launch(void *state, uint64_t launch) {
  return sg__cuda_wait_through(state, launch, 0, "sg_exec_query_launch");
}

/* A state built ahead (sg_exec_update_async) numbers its launches on from
 * the executable's count at the switch, every earlier launch having ended. */
static void cuda_renumber(void *state, uint64_t launches) {
  sg__cuda_state *b = state;
  b->launches = b->finished = launches;
}

static sg_status cuda_follow(void *state, void *old) {
  return sg__cuda_follow(state, old, "sg_exec_launch");
}

static void cuda_track_launches(void *state) {
  sg__cuda_state *b = state;
  b->track = 1;
}

/* ---- creation and destruction ------------------------------------------ */

static void free_backend(sg__cuda_state *b) {
  /* Before the streams the conductor may query go. */
  sg__staging_disown(b->staging, b);
  sg__cuda_graph_free(&b->g);
  sg__cuda_graph_free(&b->plain);
  sg__cuda_tracer_free(&b->tracer); /* after the graph whose nodes record its events */
  sg__cuda_marks_free(b);
  sg__cuda_streams_free(b);
  sg__cuda_pdl_free(b);
  sg__stage_lanes_free(b->lanes);
  sg__staging_destroy(b->staging); /* after the graph that names its rings */
  if (b->work)
    for (uint32_t n = 0; n < b->s->node_count; n++) sg__free(b->work[n]);
  if (b->nccl)
    for (uint32_t n = 0; n < b->s->node_count; n++) sg__cuda_nccl_free(b->nccl[n]);
  sg__cuda_peer_bounce_free(b);
  sg__cuda_devices_free(&b->dev);
  sg__cuda_work_reap(b, UINT64_MAX);
  sg__free(b->work);
  sg__free(b->nccl);
  sg__free(b->op);
  sg__cuda_conds_free(b);
  sg__free(b);
}

static void cuda_destroy(void *state) {
  sg__cuda_state *b = state;
  if (!b) return;
  const int device = b->device;
  int previous = device;
  cudaGetDevice(&previous);
  if (previous != device) cudaSetDevice(device);
  sg__cuda_drain(b); /* host work still queued would read payloads freed below */
  free_backend(b);
  sg__cuda_leave(device, previous);
}

/* Checks every node, gives each its op, makes the host-work payloads and
 * hands the copies to staging (whose copy threads add spans to `trace`). */
static sg_status setup_nodes(sg__cuda_state *b, const sg_staging_options *staging,
                             struct sg__trace *trace, const char *fn) {
  size_t n = b->s->node_count ? b->s->node_count : 1;
  b->op = sg__calloc(n, sizeof *b->op);
  b->work = sg__calloc(n, sizeof *b->work);
  b->nccl = sg__calloc(n, sizeof *b->nccl);
  b->bounce = sg__calloc(n, sizeof *b->bounce);
  if (!b->op || !b->work || !b->nccl || !b->bounce)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg__stage_dir *dirs = sg__calloc(n, sizeof *dirs);
  if (!dirs) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_status st = SG_OK;
  for (uint32_t i = 0; i < b->s->node_count && !st; i++) {
    const sg__node *node = &b->nodes[i];
    sg__cuda_op op;
    st = sg__cuda_check_node(b, node, i, fn, &op, &dirs[i]);
    if (st) break;
    b->op[i] = (uint8_t)op;
    if (op == SG__OP_HOST_WORK) {
      char label[SG__LABEL_BYTES];
      sg__node_label(node, i, label);
      st = sg__cuda_work_new(b, node, label, fn, &b->work[i]);
    } else if (op == SG__OP_NCCL) {
      st = sg__cuda_nccl_setup(b, i, node, fn, &b->nccl[i]);
    } else if (op == SG__OP_PEER_STAGED) {
      st = sg__cuda_peer_bounce(b, i, fn);
    }
  }
  /* Every device in use is known now (NCCL calls may add some). */
  if (!st) st = sg__cuda_devices_streams(&b->dev, fn);
  /* Copies with a pageable side: routes, and in graph mode the rings a
   * build bakes in. */
  const sg__copy_spans spans = sg__trace_copy_spans(trace);
  if (!st)
    st = sg__staging_create(staging, &sg__cuda_stage_mem, b->device, b->mode == SG_MODE_GRAPH,
                            b->s->node_count, &spans, fn, &b->staging);
  for (uint32_t i = 0; i < b->s->node_count && !st; i++) {
    if (b->nodes[i].kind != SG__NODE_COPY) continue;
    char where[SG__STAGING_LABEL_BYTES + 64], label[SG__STAGING_LABEL_BYTES];
    if (dirs[i])
      sg__format(where, sizeof where, "%s: %s", fn, sg__staging_label(&b->nodes[i], i, label));
    st = sg__staging_add(b->staging, i, b->nodes[i].name, &b->nodes[i].u.copy, dirs[i],
                         dirs[i] ? where : fn);
  }
  sg__free(dirs);
  return st;
}

static sg_status device_limits(sg__cuda_state *b, const char *fn) {
  cudaError_t err = SG_CUDA(cudaDeviceGetAttribute(
      &b->max_shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, b->device));
  if (err == cudaSuccess)
    err = SG_CUDA(cudaDeviceGetAttribute(&b->max_shared_default,
                                         cudaDevAttrMaxSharedMemoryPerBlock, b->device));
  return err == cudaSuccess ? SG_OK : sg__cuda_fail(err, "cudaDeviceGetAttribute", fn);
}

static sg_status cuda_create(const sg__backend_args *args, void **state) {
  const char *fn = args->fn;
  sg__cuda_state *b = sg__calloc(1, sizeof *b);
  if (!b) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  b->exec = args->exec;
  b->nodes = args->nodes;
  b->s = args->schedule;
  b->mode = args->options->mode;
  b->build = args->options->build;
  b->device = args->options->device;
  /* A state made by sg_exec_update numbers launches on, all earlier ones
   * having ended. */
  b->launches = b->finished = args->launches;
  int previous;
  sg_status st = sg__cuda_enter(b->device, &previous, fn);
  if (st) {
    sg__free(b);
    return st;
  }
  st = device_limits(b, fn);
  if (!st) st = sg__cuda_conds_init(b, args);
  if (!st) st = sg__cuda_devices_make(&b->dev, b->nodes, b->s->node_count, b->device, fn);
  if (!st) st = setup_nodes(b, &args->options->staging, args->trace, fn);
  if (!st) st = sg__cuda_pdl_setup(b, args->trace != NULL, fn);
  /* CUDA events time one device: a launch over several has no common
   * clock for its nodes. */
  if (!st && args->trace && b->dev.count > 1)
    st = sg__fail(SG_ERR_UNSUPPORTED,
                  "%s: tracing an executable whose nodes run on several devices (%u) is not "
                  "supported: CUDA events time one device only; trace each device's part "
                  "in an executable of its own, or use Nsight Systems",
                  fn, b->dev.count);
  if (!st)
    st = b->mode == SG_MODE_GRAPH ? sg__cuda_graph_create(b, args->trace, fn)
                                  : sg__cuda_streams_make(b, fn);
  if (!st && b->mode != SG_MODE_GRAPH && args->trace)
    st = sg__cuda_tracer_make(&b->tracer, args->trace, b->s->node_count, b->home, fn);
  if (!st && args->ahead) {
    const char *call;
    cudaError_t err = sg__cuda_marks_make(b, &call);
    if (err != cudaSuccess) st = sg__cuda_fail(err, call, fn);
  }
  const int device = b->device;
  if (st) {
    sg__cuda_drain(b); /* an upload or a capture may have enqueued work */
    free_backend(b);
  } else {
    /* The streams exist, so the context they live in is current now. */
    b->context = sg__cuda_current_context();
    *state = b;
  }
  sg__cuda_leave(device, previous);
  return st;
}

/* ---- launching, updating, tracing -------------------------------------- */

static sg_status cuda_launch(void *state, void *cuda_stream, uint64_t launch) {
  sg__cuda_state *b = state;
  return b->mode == SG_MODE_GRAPH ? sg__cuda_graph_launch(b, cuda_stream, launch)
                                  : sg__cuda_streams_launch(b, cuda_stream, launch);
}

static sg_status cuda_update_node(void *state, uint32_t index, const sg__node *fresh,
                                  int *in_place) {
  static const char fn[] = "sg_exec_set";
  sg__cuda_state *b = state;
  *in_place = 0;
  int previous;
  sg_status st = sg__cuda_enter_exec(b, &previous, fn);
  if (st) return st;
  sg__cuda_op op;
  sg__stage_dir dir;
  sg__cuda_work *payload = NULL;
  st = sg__cuda_check_node(b, fresh, index, fn, &op, &dir);
  if (!st && op == SG__OP_NCCL) st = sg__cuda_nccl_recheck(b, index, fresh, fn);
  if (!st && op == SG__OP_PEER_STAGED) st = sg__cuda_peer_bounce(b, index, fn);
  if (!st && op == SG__OP_HOST_WORK) {
    /* The node keeps its name when the new parameters come without one. */
    const sg__node *named = fresh->name ? fresh : &b->nodes[index];
    char label[SG__LABEL_BYTES];
    st = sg__cuda_work_new(b, fresh, sg__node_label(named, index, label), fn, &payload);
  }
  /* The old stream function's `release` runs as soon as the front end
   * drops it, and may free what launches in flight still use (a cuBLAS
   * workspace). */
  if (!st && fresh->kind == SG__NODE_STREAM_FN) st = sg__cuda_wait_idle(b, fn);
  /* The copy's route again (letting go of a buffer it registered); graph
   * mode prepares its ring now, outside any capture, for the rebuild. */
  if (!st) st = sg__cuda_staged_copy_prepare(b, index, fresh, op, dir, fn);
  if (!st) {
    if (b->mode == SG_MODE_GRAPH && b->s->node_count) {
      st = sg__cuda_graph_update_node(b, index, fresh, op, payload, in_place);
    } else {
      /* Streams mode reads the nodes at each launch: the next launch sees
       * the change, launches already made are not affected. */
      sg__cuda_work_retire(b, b->work[index]);
      b->work[index] = payload;
      b->op[index] = (uint8_t)op;
    }
  }
  if (st) sg__free(payload);
  sg__cuda_leave(b->device, previous);
  return st;
}

static const sg__backend_ops cuda_ops = {
    .name = "cuda",
    .stage_mem = &sg__cuda_stage_mem,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .launch = cuda_launch,
    .wait = cuda_wait,
    .query = cuda_query,
    .wait_launch = cuda_wait_launch,
    .query_launch = cuda_query_launch,
    .track_launches = cuda_track_launches,
    .update_node = cuda_update_node,
    .renumber = cuda_renumber,
    .follow = cuda_follow,
    .arena_alloc = sg__cuda_arena_alloc,
    .arena_free = sg__cuda_arena_free,
};

const sg__backend_ops *sg__cuda_backend(void) { return &cuda_ops; }
