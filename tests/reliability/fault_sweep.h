// A fault sweep over the paths the reliability defects lived on: staged,
// registered and direct pageable copies whose buffers share pages, copies
// re-pointed at the same buffer and back after a detour, sg_exec_update
// with a new topology (the transactional rebuild), host callbacks and
// kernels. Every allocation, thread/mutex/condition creation and CUDA call
// of the scenario fails in turn (streamgraph/testing.h): each failure must
// come back as a status with a message, leave nothing allocated and nothing
// hung, and a run the fault did not disturb must give the right bytes. Used
// on the host backend (CI) and on the GPU (every mode and staging policy).
#ifndef SG_FAULT_SWEEP_H
#define SG_FAULT_SWEEP_H

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"
#include "streamgraph/testing.h"

namespace sgsweep {

constexpr size_t kWords = 3000;  // 12000 bytes: not a multiple of a page
constexpr size_t kBytes = kWords * 4;
constexpr uintptr_t kPage = 4096;

// Pageable memory laid out so that A (input) and B (output) share a page.
struct Host {
  uint8_t *block;
  uint32_t *a, *b, *c;  // c: a detour, pages away
  Host() {
    block = static_cast<uint8_t *>(std::aligned_alloc(kPage, 16 * kPage));
    a = reinterpret_cast<uint32_t *>(block + 64 + 4);
    b = reinterpret_cast<uint32_t *>(block + 64 + 4 + kBytes + 8);
    c = reinterpret_cast<uint32_t *>(block + 10 * kPage + 12);
  }
  ~Host() { std::free(block); }
};

struct Scenario {
  sg_backend backend;
  sg_exec_options options;
  void *dev = nullptr;
  Host host;
  std::atomic<int> host_calls{0};
  std::vector<uint32_t> expect = std::vector<uint32_t>(kWords);

  static int count(void *p) {
    static_cast<std::atomic<int> *>(p)->fetch_add(1);
    return 0;
  }

  // up: A -> dev[0]; mix: dev[1] = mix(dev[0], dev[0]); down: dev[1] -> B;
  // host callback after it.
  sg_status build(sg_graph *g, sg_node *down, sg_node *mix) {
    uint32_t *d = static_cast<uint32_t *>(dev);
    sg_node up{}, h{};
    sg_copy_desc u = {d, host.a, kBytes, SG_COPY_HOST_TO_DEVICE, "up"};
    sg_status st = sg_graph_add_copy(g, &u, nullptr, 0, &up);
    sg_kernel_call k;
    sg_kernels_mix_u32(&k, d + kWords, d, d, 7, kWords);
    if (!st) st = sg_graph_add_kernel(g, &k.desc, &up, 1, mix);
    sg_copy_desc dn = {host.b, d + kWords, kBytes, SG_COPY_DEVICE_TO_HOST, "down"};
    if (!st) st = sg_graph_add_copy(g, &dn, mix, 1, down);
    sg_host_desc hd = {count, &host_calls, "count"};
    if (!st) st = sg_graph_add_host(g, &hd, down, 1, &h);
    return st;
  }

  // The whole scenario; the first failing status (with its message).
  sg_status run() {
    sg_graph *g = nullptr;
    sg_exec *e = nullptr;
    sg_node down{}, mix{};
    sg_status st = sg_graph_create(&g);
    if (!st) st = build(g, &down, &mix);
    if (!st) st = sg_exec_create(g, &options, &e);
    if (!st) st = sg_exec_launch(e, nullptr);
    if (!st) st = sg_exec_wait(e);
    uint32_t *d = static_cast<uint32_t *>(dev);
    sg_copy_desc same = {host.b, d + kWords, kBytes, SG_COPY_DEVICE_TO_HOST, "down again"};
    sg_copy_desc detour = {host.c, d + kWords, kBytes, SG_COPY_DEVICE_TO_HOST, "down detour"};
    if (!st) st = sg_exec_set_copy(e, down, &same);
    if (!st) st = sg_exec_launch(e, nullptr);
    if (!st) st = sg_exec_set_copy(e, down, &detour);
    if (!st) st = sg_exec_launch(e, nullptr);
    if (!st) st = sg_exec_set_copy(e, down, &same);
    // A new topology: a second download into C beside the first into B.
    sg_copy_desc late = {host.c, d + kWords, kBytes, SG_COPY_DEVICE_TO_HOST, "late"};
    if (!st) st = sg_graph_add_copy(g, &late, &mix, 1, nullptr);
    if (!st) st = sg_exec_update(e, g);
    if (!st) st = sg_exec_launch(e, nullptr);
    if (!st) st = sg_exec_wait(e);
    if (e) {
      sg_status w = sg_exec_wait(e);  // a failed launch's error, or nothing
      sg_status x = sg_exec_destroy(e);
      if (!st) st = w ? w : x;
    }
    if (g) sg_graph_destroy(g);
    return st;
  }

  // Fresh input, poisoned outputs, the expected output.
  void prepare(uint32_t seed) {
    for (size_t i = 0; i < kWords; i++) {
      host.a[i] = seed * 2654435761u + static_cast<uint32_t>(i);
      expect[i] = sg_kernels_mix(host.a[i], host.a[i], 7);
    }
    std::memset(host.b, 0xA5, kBytes);
    std::memset(host.c, 0xA5, kBytes);
    host_calls = 0;
  }

  std::string check_output() const {
    for (size_t i = 0; i < kWords; i++) {
      if (host.b[i] != expect[i]) return "B[" + std::to_string(i) + "] wrong";
      if (host.c[i] != expect[i]) return "C[" + std::to_string(i) + "] wrong";
    }
    if (host_calls.load() != 4) return std::to_string(host_calls.load()) + " host callbacks, not 4";
    return "";
  }
};

struct Result {
  unsigned long points = 0;   // faults delivered
  unsigned long failures = 0; // of those, reported as a failing status
  std::set<std::string> calls; // distinct messages (their first words), for the log
};

// The message's start, up to the first node label or number: enough to tell
// the failing site apart in a log.
inline std::string site_of(const char *message) {
  std::string m = message;
  size_t cut = m.find_first_of("'#0123456789");
  return m.substr(0, cut == std::string::npos ? 80 : std::min<size_t>(cut, 80));
}

// Sweeps faults of `kinds` through `s` until a run completes untouched.
// `after_fault` runs after each faulted run (a device check); `baseline`
// gives the live allocation count every run must return to.
template <typename AfterFault, typename Baseline>
void sweep(Scenario &s, unsigned kinds, const std::string &name, AfterFault after_fault,
           Baseline baseline, Result *r) {
  s.prepare(0);
  SG_ASSERT_OK(s.run());  // warm: pools, copy threads, caches as the sweep leaves them
  long start = baseline();
  for (unsigned long nth = 1; nth < 20000; nth++) {
    s.prepare(static_cast<uint32_t>(nth));
    sg_fault_arm(kinds, nth);
    sg_status st = s.run();
    int fired = sg_fault_fired();
    const std::string site = fired ? sg_fault_site() : "";  // names the call that failed
    sg_fault_arm(0, 0);
    after_fault(name, nth);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(baseline(), start) << name << ": leak with fault " << nth << " at " << site;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << name << ": the run without a fault failed: " << sg_last_error();
      ASSERT_EQ(s.check_output(), "") << name;
      return;
    }
    r->points++;
    if (st != SG_OK) {
      r->failures++;
      ASSERT_STRNE(sg_last_error(), "") << name << ", fault " << nth << " at " << site << ": no message";
      r->calls.insert(site_of(sg_last_error()));
    } else {
      // Absorbed by design (a refused in-place update rebuilds, a refused
      // registration stages): then the bytes must be right.
      ASSERT_EQ(s.check_output(), "") << name << ", fault " << nth << " at " << site << " was absorbed";
    }
  }
  FAIL() << name << ": the sweep never reached a run without a fault";
}

}  // namespace sgsweep

#endif
