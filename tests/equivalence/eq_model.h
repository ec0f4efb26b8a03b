// The randomized equivalence check, written against the public API only.
//
// A scenario builds a random DAG whose every edge carries data: kernels fold
// their predecessors' device buffers, host callbacks fold their predecessors'
// host buffers, copies move data up (from pageable or pinned host buffers at
// odd offsets, packed so that neighbours share pages), across and down,
// memsets start chains. It runs the DAG in rounds; between rounds it changes
// the executable by every update path the library offers (sg_exec_set_*,
// sg_exec_update with an edited graph of the same topology, sg_exec_update
// after new nodes were added), pointing copies at other buffers, back at
// earlier ones, and at the same buffer again. Before each round inputs are
// fresh and every output is poisoned; after it every node's output is
// compared bit for bit with a serial reference.
//
// Used by the host-backend suite (CI), the GPU suite (every mode and staging
// policy) and the execution fuzz target (choices from the fuzzer's bytes).
// No GoogleTest here: a scenario returns what went wrong as text.
#ifndef SG_EQ_MODEL_H
#define SG_EQ_MODEL_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "streamgraph/streamgraph.h"

namespace sgeq {

struct Config {
  sg_backend backend = SG_BACKEND_HOST;
  sg_exec_mode mode = SG_MODE_STREAMS;
  sg_graph_build build = SG_BUILD_EXPLICIT;
  sg_staging_policy policy = SG_STAGING_AUTO;
  unsigned max_streams = 0;
  sg_pinned_pool *pool = nullptr;   // staging pool (NULL: the default pool)
  const void *kernel_func = nullptr; // the CUDA kernel (eq_kernel.h), NULL on the host backend
  size_t auto_min_bytes = 0;        // AUTO's threshold (0: the library's default)
  unsigned auto_register_after = 0;
  // Staging geometry: 0 leaves each to the scenario (a random chunk size
  // and ring depth, the library's default threads); else that value.
  size_t chunk_bytes = 0;
  unsigned ring_depth = 0;
  unsigned copy_threads = 0;
};

struct Limits {
  uint32_t max_nodes = 24;      // nodes of the first graph (at least 1)
  uint32_t max_words = 256;     // 32-bit words per node's output (at least 1)
  uint32_t min_words = 0;       // 0: log-uniform in [1, max_words]; else uniform in [min, max]
  bool exact_nodes = false;     // the first graph has max_nodes nodes, not 1..max_nodes
  uint32_t rounds = 4;          // rounds of updates and launches
  uint32_t max_launches = 3;    // launches back to back per round
  uint32_t max_added = 3;       // nodes added per topology change
};

// Where the random choices come from.
class Chooser {
 public:
  virtual ~Chooser() = default;
  // A number in [0, n) (n >= 1).
  virtual uint32_t below(uint32_t n) = 0;
  bool coin(uint32_t one_in) { return below(one_in) == 0; }
};

class SeededChooser : public Chooser {
 public:
  explicit SeededChooser(uint64_t seed) : rng_(seed) {}
  uint32_t below(uint32_t n) override { return static_cast<uint32_t>(rng_() % n); }

 private:
  std::mt19937_64 rng_;
};

// Reads choices from a byte string (a fuzzer's input); zeros once exhausted.
class BytesChooser : public Chooser {
 public:
  BytesChooser(const uint8_t *data, size_t size) : p_(data), left_(size) {}
  uint32_t below(uint32_t n) override {
    uint32_t v = 0;
    for (uint32_t range = 1; range < n && range != 0; range <<= 8) v = (v << 8) | next();
    return n ? v % n : 0;
  }

 private:
  uint8_t next() {
    if (!left_) return 0;
    left_--;
    return *p_++;
  }
  const uint8_t *p_;
  size_t left_;
};

// What a scenario did (summed over scenarios by the suites, for their logs).
struct Stats {
  uint64_t scenarios = 0, nodes = 0, launches = 0, updates = 0, rebuilds = 0, words_checked = 0;
};

// Runs one scenario. Returns "" when every output matched the reference in
// every round, otherwise the first difference or failing call, with the
// configuration and the round. Adds to *stats when given.
std::string run_scenario(const Config &config, Chooser &choose, const Limits &limits,
                         Stats *stats = nullptr);

// "host/streams/STAGE/max_streams=2" and the like.
std::string describe(const Config &config);

}  // namespace sgeq

#endif
