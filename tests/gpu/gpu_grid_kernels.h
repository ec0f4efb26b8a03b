// Kernels of gpu_grid_source_test (gpu_grid_kernels.cu), each with its host
// twin: a producer writing a grid (and a condition), a consumer bound to it.
#ifndef SG_GPU_GRID_KERNELS_H
#define SG_GPU_GRID_KERNELS_H

#include <stdint.h>

#include "streamgraph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GG_BOUND_X = 40, GG_BOUND_Y = 3, GG_BLOCK = 64 };

// grid_produce(uint32_t *state, unsigned *words, sg_cond_ref ref): advances
// state[0] and writes words = {0..bound_x+2, 1..bound_y+1, 1..2} from it;
// ref = bit 20 of the new state.
const void *gg_produce_kernel(void);
void gg_produce_twin(const sg_kernel_launch *launch, void *const *args);
// The same without a condition: (state, words).
const void *gg_produce_plain_kernel(void);
void gg_produce_plain_twin(const sg_kernel_launch *launch, void *const *args);
// grid_consume(const uint32_t *in, uint32_t *out, uint32_t salt, sg_grid_ref g):
// out[i] = mix(in[i] ^ salt, live grid) for each thread of the live grid.
const void *gg_consume_kernel(void);
void gg_consume_twin(const sg_kernel_launch *launch, void *const *args);

#ifdef __cplusplus
}
#endif
#endif
