// The staging geometry sweep shared by its host and GPU suites: random DAGs
// (eq_model.h) whose host buffers are pageable, staged with every chunk size
// of the sweep (tiny ones and ones that are not multiples of 4 KiB), ring
// depths 1-5 and 1-3 copy threads, each scenario under a watchdog.
//
// A staged copy whose host side stops being served would hang its launch
// (the device, or the host backend's emulated stream, waits on a flag
// forever). When a scenario outlives its watchdog, the watchdog writes what
// the pool's conductor is serving (every armed copy's flags and progress)
// to stderr, then releases every armed copy so that the launch, and the
// test, end with a failure instead of a hang.
#ifndef SG_STAGING_SWEEP_H
#define SG_STAGING_SWEEP_H

#include <cstdint>
#include <string>

#include "eq_model.h"
#include "streamgraph/streamgraph.h"

namespace sgsweep {

// Chunk sizes of the sweep: below a page, odd, a page, odd and large.
constexpr size_t kChunks[] = {1000, 3000, 4096, 12345, 65536};
constexpr unsigned kMaxRing = 5;
constexpr unsigned kMaxThreads = 3;

// What the conductor of `pool` serves now, one line per armed copy.
std::string conductor_state(sg_pinned_pool *pool);
// Releases every copy armed on `pool`'s conductor (every `ready` flag set
// to a value every wait of its program accepts). The destinations are then
// garbage: only for a watchdog that has already failed the test.
void release_all(sg_pinned_pool *pool);

// Runs one scenario of `cfg` (its pool set) under a watchdog of `seconds`.
// "" on success; else the failure, with the conductor's state if it hung.
std::string run_watched(const sgeq::Config &cfg, uint64_t seed, const sgeq::Limits &limits,
                        double seconds);

}  // namespace sgsweep

#endif
