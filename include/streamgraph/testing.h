/*
 * streamgraph/testing.h - fault injection, for tests.
 *
 * Every allocation, every thread/mutex/condition creation and every CUDA call
 * the library makes goes through a thin wrapper that can be told to fail.
 * A test arms a fault at the n-th wrapped call, runs a scenario, and checks
 * that the failure came back as a status with nothing leaked or hung; then
 * it moves on to n+1, until a run completes without reaching the fault.
 *
 * Every fault point has a name, "<file under src/>:<function>:<call>", such
 * as "core/graph.c:append_node:sg__realloc_array" or
 * "cuda/cuda_nodes.c:sg__cuda_enqueue:cudaLaunchKernel". It does not change
 * when code elsewhere moves, so a failing sweep can say where it failed
 * (sg_fault_site), and a test can aim at one place (sg_fault_arm_site).
 */
#ifndef STREAMGRAPH_TESTING_H
#define STREAMGRAPH_TESTING_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sg_fault_kind {
  SG_FAULT_ALLOC = 1,        /* malloc, calloc, realloc, aligned allocations */
  SG_FAULT_SYSTEM = 2,       /* pthread_create, mutex/condition init, other OS calls */
  SG_FAULT_CUDA = 4,         /* CUDA runtime calls */
  SG_FAULT_ALL = 7
} sg_fault_kind;

/* Makes the nth (1-based) wrapped call of the given kinds fail, counting from
 * now, once. nth == 0 disarms. Process-wide. */
SG_API void sg_fault_arm(unsigned kinds, unsigned long nth);
/* Like sg_fault_arm, counting only the calls at fault points whose name
 * starts with `site`: a file ("host/host_exec.c"), a function
 * ("host/host_exec.c:host_create") or one point. NULL or "" is every point. */
SG_API void sg_fault_arm_site(unsigned kinds, const char *site, unsigned long nth);
/* 1 if the armed fault has been delivered since sg_fault_arm. */
SG_API int sg_fault_fired(void);
/* The name of the fault point the armed fault was delivered at, or "" when
 * it has not been (yet). Valid until the next sg_fault_arm. */
SG_API const char *sg_fault_site(void);
/* Allocations made through the library's wrapper and not yet freed. That
 * includes bookkeeping that lives as long as what it tracks: the table of
 * sg_mem_alloc allocations (one allocation while any of them lives), the
 * handle registry (while any handle lives), and the default pinned pool with
 * its slabs and copy threads, which lives until the process ends once made.
 * Take a baseline with those in the state the measured code leaves them. */
SG_API long sg_live_allocations(void);

#ifdef __cplusplus
}
#endif
#endif
