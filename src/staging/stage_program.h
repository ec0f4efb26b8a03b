/* Internal: the device side of a memop-protocol staged copy, as a program
 * of stream operations (docs/staging.md, "The memop protocol"), n chunks,
 * R slots, chunk k in slot k % R:
 *
 *   host->device:  write go=1
 *                  for k: [k > 0: write done=k]  wait ready[k%R] >= k+1  DMA(k)
 *                  write done=n
 *   device->host:  write go=1
 *                  for k: [k > 0: write done=k]  [k >= R: wait ready[k%R] >= k-R+1]  DMA(k)
 *                  write done=n  wait ready[s] >= (last chunk of s)+1, each s  write done=n+1
 *
 * A ring that serves every launch of a graph (`resets`) starts by writing
 * 0 into done and every ready[s]. One generator for every executor: the
 * CUDA backend turns the operations into stream operations (streams mode)
 * or graph nodes (graph mode), the host backend carries them out on the
 * thread that runs the copy node. */
#ifndef SG_STAGING_STAGE_PROGRAM_H
#define SG_STAGING_STAGE_PROGRAM_H

#include <stdint.h>

#include "staging/stage_run.h"

typedef enum sg__stage_op_kind {
  SG__OP_WRITE = 1, /* *flag = value, after the stream's earlier work */
  SG__OP_WAIT,      /* the stream waits until (int32_t)(*flag - value) >= 0 */
  SG__OP_DMA        /* chunk `chunk`: slot -> device, or device -> slot */
} sg__stage_op_kind;

typedef struct sg__stage_op {
  sg__stage_op_kind kind;
  uint32_t *flag;  /* WRITE, WAIT */
  uint32_t value;  /* WRITE, WAIT */
  uint32_t chunk;  /* DMA */
} sg__stage_op;

/* Hands the program's operations to `emit`, in order; stops at the first
 * nonzero answer and returns it (0 when every operation was handed over). */
typedef int (*sg__stage_emit_fn)(void *ctx, const sg__stage_op *op);
int sg__stage_program(const sg__stage_run *run, int resets, sg__stage_emit_fn emit, void *ctx);

/* The `done` the program writes last (n, or n+1 device->host). */
uint32_t sg__stage_program_last(const sg__stage_run *run);

/* Carries out one operation on the calling thread (the host backend's
 * emulated stream): a write stores, a wait blocks (stage_flags.h), a DMA is
 * a memcpy between the slot and the device side. */
void sg__stage_op_run(const sg__stage_run *run, const sg__stage_op *op);

#endif
