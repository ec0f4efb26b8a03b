/* memplan_bench's GPU section: the same graph's temporaries as CUDA graph
 * memory nodes (cudaGraphAddMemAllocNode / cudaGraphAddMemFreeNode), and
 * what the driver's graph memory pool holds for them (memplan_graphmem.c).
 * Built only with CUDA; the rest of memplan_bench needs no GPU. */
#ifndef SG_BENCH_MEMPLAN_GRAPHMEM_H
#define SG_BENCH_MEMPLAN_GRAPHMEM_H

#include <stddef.h>

#include "core/access.h"
#include "plan/schedule.h"

typedef struct graphmem_result {
  size_t used_high;          /* cudaGraphMemAttrUsedMemHigh after one launch */
  size_t reserved_high;      /* cudaGraphMemAttrReservedMemHigh after one launch */
  double instantiate_ms;     /* cudaGraphInstantiate, wall */
  double launch_ms;          /* the first launch and its wait, wall */
} graphmem_result;

/* Builds a CUDA graph of empty nodes with the graph's edges (`succ_start`,
 * `succ`), one allocation node per used temporary before its first user in
 * the issue order `s->order` (after that user's predecessors, before every
 * user) and one free node after its users (before the users' successors
 * that come after its last user), instantiates it on device 0, launches
 * it once and reads the pool's high-water marks. Returns 0, 1 when there
 * is no GPU (nothing measured), -1 on a CUDA error (printed). */
int graphmem_measure(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                     const sg__access_table *t, graphmem_result *out);

#endif
