/* Internal: the host backend's memory table for staging (stage_mem.h):
 * plain page-aligned memory for slabs, registration as bookkeeping only, no
 * fences (host copies are done when they return). */
#ifndef SG_HOST_HOST_STAGE_MEM_H
#define SG_HOST_HOST_STAGE_MEM_H

#include <stdint.h>

#include "staging/stage_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const sg__stage_mem sg__host_stage_mem;

/* Tests: each emulated registration (pin) takes `ns_per_mib` per MiB from
 * now on, as cudaHostRegister takes ~40-55 ms per GiB on the H200 host
 * (0: at once). */
void sg__host_pin_slow(uint64_t ns_per_mib);

#ifdef __cplusplus
}
#endif
#endif
