/*
 * streamgraph/grid_device.h - a kernel whose grid comes from the device.
 * Include it in the .cu file of a kernel bound to a grid source
 * (sg_graph_kernel_bind_grid, streamgraph/conditional.h); it is plain C as
 * well, for host twins.
 *
 *   __global__ void scale(float *x, float a, sg_grid_ref g) {
 *     if (!sg_grid_has_block(g, blockIdx.x, blockIdx.y, blockIdx.z)) return;
 *     const sg_grid_dims live = sg_grid_live(g);      (instead of gridDim)
 *     for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < live.x * blockDim.x; ...)
 *   }
 *
 * The live grid is min(words[d], bound[d]) in each dimension d, where
 * words are the three unsigned values (x, y, z) an earlier node wrote and
 * bound is the node's declared grid. How it is applied differs by mode,
 * the result does not:
 *   - CUDA graph mode launches the bound; the reference carries the words'
 *     address, and blocks outside the live grid return at once through
 *     sg_grid_has_block.
 *   - CUDA streams mode and the host backend read the words on the host
 *     once the node's dependencies finished and launch exactly the live
 *     grid (no block when a dimension is 0); the reference then carries
 *     the live grid itself, and sg_grid_has_block is true for every block.
 * So a kernel that skips the blocks sg_grid_has_block refuses, and uses
 * sg_grid_live wherever it would use gridDim, computes the same in every
 * mode.
 */
#ifndef STREAMGRAPH_GRID_DEVICE_H
#define STREAMGRAPH_GRID_DEVICE_H

#if defined(__CUDACC__)
#define SG_GRID_FN_ static __inline__ __host__ __device__
#else
#define SG_GRID_FN_ static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel gets for its grid source (24 bytes): the words to read and
 * the bound (graph mode), or no words and the live grid (streams mode, the
 * host backend). Each executable fills it in: the value the graph was built
 * with does not matter. */
typedef struct sg_grid_ref {
  const unsigned *words;
  unsigned x, y, z;
  unsigned reserved;
} sg_grid_ref;

typedef struct sg_grid_dims {
  unsigned x, y, z;
} sg_grid_dims;

/* The grid this launch runs, in blocks. */
SG_GRID_FN_ sg_grid_dims sg_grid_live(sg_grid_ref g) {
  sg_grid_dims d;
  d.x = g.x;
  d.y = g.y;
  d.z = g.z;
  if (g.words) {
    const unsigned wx = g.words[0], wy = g.words[1], wz = g.words[2];
    if (wx < d.x) d.x = wx;
    if (wy < d.y) d.y = wy;
    if (wz < d.z) d.z = wz;
  }
  return d;
}

/* Whether block (bx, by, bz) belongs to the live grid. */
SG_GRID_FN_ int sg_grid_has_block(sg_grid_ref g, unsigned bx, unsigned by, unsigned bz) {
  const sg_grid_dims d = sg_grid_live(g);
  return bx < d.x && by < d.y && bz < d.z;
}

#ifdef __cplusplus
}
#endif
#undef SG_GRID_FN_
#endif
