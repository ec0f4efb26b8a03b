// Running one ready-made kernel through the library on a chosen backend:
// buffers from sg_mem_alloc (device memory on the CUDA backend, host memory
// on the host backend), filled and read back with sg_mem_copy, outputs
// poisoned with NaN first. The same test bodies thus check the host twins
// (on CI) and the CUDA kernels (in the GPU suite), against the references of
// kernel_refs.h.
#ifndef SG_KERNEL_HARNESS_H
#define SG_KERNEL_HARNESS_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

#define KT_ASSERT_OK(expr)                                                              \
  do {                                                                                  \
    sg_status kt_st_ = (expr);                                                          \
    ASSERT_EQ(kt_st_, SG_OK) << #expr << ": " << sg_status_name(kt_st_) << ": "        \
                             << sg_last_error();                                        \
  } while (0)

namespace kt {

// A way to run a kernel: backend, mode and graph build.
struct Way {
  const char *name;
  sg_backend backend;
  sg_exec_mode mode;
  sg_graph_build build;
};

inline void PrintTo(const Way &w, std::ostream *os) { *os << w.name; }
inline std::string way_name(const ::testing::TestParamInfo<Way> &info) { return info.param.name; }

inline std::vector<Way> host_ways() { return {{"host", SG_BACKEND_HOST, SG_MODE_STREAMS, SG_BUILD_EXPLICIT}}; }
inline std::vector<Way> cuda_ways() {
  return {{"cuda_streams", SG_BACKEND_CUDA, SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
          {"cuda_graph_explicit", SG_BACKEND_CUDA, SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
          {"cuda_graph_capture", SG_BACKEND_CUDA, SG_MODE_GRAPH, SG_BUILD_CAPTURE}};
}

// The seed of this run: SG_TEST_SEED when set (to replay a failure), else
// fresh. Tests print it in every failure (SCOPED_TRACE).
inline uint32_t run_seed() {
  static const uint32_t seed = [] {
    const char *env = std::getenv("SG_TEST_SEED");
    if (env && *env) return static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
    return static_cast<uint32_t>(std::random_device{}());
  }();
  return seed;
}

inline std::string seed_note(uint32_t seed) {
  return "seed " + std::to_string(seed) + " (replay: SG_TEST_SEED=" + std::to_string(run_seed()) +
         ")";
}

// A buffer of `n` T on the way's backend ("device" memory), freed at scope end.
template <class T>
struct Buf {
  void *p = nullptr;
  size_t n = 0;
  Buf(const Way &w, size_t count) : n(count) {
    size_t bytes = (count ? count : 1) * sizeof(T);
    sg_status st = sg_mem_alloc(w.backend, SG_MEMORY_DEVICE, 0, bytes, &p);
    EXPECT_EQ(st, SG_OK) << sg_last_error();
  }
  Buf(const Way &w, const std::vector<T> &v) : Buf(w, v.size()) { write(v); }
  ~Buf() {
    if (p) sg_mem_free(p);
  }
  Buf(const Buf &) = delete;
  Buf &operator=(const Buf &) = delete;
  T *get() const { return static_cast<T *>(p); }
  void write(const std::vector<T> &v) {
    ASSERT_EQ(v.size(), n);
    if (n) KT_ASSERT_OK(sg_mem_copy(p, v.data(), n * sizeof(T)));
  }
  void poison() {  // all bits set: NaN as a float, a value no kernel here writes
    std::vector<unsigned char> bad(n * sizeof(T), 0xff);
    if (n) KT_ASSERT_OK(sg_mem_copy(p, bad.data(), bad.size()));
  }
  std::vector<T> read() const {
    std::vector<T> v(n);
    if (n) EXPECT_EQ(sg_mem_copy(v.data(), p, n * sizeof(T)), SG_OK) << sg_last_error();
    return v;
  }
};

// Runs the call once, as a one-node graph, the way `w` says, and waits.
inline void run(const Way &w, const sg_kernel_call &call) {
  sg_graph *g = nullptr;
  KT_ASSERT_OK(sg_graph_create(&g));
  sg_status st = sg_graph_add_kernel(g, &call.desc, nullptr, 0, nullptr);
  sg_exec *e = nullptr;
  if (st == SG_OK) {
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = w.backend;
    o.mode = w.mode;
    o.build = w.build;
    st = sg_exec_create(g, &o, &e);
  }
  if (st == SG_OK) st = sg_exec_launch(e, nullptr);
  if (st == SG_OK) st = sg_exec_wait(e);
  std::string why = st ? sg_last_error() : "";
  if (e) sg_exec_destroy(e);
  sg_graph_destroy(g);
  ASSERT_EQ(st, SG_OK) << sg_status_name(st) << ": " << why;
}

}  // namespace kt

#endif
