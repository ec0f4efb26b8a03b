/* Internal: the helper streams of streams-mode staged copies.
 *
 * A staged copy's DMAs run on the copy's own stream; its callbacks (gates,
 * posts: stage_run.h) run on a helper stream beside it, ordered against the
 * DMAs by events, so that the callback a DMA waits for starts a whole DMA
 * earlier and its latency hides behind that DMA. One lane per stream of the
 * executable that carries a staged copy, made on first use and kept until
 * the executable is destroyed; the events are reused from copy to copy,
 * which is sound because an executable enqueues from one thread at a time
 * and a wait takes the event's last record as it stands when the wait is
 * enqueued. */
#ifndef SG_CUDA_STAGE_LANES_H
#define SG_CUDA_STAGE_LANES_H

#include <cuda_runtime_api.h>

#include "staging/stage_run.h"

typedef struct sg__stage_lane {
  cudaStream_t stream;                   /* the copy's stream (the executable's) */
  cudaStream_t helper;                   /* where its callbacks run */
  cudaEvent_t start;                     /* stream -> helper: the work before the copy */
  cudaEvent_t gated;                     /* helper -> stream: gate(k) returned */
  cudaEvent_t dma_done[SG__STAGE_LAG];   /* stream -> helper: DMA(k) ended, slot k % L */
  cudaEvent_t posted[SG__STAGE_LAG];     /* helper -> stream: post(k) returned, slot k % L */
} sg__stage_lane;

typedef struct sg__stage_lanes sg__stage_lanes;

/* The lane of `stream`, made on first use (*lanes may be NULL then). On
 * failure the message names `where`. Needs the executable's device current. */
sg_status sg__stage_lane_get(sg__stage_lanes **lanes, cudaStream_t stream, const char *where,
                             sg__stage_lane **out);
/* Destroys every lane; nothing may be in flight on them. NULL is accepted. */
void sg__stage_lanes_free(sg__stage_lanes *lanes);

#endif
