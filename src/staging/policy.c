/* Routes and geometry of candidate copies, from values (policy.h). */
#include "staging/policy.h"

#include "staging/tuning.h"

sg__copy_route sg__staging_fallback(sg_staging_policy policy, int dma, int into_graph,
                                    size_t bytes, size_t auto_min_bytes) {
  if (dma && into_graph) return SG__ROUTE_STAGE; /* never a pageable memcpy node */
  if (policy == SG_STAGING_NONE) return SG__ROUTE_DIRECT;
  /* The host backend has no DMA to overlap; on CUDA a small copy costs
   * about as much through the driver as through the callbacks. */
  if (policy == SG_STAGING_AUTO && (!dma || bytes < auto_min_bytes)) return SG__ROUTE_DIRECT;
  return SG__ROUTE_STAGE;
}

int sg__staging_may_register(sg_staging_policy policy, size_t bytes, size_t auto_min_bytes,
                             unsigned streak, unsigned register_after) {
  if (policy == SG_STAGING_REGISTER) return 1;
  return policy == SG_STAGING_AUTO && bytes >= auto_min_bytes && streak >= register_after;
}

sg__route_choice sg__route_choose(const sg__route_facts *f) {
  sg__route_choice c;
  c.otherwise = sg__staging_fallback(f->policy, f->dma, f->into_graph, f->bytes, f->auto_min_bytes);
  if (f->reg_pending) { /* the registration under way is the one this copy waits for */
    c.reg = SG__REG_SKIP;
    return c;
  }
  switch (f->policy) {
    case SG_STAGING_REGISTER:
      /* The caller asked for it: pinned on the launch (or creation) that
       * first needs the buffer, unless the driver refused it already. */
      c.reg = f->no_register ? SG__REG_EXISTING : SG__REG_NOW;
      break;
    case SG_STAGING_AUTO:
      /* A graph is built once: it cannot count launches, so it uses a
       * registration that exists. Per launch, a buffer copied
       * register_after times in a row (2 by default: the first reuse) is
       * pinned off the launch path, in pieces, while the launches stage;
       * a small copy only looks for one someone else made. */
      c.reg = !f->into_graph && !f->no_register &&
                      sg__staging_may_register(f->policy, f->bytes, f->auto_min_bytes, f->streak,
                                               f->register_after)
                  ? SG__REG_BACKGROUND
                  : SG__REG_EXISTING;
      break;
    default: /* STAGE and NONE never register */
      c.reg = SG__REG_SKIP;
      break;
  }
  return c;
}

void sg__route_geometry(size_t chunk_bytes, unsigned ring_depth, unsigned copy_threads,
                        int memops, int to_device, size_t bytes, unsigned cpus,
                        sg__stage_geometry *g) {
  const int long_copy = memops && sg__stage_memops_long(to_device, bytes);
  size_t chunk = chunk_bytes ? chunk_bytes
                 : memops    ? sg__stage_auto_chunk_memops(to_device, bytes)
                             : sg__stage_auto_chunk(to_device, bytes);
  /* The long copies' deeper ring goes with their own chunk: a chunk the
   * caller chose keeps the default ring, so that a larger chunk does not
   * multiply the pinned memory a copy holds. */
  unsigned ring = ring_depth                   ? ring_depth
                  : long_copy && !chunk_bytes ? SG__STAGE_MEMOPS_LONG_RING
                                               : SG__STAGE_DEFAULT_RING;
  unsigned threads = copy_threads ? copy_threads
                     : long_copy  ? sg__stage_memops_long_threads(cpus)
                                  : sg__stage_default_threads(to_device, bytes, cpus);
  sg__stage_geometry_make(bytes, chunk, ring, threads, g);
}

size_t sg__route_reg_piece(size_t len) {
  const size_t min_piece = (size_t)4 << 20, max_piece = (size_t)128 << 20;
  if (len <= 2 * min_piece) return len;
  size_t piece = len / 8;
  if (piece < min_piece) piece = min_piece;
  if (piece > max_piece) piece = max_piece;
  return piece & ~(size_t)4095;
}
