/* Internal: NVTX ranges, so that Nsight Systems shows what the library does
 * on each host thread (launches, planning, instantiation, updates, staging
 * chunks) and how long each pipeline batch lives.
 *
 * Declared here, at the bottom, so that every layer can mark its work;
 * defined in src/cuda/nvtx.c, the only place that includes the NVTX headers
 * (header-only NVTX v3, shipped with the CUDA toolkit). Built without CUDA
 * or with -DSG_WITH_NVTX=OFF, every call does nothing.
 *
 * Free when nobody listens: a tool such as Nsight Systems announces itself
 * through the NVTX_INJECTION64_PATH environment variable, read once. Without
 * it sg__nvtx_active() is 0, and callers skip the calls (and the formatting
 * of range names) behind one predictable branch:
 *
 *     if (sg__nvtx_active()) sg__nvtx_push(SG__NVTX_LAUNCH, "launch '%s'", name);
 *     ...
 *     if (sg__nvtx_active()) sg__nvtx_pop();
 *
 * The answer never changes during a run, so a push and its pop agree. */
#ifndef SG_CORE_NVTX_H
#define SG_CORE_NVTX_H

#include <stdint.h>

#include "core/error.h"

/* What a range is about: its colour in the timeline. */
typedef enum sg__nvtx_kind {
  SG__NVTX_LAUNCH = 0,  /* sg_exec_launch */
  SG__NVTX_PLAN,        /* planning (sg_plan_create, sg_exec_create) */
  SG__NVTX_BUILD,       /* creating an executable: graph build, instantiation */
  SG__NVTX_UPDATE,      /* sg_exec_set_*, sg_exec_update */
  SG__NVTX_STAGE,       /* one chunk's host-side copy of a staged copy */
  SG__NVTX_BATCH,       /* a pipeline batch, from submit to completion */
  SG__NVTX_KIND_COUNT
} sg__nvtx_kind;

/* 1 when built with NVTX and a tool listens (read once, then cached). */
int sg__nvtx_active(void);
/* A range on the calling thread, named by the format; ends at the pop. */
void sg__nvtx_push(sg__nvtx_kind kind, const char *fmt, ...) SG_PRINTF(2, 3);
void sg__nvtx_pop(void);
/* A range that may end on another thread (a pipeline batch); 0 when none. */
uint64_t sg__nvtx_start(sg__nvtx_kind kind, const char *fmt, ...) SG_PRINTF(2, 3);
void sg__nvtx_end(uint64_t range);

#endif
