/* Internal: staging's side of the CUDA backend's pageable-copy seam
 * (src/cuda/cuda_copy.c). Each function says through *taken whether
 * staging carried the copy out (or failed it); when it did not (no
 * candidate, or the DIRECT route in streams mode) the seam uses the
 * driver's own pageable path. In a graph a candidate is always taken: it
 * is staged or registered, never a memcpy node with a pageable side
 * (policy.h).
 *
 * Messages name `where`, the node and the CUDA call. */
#ifndef SG_CUDA_STAGED_COPY_H
#define SG_CUDA_STAGED_COPY_H

#include <cuda_runtime_api.h>

#include "staging/exec_staging.h"

/* Streams mode, at launch on the caller's thread: enqueues copy node
 * `index` on `stream`. A staged copy takes its ring from the pool now (this
 * may wait for rings other launches give back; SG_ERR_POOL_EXHAUSTED when
 * none will come) and its last host callback gives it back. The copy is
 * ordered on `stream` like a cudaMemcpyAsync: it starts after the work
 * before it, and the work after it starts once the H2D source has been
 * read, or the D2H destination written. A stream being captured (a caller
 * capturing a streams-mode launch into a graph of its own) takes only a
 * buffer registered already, held from then on; anything else fails the
 * launch with SG_ERR_UNSUPPORTED, since a per-launch ring cannot live in
 * someone else's graph and a pageable memcpy node does not run in order. */
sg_status sg__staging_cuda_enqueue(sg__staging *st, uint32_t index, cudaStream_t stream,
                                   const char *where, int *taken);

/* Graph mode (explicit and capture builds): adds node `index`, with the
 * parameters `c` (the snapshot's, or new ones being built), to `graph`
 * after `deps`: a child graph for a staged copy (gate -> DMA -> gate ...
 * for H2D, DMA -> post -> DMA ... for D2H), a memcpy node for a
 * registered one. Uses the state prepared for `c`; a candidate without one
 * fails the build (it cannot become a plain memcpy node). */
cudaError_t sg__staging_cuda_add_node(sg__staging *st, uint32_t index, const sg__copy *c,
                                      cudaGraph_t graph, const cudaGraphNode_t *deps,
                                      size_t dep_count, cudaGraphNode_t *out, const char **call,
                                      int *taken);

/* Graph mode, node `index` gets the parameters `fresh`: prepares their
 * state (if the pool cannot provide it, the rebuild fails and the update
 * is refused), then answers cudaSuccess when nothing changes for staging,
 * or cudaErrorNotSupported: the graph must be rebuilt (which waits for
 * launches in flight), since a staged copy's ring and pointers are baked
 * into it. */
cudaError_t sg__staging_cuda_set_node(sg__staging *st, uint32_t index, const sg__copy *fresh,
                                      const char **call, int *taken);

/* The executable is being destroyed and nothing of it is in flight: takes
 * its memop-protocol copies off the conductor and frees the helper streams
 * of its staged copies (st may be NULL). Before its streams are destroyed
 * and before sg__staging_destroy. */
void sg__staging_cuda_release(sg__staging *st);

/* Graph mode, before cudaGraphLaunch into the caller's `stream` (NULL: the
 * executable's own): a graph whose staged copies use the memop protocol
 * cannot be captured into a caller's graph (the conductor is armed once per
 * launch); SG_ERR_UNSUPPORTED, naming the copy, when `stream` is capturing. */
sg_status sg__staging_cuda_graph_launch_check(sg__staging *st, cudaStream_t stream);
/* Graph mode, after a cudaGraphLaunch that succeeded: arms the graph's
 * memop-protocol copies for it. */
void sg__staging_cuda_graph_launched(sg__staging *st);

#endif
