/* Routes by policy (policy.h). */
#include "staging/policy.h"

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
