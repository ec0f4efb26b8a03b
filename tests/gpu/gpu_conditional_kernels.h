// Kernels of gpu_conditional_test (gpu_conditional_kernels.cu), each with
// its host twin.
#ifndef SG_GPU_CONDITIONAL_KERNELS_H
#define SG_GPU_CONDITIONAL_KERNELS_H

#include <stdint.h>

#include "streamgraph/conditional.h"
#include "streamgraph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GC_MIX = 0, GC_DECIDE = 1, GC_STEP = 2, GC_MAX_IN = 6 };

// A node's work, by value: mem[dst] = mix(mem[dst], mem[in[..]], salt);
// a DECIDE also sets its condition from the result (WHILE: mem[counter] =
// iterations left, 0..3), a STEP counts mem[counter] down and sets it.
typedef struct gc_spec {
  uint32_t op, dst, n_in, in[GC_MAX_IN], salt, kind, bodies, counter;
} gc_spec;

// cond_spec(uint32_t *mem, gc_spec spec, sg_cond_ref ref)
const void *gc_spec_kernel(void);
void gc_spec_twin(const sg_kernel_launch *launch, void *const *args);
// loop_init(uint32_t *state, sg_cond_ref ref): sets ref to state[0] != 0.
const void *gc_loop_init_kernel(void);
void gc_loop_init_twin(const sg_kernel_launch *launch, void *const *args);
// loop_step(uint32_t *state, sg_cond_ref ref): state[1] = mix(state[1],
// state[0]); state[0]--; state[2]++; ref = state[0] != 0.
const void *gc_loop_step_kernel(void);
void gc_loop_step_twin(const sg_kernel_launch *launch, void *const *args);

// set_once(uint32_t *state, sg_cond_ref ref): ref = 1 the first time
// (state[3] == 0, which it sets to 1).
const void *gc_set_once_kernel(void);
void gc_set_once_twin(const sg_kernel_launch *launch, void *const *args);

#ifdef __cplusplus
}
#endif
#endif
