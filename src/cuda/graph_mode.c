/* Graph mode: the schedule becomes one CUDA graph (built explicitly or by
 * stream capture), instantiated and uploaded once, then launched with one
 * cudaGraphLaunch per launch.
 *
 * cudaGraphLaunch orders a launch after earlier work in the stream it is
 * given and after earlier launches of the same executable graph, which is
 * exactly sg_exec_launch's contract; so a caller's stream is used as it is
 * (no fork or join events), and NULL means streams[0]. Waiting needs one
 * event only when the graph went into a caller's stream. */
#include "core/device.h"
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/staged_copy.h" /* staging: copy statistics and memop copies per launch */

void sg__cuda_graph_free(sg__cuda_graph *g) {
  if (g->exec) cudaGraphExecDestroy(g->exec);
  if (g->graph) cudaGraphDestroy(g->graph);
  sg__free(g->nodes);
  sg__free(g->kernel_fns);
  g->exec = NULL;
  g->graph = NULL;
  g->nodes = NULL;
  g->kernel_fns = NULL;
}

sg_status sg__cuda_graph_rebuild(sg__cuda_state *b, const char *fn) {
  sg__cuda_graph g = {0};
  g.nodes = sg__calloc(b->s->node_count ? b->s->node_count : 1, sizeof *g.nodes);
  if (!g.nodes) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_status st = b->exec->options.build == SG_BUILD_CAPTURE ? sg__cuda_build_capture(b, fn, &g)
                                                            : sg__cuda_build_explicit(b, fn, &g);
  if (!st) {
    cudaError_t err = SG_CUDA(cudaGraphInstantiate(&g.exec, g.graph, 0));
    if (err != cudaSuccess) {
      g.exec = NULL;
      st = sg__cuda_fail(err, "cudaGraphInstantiate", fn);
    } else if ((err = SG_CUDA(cudaGraphUpload(g.exec, b->streams[0]))) != cudaSuccess) {
      st = sg__cuda_fail(err, "cudaGraphUpload", fn);
    } else if ((err = SG_CUDA(cudaStreamSynchronize(b->streams[0]))) != cudaSuccess) {
      /* Builds happen idle and are slow anyway; waiting for the upload here
       * means a first launch into any stream finds the graph resident. */
      st = sg__cuda_fail(err, "cudaStreamSynchronize (after cudaGraphUpload)", fn);
    }
  }
  if (st) {
    /* An upload may still be in flight on streams[0]: let it finish before
     * its graph goes. */
    if (g.exec) cudaStreamSynchronize(b->streams[0]);
    sg__cuda_graph_free(&g);
    return st;
  }
  sg__cuda_graph_free(&b->g);
  b->g = g;
  return SG_OK;
}

sg_status sg__cuda_graph_create(sg__cuda_state *b, const char *fn) {
  sg_status st = b->exec->options.build == SG_BUILD_CAPTURE ? sg__cuda_streams_make(b, 0, fn)
                                                            : sg__cuda_streams_make_one(b, fn);
  if (st || b->s->node_count == 0) return st;
  return sg__cuda_graph_rebuild(b, fn);
}

sg_status sg__cuda_graph_of(const sg_exec *exec, cudaGraphExec_t *graph_exec,
                            const cudaGraphNode_t **nodes) {
  static const char fn[] = "sg__cuda_graph_of";
  if (!exec || exec->ops != sg__cuda_backend() || exec->options.mode != SG_MODE_GRAPH ||
      !exec->backend)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: not a graph-mode CUDA executable", fn);
  const sg__cuda_state *b = exec->backend;
  *graph_exec = b->g.exec;
  *nodes = b->g.nodes;
  return SG_OK;
}

sg_status sg__cuda_graph_launch(sg__cuda_state *b, void *cuda_stream) {
  static const char fn[] = "sg_exec_launch";
  if (b->s->node_count == 0) return SG_OK;
  int previous;
  sg_status st = sg__cuda_enter_exec(b, &previous, fn);
  if (st) {
    sg__exec_fail(b->exec, st, "%s", sg_last_error());
    return st;
  }
  cudaStream_t caller = (cudaStream_t)cuda_stream;
  cudaStream_t target = caller ? caller : b->streams[0];
  /* staging: no capture of a graph whose copies the host serves per launch */
  if ((st = sg__staging_cuda_graph_launch_check(b->staging, caller))) {
    sg__cuda_leave(b->device, previous);
    sg__exec_fail(b->exec, st, "%s", sg_last_error());
    return st;
  }
  const char *call = "cudaGraphLaunch";
  cudaError_t err = SG_CUDA(cudaGraphLaunch(b->g.exec, target));
  if (err == cudaSuccess) {
    b->launches++;
    sg__staging_count_launch(b->staging); /* staging: the graph's copies ran once more */
    sg__staging_cuda_graph_launched(b->staging, b->streams[0]); /* staging: arm its copies */
    if (!caller) {
      b->busy_stream = 1;
    } else {
      call = "cudaEventRecord (done, in the caller's stream)";
      err = SG_CUDA(cudaEventRecord(b->done, caller));
      if (err == cudaSuccess) {
        b->busy_done = 1;
      } else {
        /* The graph runs in a stream the executable does not own, and
         * nothing marks its end: wait for it here, so that every later
         * wait (and destruction) is still safe. */
        cudaStreamSynchronize(caller);
      }
    }
  }
  sg__cuda_leave(b->device, previous);
  if (err == cudaSuccess) return SG_OK;
  char msg[SG_ERROR_MESSAGE_BYTES];
  sg__cuda_format(msg, sizeof msg, err, call, fn);
  sg__exec_fail(b->exec, SG_ERR_CUDA, "%s", msg);
  return sg__fail(SG_ERR_CUDA, "%s", msg);
}
