// Kernels of gpu_conditional_test: each with a host twin running the same
// code, so that one graph runs on the GPU and on the host backend and the
// results can be compared bit for bit.
#include "gpu_conditional_kernels.h"

#include "streamgraph/cond_device.h"

namespace {

__host__ __device__ uint32_t cmix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t x = a * 0x9e3779b1u ^ (b + salt + (a << 6) + (a >> 2));
  x ^= x >> 15;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

// One node's work (gpu_conditional_kernels.h): one thread does it all, so
// that the result is the same on both sides.
__host__ __device__ void cond_spec_run(uint32_t *mem, const gc_spec &s, sg_cond_ref ref) {
  uint32_t v = cmix(s.salt, mem[s.dst], s.salt);
  for (uint32_t i = 0; i < s.n_in; i++) v = cmix(v, mem[s.in[i]], s.salt);
  mem[s.dst] = v;
  if (s.op == GC_DECIDE) {
    if (s.kind == SG_COND_WHILE) {
      mem[s.counter] = (v >> 3) % 4;
      sg_cond_set(ref, mem[s.counter] != 0);
    } else if (s.kind == SG_COND_IF) {
      sg_cond_set(ref, (v >> 3) & 1u);
    } else {
      sg_cond_set(ref, (v >> 3) % (s.bodies + 1));
    }
  } else if (s.op == GC_STEP) {
    if (mem[s.counter]) mem[s.counter]--;
    sg_cond_set(ref, mem[s.counter] != 0);
  }
}

__global__ void cond_spec_kernel(uint32_t *mem, gc_spec s, sg_cond_ref ref) {
  if (threadIdx.x == 0 && blockIdx.x == 0) cond_spec_run(mem, s, ref);
}

// The loop of the simple tests: counter[0] iterations of acc = mix(acc, i).
__global__ void loop_init_kernel(uint32_t *state, sg_cond_ref ref) {
  if (threadIdx.x == 0 && blockIdx.x == 0) sg_cond_set(ref, state[0] != 0);
}

__global__ void loop_step_kernel(uint32_t *state, sg_cond_ref ref) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    state[1] = cmix(state[1], state[0], 7u);
    state[0]--;
    state[2]++;
    sg_cond_set(ref, state[0] != 0);
  }
}

// Sets the condition to 1 on its first run only (state[3] remembers).
__global__ void set_once_kernel(uint32_t *state, sg_cond_ref ref) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && state[3] == 0) {
    state[3] = 1;
    sg_cond_set(ref, 1);
  }
}

}  // namespace

extern "C" {

const void *gc_set_once_kernel(void) { return (const void *)set_once_kernel; }

void gc_set_once_twin(const sg_kernel_launch *, void *const *args) {
  uint32_t *state = *static_cast<uint32_t *const *>(args[0]);
  if (state[3] == 0) {
    state[3] = 1;
    sg_cond_set(*static_cast<const sg_cond_ref *>(args[1]), 1);
  }
}


const void *gc_spec_kernel(void) { return (const void *)cond_spec_kernel; }
const void *gc_loop_init_kernel(void) { return (const void *)loop_init_kernel; }
const void *gc_loop_step_kernel(void) { return (const void *)loop_step_kernel; }

void gc_spec_twin(const sg_kernel_launch *, void *const *args) {
  cond_spec_run(*static_cast<uint32_t *const *>(args[0]), *static_cast<const gc_spec *>(args[1]),
                *static_cast<const sg_cond_ref *>(args[2]));
}

void gc_loop_init_twin(const sg_kernel_launch *, void *const *args) {
  uint32_t *state = *static_cast<uint32_t *const *>(args[0]);
  sg_cond_set(*static_cast<const sg_cond_ref *>(args[1]), state[0] != 0);
}

void gc_loop_step_twin(const sg_kernel_launch *, void *const *args) {
  uint32_t *state = *static_cast<uint32_t *const *>(args[0]);
  state[1] = cmix(state[1], state[0], 7u);
  state[0]--;
  state[2]++;
  sg_cond_set(*static_cast<const sg_cond_ref *>(args[1]), state[0] != 0);
}

}  // extern "C"
