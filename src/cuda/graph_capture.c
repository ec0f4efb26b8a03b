/* Graph mode, capture build: the multi-stream schedule is replayed once on
 * the executable's streams under stream capture, exactly as a streams-mode
 * launch would enqueue it (same per-node calls, same cross-stream events),
 * and the captured graph is what gets instantiated.
 *
 * - The capture starts on home (cuda_exec.h: on the executable's device)
 *   in thread-local mode; every other stream, on whatever device, joins it
 *   by waiting on a fork event and rejoins it before the capture ends, so
 *   one capture gathers the nodes of every device. Stream 0 (the legacy
 *   default stream) is never touched, and no call made while capturing
 *   synchronises. Each node is enqueued with its device current.
 * - Right after a node is enqueued, the capturing stream's dependency set
 *   is that node alone: cudaStreamGetCaptureInfo gives its graph node,
 *   which later per-node exec updates name.
 * - Some ops are added to the capture graph by hand (the captured stream's
 *   dependencies in, the new node out): child graphs made beforehand
 *   (stream functions, NCCL nodes, copies between GPUs through host
 *   memory: sg__cuda_child_graph), and staged copies (staged_copy.c), the
 *   same node the explicit build adds. */
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

/* The node just captured on `stream`. */
static cudaError_t captured_node(cudaStream_t stream, cudaGraphNode_t *node) {
  enum cudaStreamCaptureStatus status;
  const cudaGraphNode_t *deps = NULL;
  size_t nd = 0;
  cudaError_t err = SG_CUDA(cudaStreamGetCaptureInfo(stream, &status, NULL, NULL, &deps, NULL, &nd));
  if (err != cudaSuccess) return err;
  if (status != cudaStreamCaptureStatusActive) return cudaErrorStreamCaptureInvalidated;
  *node = nd == 1 ? deps[0] : NULL;
  return cudaSuccess;
}

/* Adds a node by hand after what `stream` has captured so far (the child
 * graph `child`, or else staged copy `n` with parameters `c`), and makes it
 * the stream's only dependency. */
static sg_status add_to_capture(sg__cuda_state *b, uint32_t n, const sg__copy *c,
                                cudaStream_t stream, cudaGraph_t child, sg__cuda_graph *out,
                                const char *fn, const sg__node *cond) {
  char where[SG__LABEL_BYTES + 64];
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph = NULL;
  const cudaGraphNode_t *deps = NULL;
  size_t nd = 0;
  const char *call = "cudaStreamGetCaptureInfo";
  cudaError_t err =
      SG_CUDA(cudaStreamGetCaptureInfo(stream, &status, NULL, &graph, &deps, NULL, &nd));
  if (err == cudaSuccess && status != cudaStreamCaptureStatusActive)
    err = cudaErrorStreamCaptureInvalidated;
  if (err == cudaSuccess && cond) { /* a conditional node and its bodies, by hand */
    sg_status st = sg__cuda_cond_add(b, n, cond, graph, deps, nd, &out->nodes[n], out, fn);
    if (st) return st;
  } else if (err == cudaSuccess && child) {
    call = "cudaGraphAddChildGraphNode";
    err = SG_CUDA(cudaGraphAddChildGraphNode(&out->nodes[n], graph, deps, nd, child));
  } else if (err == cudaSuccess) {
    sg_status st = sg__cuda_staged_copy_add_node(b, n, c, graph, deps, nd, &out->nodes[n], fn, out);
    if (st) return st;
  }
  if (err == cudaSuccess) {
    call = "cudaStreamUpdateCaptureDependencies";
    err = SG_CUDA(cudaStreamUpdateCaptureDependencies(stream, &out->nodes[n], NULL, 1,
                                                      cudaStreamSetCaptureDependencies));
  }
  return err == cudaSuccess ? SG_OK : sg__cuda_fail(err, call, sg__cuda_where(b, fn, n, where));
}

/* Adds node `n`'s stamp kernel node after what `stream` has captured so
 * far, leaving the stream's dependencies as they were. */
static cudaError_t add_stamp(sg__cuda_state *b, uint32_t n, cudaStream_t stream,
                             cudaGraphNode_t *stamp) {
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph = NULL;
  const cudaGraphNode_t *deps = NULL;
  size_t nd = 0;
  cudaError_t err =
      SG_CUDA(cudaStreamGetCaptureInfo(stream, &status, NULL, &graph, &deps, NULL, &nd));
  if (err != cudaSuccess) return err;
  if (status != cudaStreamCaptureStatusActive) return cudaErrorStreamCaptureInvalidated;
  sg__cuda_stamp_args sa;
  struct cudaKernelNodeParams sp;
  sg__cuda_stamp_params(&b->tracer, 1 + n, 0, &sa, &sp);
  return SG_CUDA(cudaGraphAddKernelNode(stamp, graph, deps, nd, &sp));
}

/* The conditions' handles, on the graph the capture builds (before any
 * kernel that names one is captured). */
static sg_status capture_cond_handles(sg__cuda_state *b, const char *fn) {
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph = NULL;
  cudaError_t err =
      SG_CUDA(cudaStreamGetCaptureInfo(b->home, &status, NULL, &graph, NULL, NULL, NULL));
  if (err == cudaSuccess && status != cudaStreamCaptureStatusActive)
    err = cudaErrorStreamCaptureInvalidated;
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaStreamGetCaptureInfo", fn);
  return sg__cuda_cond_handles(b, graph, fn);
}

/* Ends a capture that failed half-way, so that the streams leave capture
 * mode and stay usable: rejoin every stream, end, drop the graph. */
static void abandon_capture(sg__cuda_state *b) {
  cudaStream_t home = b->home;
  for (uint32_t i = 0; i < b->stream_count; i++)
    if (i != b->home_index && cudaEventRecord(b->joins[i], b->streams[i]) == cudaSuccess)
      cudaStreamWaitEvent(home, b->joins[i], 0);
  cudaGraph_t g = NULL;
  cudaStreamEndCapture(home, &g);
  if (g) cudaGraphDestroy(g);
  cudaGetLastError(); /* capture errors are not sticky; keep them from surfacing later */
}

/* Replays the schedule into the capture started on home; *current is the
 * current device. */
static sg_status replay(sg__cuda_state *b, const sg__cuda_swap *swap, cudaGraph_t *children,
                        const char *fn, sg__cuda_graph *out, int *current) {
  const sg__schedule *s = b->s;
  cudaStream_t home = b->home;
  char msg[SG_ERROR_MESSAGE_BYTES], where[SG__LABEL_BYTES + 64];
  /* Traced: the launch's start, then each node between its "before" and
   * "after" events, all recorded as event-record nodes of the graph
   * (external events), whose graph nodes a launch re-points. */
  cudaGraphNode_t *trace = out->trace_nodes;
  const sg__cuda_trace_set *set = trace ? &b->tracer.sets[0] : NULL;
  const char *call = "cudaEventRecordWithFlags (trace, external)";
  cudaError_t err = cudaSuccess;
  /* With stamps: the start stamp is captured on home before the fork, and
   * each node's stamp is added by hand after what its stream has captured,
   * without becoming the stream's dependency (off the path to what
   * follows). */
  const int stamps = trace && b->tracer.stamps;
  if (stamps) {
    sg__cuda_stamp_args sa;
    struct cudaKernelNodeParams sp;
    sg__cuda_stamp_params(&b->tracer, 0, 1, &sa, &sp);
    call = "cudaLaunchKernel (trace stamp)";
    err = SG_CUDA(
        cudaLaunchKernel(sp.func, sp.gridDim, sp.blockDim, sp.kernelParams, 0, home));
    if (err == cudaSuccess) err = captured_node(home, &trace[0]);
    if (err == cudaSuccess && !trace[0]) err = cudaErrorStreamCaptureUnjoined;
    if (err != cudaSuccess) return sg__cuda_fail(err, call, fn);
  } else if (trace) {
    err = SG_CUDA(cudaEventRecordWithFlags(set->start, home, cudaEventRecordExternal));
    if (err == cudaSuccess) err = captured_node(home, &trace[0]);
    if (err == cudaSuccess && !trace[0]) err = cudaErrorStreamCaptureUnjoined;
    if (err != cudaSuccess) return sg__cuda_fail(err, call, fn);
  }
  call = "cudaEventRecord (fork)";
  err = SG_CUDA(cudaEventRecord(b->fork, home));
  for (uint32_t i = 0; i < b->stream_count && err == cudaSuccess; i++) {
    if (i == b->home_index) continue;
    call = "cudaStreamWaitEvent (fork)";
    err = SG_CUDA(cudaStreamWaitEvent(b->streams[i], b->fork, 0));
  }
  if (err != cudaSuccess) return sg__cuda_fail(err, call, fn);

  for (uint32_t k = 0; k < s->node_count; k++) {
    const uint32_t n = s->order[k];
    cudaStream_t stream = b->node_stream[n];
    for (uint32_t w = s->wait_start[n]; w < s->wait_start[n + 1] && err == cudaSuccess; w++) {
      call = "cudaStreamWaitEvent";
      err = SG_CUDA(cudaStreamWaitEvent(stream, b->events[s->wait_event[w]], 0));
    }
    if (err == cudaSuccess && trace && !stamps) {
      call = "cudaEventRecordWithFlags (trace, external)";
      err = SG_CUDA(cudaEventRecordWithFlags(set->before[n], stream, cudaEventRecordExternal));
      if (err == cudaSuccess) err = captured_node(stream, &trace[1 + 2 * n]);
      if (err == cudaSuccess && !trace[1 + 2 * n]) err = cudaErrorStreamCaptureUnjoined;
    }
    if (err == cudaSuccess && b->op[n] != SG__OP_NOTHING) {
      call = "cudaSetDevice (the node's device)";
      err = sg__cuda_switch(current, b->dev.node_device[n]);
    }
    if (err == cudaSuccess) {
      const sg__node *node = sg__cuda_build_node(b, swap, n);
      sg_status st = SG_OK;
      switch ((sg__cuda_op)b->op[n]) {
        case SG__OP_NOTHING:
          break; /* its waits and its event carry its edges */
        case SG__OP_STREAM_FN:
        case SG__OP_NCCL:
        case SG__OP_PEER_STAGED:
          st = add_to_capture(b, n, NULL, stream, children[n], out, fn, NULL);
          break;
        case SG__OP_STAGED_COPY:
          st = add_to_capture(b, n, &node->u.copy, stream, NULL, out, fn, NULL);
          break;
        case SG__OP_COND:
          st = add_to_capture(b, n, NULL, stream, NULL, out, fn, node);
          break;
        default: {
          /* A kernel bound to a condition is captured with its handle. */
          if (b->op[n] == SG__OP_KERNEL && node->u.kernel.cond_arg) {
            st = sg__cuda_cond_launch_kernel(b, n, node, stream, fn, msg, sizeof msg);
            if (st) return sg__fail(st, "%s", msg);
            call = "cudaStreamGetCaptureInfo";
            err = captured_node(stream, &out->nodes[n]);
            break;
          }
          st = sg__cuda_enqueue(b, n, node, stream, fn, msg, sizeof msg);
          if (st) return sg__fail(st, "%s", msg);
          call = "cudaStreamGetCaptureInfo";
          err = captured_node(stream, &out->nodes[n]);
        }
      }
      if (st) return st;
    }
    if (err == cudaSuccess && stamps) {
      call = "cudaGraphAddKernelNode (trace stamp)";
      err = add_stamp(b, n, stream, &trace[2 + 2 * n]);
    } else if (err == cudaSuccess && trace) {
      call = "cudaEventRecordWithFlags (trace, external)";
      err = SG_CUDA(cudaEventRecordWithFlags(set->after[n], stream, cudaEventRecordExternal));
      if (err == cudaSuccess) err = captured_node(stream, &trace[2 + 2 * n]);
      if (err == cudaSuccess && !trace[2 + 2 * n]) err = cudaErrorStreamCaptureUnjoined;
    }
    if (err == cudaSuccess && s->record_event[n] >= 0) {
      call = "cudaEventRecord";
      err = SG_CUDA(cudaEventRecord(b->events[s->record_event[n]], stream));
    }
    if (err != cudaSuccess) return sg__cuda_fail(err, call, sg__cuda_where(b, fn, n, where));
  }

  for (uint32_t i = 0; i < b->stream_count && err == cudaSuccess; i++) {
    if (i == b->home_index) continue;
    call = "cudaEventRecord (join)";
    err = SG_CUDA(cudaEventRecord(b->joins[i], b->streams[i]));
    if (err == cudaSuccess) {
      call = "cudaStreamWaitEvent (join)";
      err = SG_CUDA(cudaStreamWaitEvent(home, b->joins[i], 0));
    }
  }
  if (err != cudaSuccess) return sg__cuda_fail(err, call, fn);
  return SG_OK;
}

sg_status sg__cuda_build_capture(sg__cuda_state *b, const sg__cuda_swap *swap, const char *fn,
                                 sg__cuda_graph *out) {
  const sg__schedule *s = b->s;
  /* Child graphs are made first, each on its own, since a capture cannot
   * begin on a stream that is already capturing. */
  cudaGraph_t *children = sg__calloc(s->node_count ? s->node_count : 1, sizeof *children);
  if (!children) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_status st = SG_OK;
  for (uint32_t n = 0; n < s->node_count && !st; n++)
    if (sg__cuda_op_is_child(b->op[n]))
      st = sg__cuda_child_graph(b, n, sg__cuda_build_node(b, swap, n), fn, &children[n]);

  int current = -1;
  if (!st) {
    cudaError_t err = SG_CUDA(cudaGetDevice(&current));
    if (err != cudaSuccess) st = sg__cuda_fail(err, "cudaGetDevice", fn);
  }
  const int restore = current;
  if (!st) {
    cudaError_t err = SG_CUDA(cudaStreamBeginCapture(b->home, cudaStreamCaptureModeThreadLocal));
    if (err != cudaSuccess) {
      st = sg__cuda_fail(err, "cudaStreamBeginCapture", fn);
    } else if ((b->cond_count && (st = capture_cond_handles(b, fn))) ||
               (st = replay(b, swap, children, fn, out, &current))) {
      abandon_capture(b);
    } else {
      err = SG_CUDA_AFTER(cudaStreamEndCapture(b->home, &out->graph));
      if (err != cudaSuccess) {
        if (out->graph) cudaGraphDestroy(out->graph);
        out->graph = NULL;
        cudaGetLastError();
        st = sg__cuda_fail(err, "cudaStreamEndCapture", fn);
      }
    }
  }
  if (restore >= 0 && current != restore) cudaSetDevice(restore);
  /* Child graph nodes hold their own copies. */
  for (uint32_t n = 0; n < s->node_count; n++)
    if (children[n]) cudaGraphDestroy(children[n]);
  sg__free(children);
  return st;
}
