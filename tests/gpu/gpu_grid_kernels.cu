// Kernels of gpu_grid_source_test: each with a host twin running the same
// code, so that one graph runs on the GPU and on the host backend and the
// results can be compared bit for bit.
#include "gpu_grid_kernels.h"

#include "streamgraph/cond_device.h"
#include "streamgraph/grid_device.h"

namespace {

__host__ __device__ uint32_t gmix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t x = a * 0x9e3779b1u ^ (b + salt + (a << 6) + (a >> 2));
  x ^= x >> 15;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

// The next grid into `words`; returns the value a condition would take.
__host__ __device__ unsigned produce_words(uint32_t *state, unsigned *words) {
  const uint32_t v = gmix(state[0], 0x9e3779b9u, 7u);
  state[0] = v;
  words[0] = v % (GG_BOUND_X + 3);
  words[1] = 1 + (v >> 8) % (GG_BOUND_Y + 1);
  words[2] = 1 + (v >> 16) % 2;
  return (v >> 20) & 1u;
}

__host__ __device__ void produce(uint32_t *state, unsigned *words, sg_cond_ref ref) {
  sg_cond_set(ref, produce_words(state, words));
}

__host__ __device__ void consume(const uint32_t *in, uint32_t *out, uint32_t salt,
                                 sg_grid_ref g, unsigned bx, unsigned by, unsigned bz,
                                 unsigned tx, unsigned block_x) {
  if (!sg_grid_has_block(g, bx, by, bz)) return;
  const sg_grid_dims live = sg_grid_live(g);
  const size_t i = ((size_t)bz * live.y * live.x + (size_t)by * live.x + bx) * block_x + tx;
  out[i] = gmix(in[i] ^ salt, live.x * 131u + live.y, live.z);
}

__global__ void produce_kernel(uint32_t *state, unsigned *words, sg_cond_ref ref) {
  if (threadIdx.x == 0 && blockIdx.x == 0) produce(state, words, ref);
}

__global__ void produce_plain_kernel(uint32_t *state, unsigned *words) {
  if (threadIdx.x == 0 && blockIdx.x == 0) produce_words(state, words);
}

__global__ void consume_kernel(const uint32_t *in, uint32_t *out, uint32_t salt, sg_grid_ref g) {
  consume(in, out, salt, g, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, blockDim.x);
}

}  // namespace

extern "C" {

const void *gg_produce_kernel(void) { return (const void *)produce_kernel; }
const void *gg_consume_kernel(void) { return (const void *)consume_kernel; }
const void *gg_produce_plain_kernel(void) { return (const void *)produce_plain_kernel; }

void gg_produce_plain_twin(const sg_kernel_launch *, void *const *args) {
  produce_words(*static_cast<uint32_t *const *>(args[0]), *static_cast<unsigned *const *>(args[1]));
}

void gg_produce_twin(const sg_kernel_launch *, void *const *args) {
  produce(*static_cast<uint32_t *const *>(args[0]), *static_cast<unsigned *const *>(args[1]),
          *static_cast<const sg_cond_ref *>(args[2]));
}

void gg_consume_twin(const sg_kernel_launch *launch, void *const *args) {
  const uint32_t *in = *static_cast<const uint32_t *const *>(args[0]);
  uint32_t *out = *static_cast<uint32_t *const *>(args[1]);
  const uint32_t salt = *static_cast<const uint32_t *>(args[2]);
  const sg_grid_ref g = *static_cast<const sg_grid_ref *>(args[3]);
  for (unsigned z = 0; z < launch->grid.z; z++)
    for (unsigned y = 0; y < launch->grid.y; y++)
      for (unsigned x = 0; x < launch->grid.x; x++)
        for (unsigned t = 0; t < launch->block.x; t++)
          consume(in, out, salt, g, x, y, z, t, launch->block.x);
}

}  // extern "C"
