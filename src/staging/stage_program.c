/* The device side of a memop-protocol staged copy (stage_program.h). */
#include "staging/stage_program.h"

#include <string.h>

static int put(sg__stage_emit_fn emit, void *ctx, sg__stage_op_kind kind, uint32_t *flag,
               uint32_t value, uint32_t chunk) {
  const sg__stage_op op = {kind, flag, value, chunk};
  return emit(ctx, &op);
}

uint32_t sg__stage_program_last(const sg__stage_run *run) {
  return run->g.chunks + (run->dir == SG__STAGE_D2H ? 1u : 0u);
}

int sg__stage_program(const sg__stage_run *run, int resets, sg__stage_emit_fn emit, void *ctx) {
  sg__stage_flags *f = run->flags;
  const uint32_t n = run->g.chunks, ring = run->g.ring;
  const int h2d = run->dir == SG__STAGE_H2D;
  int r = 0;
  if (resets) {
    for (uint32_t s = 0; s < ring && !r; s++) r = put(emit, ctx, SG__OP_WRITE, &f->ready[s], 0, 0);
    if (!r) r = put(emit, ctx, SG__OP_WRITE, &f->done, 0, 0);
  }
  if (!r) r = put(emit, ctx, SG__OP_WRITE, &f->go, 1, 0);
  for (uint32_t k = 0; k < n && !r; k++) {
    if (k > 0) r = put(emit, ctx, SG__OP_WRITE, &f->done, k, 0);
    if (!r && h2d) r = put(emit, ctx, SG__OP_WAIT, &f->ready[k % ring], k + 1, 0);
    if (!r && !h2d && k >= ring) r = put(emit, ctx, SG__OP_WAIT, &f->ready[k % ring], k - ring + 1, 0);
    if (!r) r = put(emit, ctx, SG__OP_DMA, NULL, 0, k);
  }
  if (!r) r = put(emit, ctx, SG__OP_WRITE, &f->done, n, 0);
  if (!h2d) {
    /* Every drain done: the last chunk each slot held. */
    for (uint32_t s = 0; s < ring && !r; s++) {
      uint32_t last = s + (n - 1 - s) / ring * ring;
      r = put(emit, ctx, SG__OP_WAIT, &f->ready[s], last + 1, 0);
    }
    if (!r) r = put(emit, ctx, SG__OP_WRITE, &f->done, n + 1, 0);
  }
  return r;
}

void sg__stage_op_run(const sg__stage_run *run, const sg__stage_op *op) {
  switch (op->kind) {
    case SG__OP_WRITE: sg__flag_store(op->flag, op->value); break;
    case SG__OP_WAIT: sg__flag_wait_geq(op->flag, op->value); break;
    case SG__OP_DMA: {
      size_t off = sg__stage_offset(run, op->chunk), len = sg__stage_len(run, op->chunk);
      if (run->dir == SG__STAGE_H2D) memcpy(run->device + off, sg__stage_slot(run, op->chunk), len);
      else memcpy(sg__stage_slot(run, op->chunk), run->device + off, len);
      break;
    }
  }
}
