/* Internal: the host backend's memory table for staging (stage_mem.h):
 * plain page-aligned memory for slabs, registration as bookkeeping only, no
 * fences (host copies are done when they return). */
#ifndef SG_HOST_HOST_STAGE_MEM_H
#define SG_HOST_HOST_STAGE_MEM_H

#include "staging/stage_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const sg__stage_mem sg__host_stage_mem;

#ifdef __cplusplus
}
#endif
#endif
