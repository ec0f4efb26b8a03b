/* Helper streams and events of streams-mode staged copies (cuda_lanes.h). */
#include "cuda/stage_lanes.h"

#include "core/sys.h"
#include "cuda/cuda_call.h"

struct sg__stage_lanes {
  uint32_t count, cap;
  sg__stage_lane **lane; /* stable addresses: callers keep a lane while enqueuing */
};

#define LANE_EVENTS (2 + 2 * SG__STAGE_LAG)

/* Event i of a lane: start, gated, dma_done[], posted[]. */
static cudaEvent_t *event_at(sg__stage_lane *l, unsigned i) {
  if (i == 0) return &l->start;
  if (i == 1) return &l->gated;
  i -= 2;
  return i < SG__STAGE_LAG ? &l->dma_done[i] : &l->posted[i - SG__STAGE_LAG];
}

static void lane_free(sg__stage_lane *l) {
  for (unsigned i = 0; i < LANE_EVENTS; i++)
    if (*event_at(l, i)) cudaEventDestroy(*event_at(l, i));
  if (l->helper) cudaStreamDestroy(l->helper);
  sg__free(l);
}

static cudaError_t lane_new(cudaStream_t stream, sg__stage_lane **out, const char **call) {
  sg__stage_lane *l = sg__calloc(1, sizeof *l);
  if (!l) {
    *call = "staging (out of host memory for a helper stream)";
    return cudaErrorMemoryAllocation;
  }
  l->stream = stream;
  *call = "cudaStreamCreateWithFlags (staging's helper stream)";
  cudaError_t err = SG_CUDA(cudaStreamCreateWithFlags(&l->helper, cudaStreamNonBlocking));
  for (unsigned i = 0; i < LANE_EVENTS && err == cudaSuccess; i++) {
    *call = "cudaEventCreateWithFlags (staging's helper stream)";
    err = SG_CUDA(cudaEventCreateWithFlags(event_at(l, i), cudaEventDisableTiming));
  }
  if (err != cudaSuccess) {
    lane_free(l);
    return err;
  }
  *out = l;
  return cudaSuccess;
}

cudaError_t sg__stage_lane_get(sg__stage_lanes **lanes, cudaStream_t stream,
                               sg__stage_lane **out, const char **call) {
  sg__stage_lanes *ls = *lanes;
  if (ls)
    for (uint32_t i = 0; i < ls->count; i++)
      if (ls->lane[i]->stream == stream) {
        *out = ls->lane[i];
        return cudaSuccess;
      }
  *call = "staging (out of host memory for a helper stream)";
  if (!ls) {
    if (!(ls = sg__calloc(1, sizeof *ls))) return cudaErrorMemoryAllocation;
    *lanes = ls;
  }
  if (ls->count == ls->cap) {
    uint32_t cap = ls->cap ? 2 * ls->cap : 4;
    sg__stage_lane **grown = sg__realloc(ls->lane, cap * sizeof *grown);
    if (!grown) return cudaErrorMemoryAllocation;
    ls->lane = grown;
    ls->cap = cap;
  }
  cudaError_t err = lane_new(stream, &ls->lane[ls->count], call);
  if (err != cudaSuccess) return err;
  *out = ls->lane[ls->count++];
  return cudaSuccess;
}

void sg__stage_lanes_free(sg__stage_lanes *lanes) {
  if (!lanes) return;
  for (uint32_t i = 0; i < lanes->count; i++) lane_free(lanes->lane[i]);
  sg__free(lanes->lane);
  sg__free(lanes);
}
