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

static sg_status lane_new(cudaStream_t stream, const char *where, sg__stage_lane **out) {
  sg__stage_lane *l = sg__calloc(1, sizeof *l);
  if (!l) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a helper stream", where);
  l->stream = stream;
  const char *call = "cudaStreamCreateWithFlags (staging's helper stream)";
  cudaError_t err = SG_CUDA(cudaStreamCreateWithFlags(&l->helper, cudaStreamNonBlocking));
  for (unsigned i = 0; i < LANE_EVENTS && err == cudaSuccess; i++) {
    call = "cudaEventCreateWithFlags (staging's helper stream)";
    err = SG_CUDA(cudaEventCreateWithFlags(event_at(l, i), cudaEventDisableTiming));
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    lane_free(l);
    return sg__cuda_fail(err, call, where);
  }
  *out = l;
  return SG_OK;
}

sg_status sg__stage_lane_get(sg__stage_lanes **lanes, cudaStream_t stream, const char *where,
                             sg__stage_lane **out) {
  sg__stage_lanes *ls = *lanes;
  if (ls)
    for (uint32_t i = 0; i < ls->count; i++)
      if (ls->lane[i]->stream == stream) {
        *out = ls->lane[i];
        return SG_OK;
      }
  if (!ls) {
    if (!(ls = sg__calloc(1, sizeof *ls)))
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a helper stream", where);
    *lanes = ls;
  }
  if (ls->count == ls->cap) {
    uint32_t cap = ls->cap ? 2 * ls->cap : 4;
    sg__stage_lane **grown = sg__realloc(ls->lane, cap * sizeof *grown);
    if (!grown)
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a helper stream", where);
    ls->lane = grown;
    ls->cap = cap;
  }
  sg_status st = lane_new(stream, where, &ls->lane[ls->count]);
  if (st) return st;
  *out = ls->lane[ls->count++];
  return SG_OK;
}

void sg__stage_lanes_free(sg__stage_lanes *lanes) {
  if (!lanes) return;
  for (uint32_t i = 0; i < lanes->count; i++) lane_free(lanes->lane[i]);
  sg__free(lanes->lane);
  sg__free(lanes);
}
