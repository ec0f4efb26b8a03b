/* Graph mode: the schedule becomes one CUDA graph (built explicitly or by
 * stream capture), instantiated and uploaded once, then launched with one
 * cudaGraphLaunch per launch.
 *
 * cudaGraphLaunch orders a launch after earlier work in the stream it is
 * given and after earlier launches of the same executable graph, which is
 * exactly sg_exec_launch's contract; so a caller's stream is used as it is
 * (no fork or join events), and NULL means home (streams[0] in the explicit
 * build; cuda_exec.h). Waiting needs one event only when the graph went
 * into a caller's stream. A graph holding nodes of several devices is one
 * graph all the same: each node runs in the context it was added in, and one
 * cudaGraphLaunch into a stream of the executable's device runs them all
 * (docs/multi-gpu.md says what the driver allows). */
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

void sg__cuda_graph_free(sg__cuda_graph *g) {
  if (g->exec) cudaGraphExecDestroy(g->exec);
  if (g->graph) cudaGraphDestroy(g->graph);
  sg__free(g->nodes);
  sg__free(g->kernel_fns);
  sg__free(g->trace_nodes);
  g->exec = NULL;
  g->graph = NULL;
  g->nodes = NULL;
  g->kernel_fns = NULL;
  g->trace_nodes = NULL;
  sg__free(g->staged);
  g->staged = NULL;
  sg__cuda_cond_nodes_free(g);
}

/* Builds, instantiates and uploads one graph into *out: with the trace's
 * stamps or event-record nodes when `traced`. On failure frees what it made. */
static sg_status build_one(sg__cuda_state *b, const sg__cuda_swap *swap, int traced,
                           const char *fn, sg__cuda_graph *out) {
  sg__cuda_graph g = {0};
  g.nodes = sg__calloc(b->s->node_count ? b->s->node_count : 1, sizeof *g.nodes);
  /* A traced graph: event-record nodes around every node, recording the
   * tracer's first set until a launch points them elsewhere; or stamp
   * kernel nodes at 0 and after every node (2 + 2v; 1 + 2v unused). */
  if (g.nodes && traced &&
      !(g.trace_nodes = sg__calloc((size_t)2 * b->s->node_count + 1, sizeof *g.trace_nodes))) {
    sg__free(g.nodes);
    g.nodes = NULL;
  }
  if (!g.nodes) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_status st = b->build == SG_BUILD_CAPTURE ? sg__cuda_build_capture(b, swap, fn, &g)
                                              : sg__cuda_build_explicit(b, swap, fn, &g);
  if (!st) {
    cudaError_t err = SG_CUDA(cudaGraphInstantiate(&g.exec, g.graph, 0));
    if (err != cudaSuccess) {
      g.exec = NULL;
      st = sg__cuda_fail(err, "cudaGraphInstantiate", fn);
    } else if ((err = SG_CUDA(cudaGraphUpload(g.exec, b->home))) != cudaSuccess) {
      st = sg__cuda_fail(err, "cudaGraphUpload", fn);
    } else if ((err = SG_CUDA(cudaStreamSynchronize(b->home))) != cudaSuccess) {
      /* Builds happen idle and are slow anyway; waiting for the upload here
       * means a first launch into any stream finds the graph resident. */
      st = sg__cuda_fail(err, "cudaStreamSynchronize (after cudaGraphUpload)", fn);
    }
  }
  if (st) {
    /* An upload may still be in flight on home: let it finish before its
     * graph goes. */
    if (g.exec) cudaStreamSynchronize(b->home);
    sg__cuda_graph_free(&g);
    return st;
  }
  *out = g;
  return SG_OK;
}

/* A sampled trace (trace_every > 1) launches the untraced graph on the
 * launches it does not time. Staged copies are refused there: their
 * staging state belongs to one instantiated graph (staged_copy.c). */
static sg_status check_sampled(const sg__cuda_state *b, const char *fn) {
  /* A rebuild for a new node has set its op already (graph_update.c). */
  for (uint32_t v = 0; v < b->s->node_count; v++) {
    if (b->op[v] == SG__OP_STAGED_COPY)
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: graph mode with options.trace_every > 1 cannot hold a copy through "
                      "pageable host memory (node %u; staged per instantiated graph): use "
                      "pinned or device memory, trace_every 0 or 1, or streams mode",
                      fn, v);
  }
  return SG_OK;
}

sg_status sg__cuda_graph_rebuild(sg__cuda_state *b, const sg__cuda_swap *swap, const char *fn) {
  const int sampled = b->tracer.trace && b->tracer.trace->every > 1;
  sg__cuda_graph g = {0}, plain = {0};
  sg_status st = sampled ? check_sampled(b, fn) : SG_OK;
  /* The untraced one first: a build leaves the conditions' handles
   * (b->cond_handles) to the traced graph, as without sampling. */
  if (!st && sampled) st = build_one(b, swap, 0, fn, &plain);
  if (!st) st = build_one(b, swap, b->tracer.trace != NULL, fn, &g);
  if (st) {
    sg__cuda_graph_free(&plain);
    return st;
  }
  sg__cuda_graph_free(&b->g);
  sg__cuda_graph_free(&b->plain);
  b->g = g;
  b->plain = plain;
  return SG_OK;
}

sg_status sg__cuda_graph_create(sg__cuda_state *b, sg__trace *trace, const char *fn) {
  sg_status st = b->build == SG_BUILD_CAPTURE ? sg__cuda_streams_make(b, fn)
                                              : sg__cuda_streams_make_one(b, fn);
  /* Stamps where the stamp kernel loads, else the tracer's first set is
   * what a traced graph's event nodes record. */
  if (!st && trace)
    st = sg__cuda_tracer_make_graph(&b->tracer, trace,
                                    (const struct sg__schedule *const *)&b->s,
                                    b->build == SG_BUILD_CAPTURE, b->home, fn);
  if (st || b->s->node_count == 0) return st;
  return sg__cuda_graph_rebuild(b, NULL, fn);
}

sg_status sg__cuda_graph_of(const sg_exec *exec, cudaGraphExec_t *graph_exec,
                            const cudaGraphNode_t **nodes) {
  static const char fn[] = "sg__cuda_graph_of";
  const sg__cuda_state *b = sg__exec_backend_state(exec, sg__cuda_backend());
  if (!b || b->mode != SG_MODE_GRAPH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: not a graph-mode CUDA executable", fn);
  *graph_exec = b->g.exec;
  *nodes = b->g.nodes;
  return SG_OK;
}

int sg__cuda_trace_stamped(const sg_exec *exec) {
  const sg__cuda_state *b = sg__exec_backend_state(exec, sg__cuda_backend());
  return b && b->tracer.trace && b->tracer.stamps;
}

/* Points a traced graph's event-record nodes at `set` (launches already
 * made keep the events they were launched with). */
static cudaError_t point_trace_nodes(sg__cuda_state *b, const sg__cuda_trace_set *set) {
  unsigned index = (unsigned)(set - b->tracer.sets);
  if (b->g.trace_set == index) return cudaSuccess;
  b->g.trace_set = SG__CUDA_TRACE_RING; /* none whole, until every node is pointed */
  for (uint32_t k = 0; k < 2 * b->s->node_count + 1; k++) {
    cudaError_t err = SG_CUDA(cudaGraphExecEventRecordNodeSetEvent(
        b->g.exec, b->g.trace_nodes[k], sg__cuda_trace_event(set, k)));
    if (err != cudaSuccess) return err;
  }
  b->g.trace_set = index;
  return cudaSuccess;
}

/* CUDA does not take a graph launch into a stream being captured: the call
 * fails and invalidates the caller's capture. Refused before that, so the
 * capture stays valid. */
static sg_status refuse_capture(cudaStream_t caller) {
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing(caller, &capture));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaStreamIsCapturing", "sg_exec_launch");
  }
  if (capture == cudaStreamCaptureStatusNone) return SG_OK;
  return sg__fail(SG_ERR_UNSUPPORTED,
                  "sg_exec_launch: the stream is being captured into a CUDA graph, and a graph-mode "
                  "executable cannot be launched into a capture (CUDA refuses a graph launch "
                  "there); capture a streams-mode executable instead, or launch this one outside "
                  "the capture");
}

sg_status sg__cuda_graph_launch(sg__cuda_state *b, void *cuda_stream, uint64_t launch) {
  static const char fn[] = "sg_exec_launch";
  if (b->s->node_count == 0) {
    if (b->tracer.trace) sg__trace_commit(b->tracer.trace, launch, sg__now_ns(), NULL, NULL);
    b->launches = launch; /* nothing to order or run: ended at once */
    b->finished = launch;
    return SG_OK;
  }
  int previous;
  sg_status st = sg__cuda_enter_exec(b, &previous, fn);
  if (st) {
    sg__exec_fail_launch(b->exec, launch, st, "%s", sg_last_error());
    return st;
  }
  cudaStream_t caller = (cudaStream_t)cuda_stream;
  cudaStream_t target = caller ? caller : b->home;
  /* No capture of a graph whose copies the host serves per launch. */
  if ((st = sg__cuda_staged_copy_launch_check(b, caller))) {
    sg__cuda_leave(b->device, previous);
    sg__exec_fail_launch(b->exec, launch, st, "%s", sg_last_error());
    return st;
  }
  if (caller && (st = refuse_capture(caller))) {
    sg__cuda_leave(b->device, previous);
    sg__exec_fail_launch(b->exec, launch, st, "%s", sg_last_error());
    return st;
  }
  sg__cuda_trace_set *set = NULL;
  /* A launch trace_every leaves untimed runs the untraced graph. */
  const int timed =
      b->tracer.trace && (sg__trace_sampled(b->tracer.trace, launch) || !b->plain.exec);
  const cudaGraphExec_t graph_exec = timed || !b->plain.exec ? b->g.exec : b->plain.exec;
  if (timed) {
    char msg[SG_ERROR_MESSAGE_BYTES];
    st = sg__cuda_tracer_set(&b->tracer, launch, &set, fn, msg, sizeof msg);
    if (st) {
      sg__cuda_leave(b->device, previous);
      sg__exec_fail_launch(b->exec, launch, st, "%s", msg);
      return sg__fail(st, "%s", msg);
    }
  }
  const char *call = "cudaGraphExecEventRecordNodeSetEvent (trace)";
  cudaError_t err = set && !b->tracer.stamps ? point_trace_nodes(b, set) : cudaSuccess;
  if (set && b->tracer.stamps) set->seq = b->tracer.seq; /* the row its stamps go to */
  /* The first launch after a switch into a caller's stream follows the
   * old version's last launch (sg__cuda_follow). */
  if (err == cudaSuccess && b->handover_pending && target != b->home) {
    call = "cudaStreamWaitEvent (after the old version)";
    err = SG_CUDA(cudaStreamWaitEvent(target, b->handover, 0));
  }
  if (err == cudaSuccess && (st = sg__cuda_staged_copy_queue(b))) {
    sg__cuda_leave(b->device, previous);
    sg__exec_fail_launch(b->exec, launch, st, "%s", sg_last_error());
    return st;
  }
  if (err == cudaSuccess) {
    call = "cudaGraphLaunch";
    err = SG_CUDA(cudaGraphLaunch(graph_exec, target));
    if (err == cudaSuccess) b->handover_pending = 0;
    /* A launch that did not go in takes back what was queued and armed. */
    sg__cuda_staged_copy_launched(b, err == cudaSuccess);
  }
  if (err == cudaSuccess && set && b->tracer.stamps) {
    /* The graph's first stamp bumped the device's counter: so does the
     * host's. The set's event says when the row may be read. */
    b->tracer.seq++;
    call = "cudaEventRecord (trace, after the graph)";
    err = SG_CUDA(cudaEventRecord(set->start, target));
    if (err != cudaSuccess) {
      /* Its times cannot be read: the launch is kept out of the trace (a
       * launch the trace lacks, as after a failure), the launch itself
       * went in. */
      cudaGetLastError();
      set = NULL;
      err = cudaSuccess;
    }
  }
  if (err == cudaSuccess) {
    if (set) sg__cuda_tracer_recorded(set, launch);
    b->launches = launch;
    if (b->g.staged_copies || b->g.registered_copies) /* the graph's copies ran once more */
      sg__exec_count_copies(b->exec, b->g.staged_copies, b->g.registered_copies);
    /* Its end: needed in a caller's stream (which the executable cannot
     * synchronise as its own), and in home once launches are followed one
     * by one (launch_marks.c). */
    if (caller || b->track) {
      err = sg__cuda_mark_launch(b, target, launch, &call);
      /* The graph runs in a stream the executable does not own, and
       * nothing marks its end: wait for it here, so that every later
       * wait (and destruction) is still safe. */
      if (err != cudaSuccess && caller) cudaStreamSynchronize(caller);
    }
  }
  sg__cuda_leave(b->device, previous);
  if (err == cudaSuccess) return SG_OK;
  char msg[SG_ERROR_MESSAGE_BYTES];
  sg__cuda_format(msg, sizeof msg, err, call, fn);
  sg__exec_fail_launch(b->exec, launch, SG_ERR_CUDA, "launch %llu: %s", (unsigned long long)launch,
                       msg);
  return sg__fail(SG_ERR_CUDA, "%s", msg);
}
