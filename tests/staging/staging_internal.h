// The internal staging units the CPU tests drive directly (the static
// library exposes them), callable from C++.
#ifndef STAGING_INTERNAL_H
#define STAGING_INTERNAL_H

extern "C" {
#include "host/host_stage_mem.h"
#include "staging/policy.h"
#include "staging/pool.h"
#include "staging/regcache.h"
#include "staging/stage_run.h"
#include "staging/tuning.h"
#include "staging/workers.h"
}

#include <cstdint>
#include <random>
#include <vector>

namespace sgstaging {

// Fresh random bytes (a new seed per call site keeps failures reproducible).
inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto &b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// A plain-memory pool for the host backend.
inline sg_pinned_pool_options host_pool_options(size_t max_bytes, size_t slab_bytes = 0) {
  sg_pinned_pool_options o;
  sg_pinned_pool_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.max_bytes = max_bytes;
  o.slab_bytes = slab_bytes;
  return o;
}

}  // namespace sgstaging

#endif
