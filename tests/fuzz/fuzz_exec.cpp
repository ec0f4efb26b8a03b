// Fuzz target: execution. Small random DAGs (kernels with host twins, host
// callbacks, copies between pageable, pinned and device memory at odd
// offsets, memsets), built, launched, changed by every update path and
// launched again on the host backend, in streams and graph mode under every
// staging policy and stream limit, all chosen by the fuzzer's bytes. Every
// node's output is compared with a serial reference inside the target
// (tests/equivalence/eq_model.h); nothing may leak.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "eq_model.h"
#include "fuzz_pool.h"
#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"

namespace {


long baseline = -1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sg_pinned_pool *p = sgfuzz::pool();
  if (baseline < 0) baseline = sgfuzz::warm_baseline(p);
  sgeq::BytesChooser choose(data, size);
  sgeq::Config cfg;
  cfg.backend = SG_BACKEND_HOST;
  cfg.mode = choose.below(2) ? SG_MODE_GRAPH : SG_MODE_STREAMS;
  cfg.policy = static_cast<sg_staging_policy>(choose.below(4));
  cfg.max_streams = choose.below(5);
  cfg.pool = p;
  cfg.auto_min_bytes = 64;
  cfg.auto_register_after = 1 + choose.below(3);
  sgeq::Limits lim;
  lim.max_nodes = 12;
  lim.max_words = 64;
  lim.rounds = 3;
  lim.max_launches = 2;
  lim.max_added = 2;
  std::string error = sgeq::run_scenario(cfg, choose, lim);
  if (!error.empty()) {
    std::fprintf(stderr, "fuzz_exec: %s\n", error.c_str());
    std::abort();
  }
  sg_pinned_pool_trim(p);
  long live = sg_live_allocations();
  if (live != baseline) {
    std::fprintf(stderr, "fuzz_exec: %ld library allocations live, %ld before\n", live, baseline);
    std::abort();
  }
  return 0;
}
