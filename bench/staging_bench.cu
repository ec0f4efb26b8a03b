// staging_bench: copies from and to ordinary (pageable) host memory, side by
// side in one run, 64 MiB and 1 GiB, both directions:
//   driver      cudaMemcpyAsync on the pageable buffer (+ stream sync): the
//               driver's own pageable path, what users get without us
//   pinned      cudaMemcpyAsync on a cudaHostAlloc'ed buffer: the ceiling
//   staged      an executable with one copy node, SG_STAGING_STAGE, streams
//               mode and graph mode (launch + wait, wall clock)
// (these four in interleaved rounds: one run of each per round)
//   registered  the same pageable buffer reused under SG_STAGING_REGISTER
//               (first launch, which pins it, not timed)
//   auto        SG_STAGING_AUTO (the default), reused: registered from the
//               third launch on; timed after the switch
// with the defaults each staged case got (chunk size and count, ring, copy
// threads, non-temporal stores: src/staging/tuning.h), and a sweep that
// checks them: for both sizes and both directions, staged in streams mode
// with the defaults, the defaults with non-temporal stores, 2 / 4 / 8 /
// 16 MiB chunks, 32 MiB chunks (1 GiB), 4 / 8 / 16 copy threads, each
// against the driver. Then 64 MiB with a cold host side (cold rows, see
// measure_cold). The sweep's configurations of one size and direction run in
// interleaved rounds (one run of each per round), so that drift in the
// machine's state hits them alike. Medians; GB/s and ratios; targets
// (h200-limits.md), at 64 MiB and at 1 GiB: staged H2D >= 3.5x driver,
// staged D2H >= 2x driver, registered >= 0.95x pinned.
//
// Usage: staging_bench [out.json] [--reps N] [--quick]
// Prints a table and writes JSON. Exit status 1 if a copy came out wrong.
// Runs in well under a minute on the H200 host (the sweep prints its own time).
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_check.h"
#include "staging/tuning.h" /* internal: the defaults the library picks */
#include "streamgraph/streamgraph.h"

namespace {

constexpr size_t MiB = size_t(1) << 20;

// Non-temporal stores: by direction and size (staging/tuning.h) unless
// SG_STAGING_NONTEMPORAL was set when the pool was made (workers.c).
bool nontemporal_default(bool h2d, size_t bytes) {
  const char *env = std::getenv("SG_STAGING_NONTEMPORAL");
  if (!env) return sg__stage_nontemporal_default(h2d, bytes) != 0;
  return std::strcmp(env, "0") != 0;
}

// What a staged copy of `bytes` gets with `chunk` and `threads` (0: the
// defaults), as the library computes it (stage_run.c, tuning.c).
struct Choice {
  size_t chunk;
  unsigned chunks, ring, threads;
  bool nontemporal;
};

Choice choose(bool h2d, size_t bytes, size_t chunk, unsigned threads, bool nontemporal) {
  Choice c;
  c.chunk = chunk ? chunk : sg__stage_auto_chunk(h2d, bytes);
  size_t least = (bytes + 1023) / 1024; // SG__STAGE_MAX_CHUNKS
  if (c.chunk < least) c.chunk = least;
  if (c.chunk > bytes) c.chunk = bytes;
  c.chunks = static_cast<unsigned>((bytes + c.chunk - 1) / c.chunk);
  c.ring = std::min(4u, c.chunks); // ring_depth default 4
  c.threads = threads ? threads
                      : sg__stage_default_threads(h2d, static_cast<unsigned>(
                                                           sysconf(_SC_NPROCESSORS_ONLN)));
  c.nontemporal = nontemporal;
  return c;
}

std::string describe(const Choice &c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%u x %.2f MiB, ring %u, %u threads, %s", c.chunks,
                c.chunk / double(MiB), c.ring, c.threads,
                c.nontemporal ? "non-temporal stores" : "memcpy");
  return buf;
}

std::string choice_json(const Choice &c) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "{\"chunk_bytes\": %zu, \"chunks\": %u, \"ring\": %u, \"copy_threads\": %u, "
                "\"nontemporal\": %s}",
                c.chunk, c.chunks, c.ring, c.threads, c.nontemporal ? "true" : "false");
  return buf;
}

double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median GB/s of `reps` timed runs of f (after one untimed warm-up).
template <class F>
double rate(size_t bytes, int reps, F f) {
  f();
  std::vector<double> gbps;
  for (int i = 0; i < reps; i++) {
    double t0 = now_s();
    f();
    gbps.push_back(bytes / (now_s() - t0) / 1e9);
  }
  return median(gbps);
}

// Median GB/s of each of `fns`, run in `reps` interleaved rounds (one run
// of each per round, after one untimed warm-up each), so that drift in the
// machine's state hits them alike.
std::vector<double> interleaved_rates(size_t bytes, int reps,
                                      const std::vector<std::function<void()>> &fns) {
  for (const auto &f : fns) f();
  std::vector<std::vector<double>> gbps(fns.size());
  for (int r = 0; r < reps; r++)
    for (size_t i = 0; i < fns.size(); i++) {
      double t0 = now_s();
      fns[i]();
      gbps[i].push_back(bytes / (now_s() - t0) / 1e9);
    }
  std::vector<double> out;
  for (auto &g : gbps) out.push_back(median(g));
  return out;
}

struct Buffers {
  size_t bytes;
  uint8_t *page_in, *page_out;  // pageable (malloc), touched
  uint8_t *pinned;              // cudaHostAlloc
  uint8_t *dev;
  cudaStream_t stream;
};

// One executable with one copy node; launch + wait is one run.
struct OneCopy {
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  sg_node node{};
  OneCopy(void *dst, const void *src, size_t bytes, sg_exec_mode mode, sg_staging_policy policy,
          sg_pinned_pool *pool, unsigned threads = 0, size_t chunk = 0) {
    SGK(sg_graph_create(&g));
    sg_copy_desc c = {dst, src, bytes, SG_COPY_AUTO, "copy"};
    SGK(sg_graph_add_copy(g, &c, nullptr, 0, &node));
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = SG_BACKEND_CUDA;
    o.mode = mode;
    o.staging.policy = policy;
    o.staging.pool = pool;
    o.staging.copy_threads = threads;
    o.staging.chunk_bytes = chunk;
    SGK(sg_exec_create(g, &o, &e));
  }
  ~OneCopy() {
    sg_exec_destroy(e);
    sg_graph_destroy(g);
  }
  void run() {
    SGK(sg_exec_launch(e, nullptr));
    SGK(sg_exec_wait(e));
  }
  void retarget(void *dst, const void *src, size_t bytes) {
    sg_copy_desc c = {dst, src, bytes, SG_COPY_AUTO, "copy"};
    SGK(sg_exec_set_copy(e, node, &c));
  }
  sg_exec_stats stats() {
    sg_exec_stats s;
    SGK(sg_exec_get_stats(e, &s));
    return s;
  }
};

struct Row {
  std::string name;
  size_t bytes;
  bool h2d;
  double driver, pinned, staged_streams, staged_graph, registered, autop;
  Choice defaults;
};

bool check(const uint8_t *a, const uint8_t *b, size_t n, const char *what) {
  if (std::memcmp(a, b, n) == 0) return true;
  std::fprintf(stderr, "WRONG DATA: %s\n", what);
  return false;
}

Row measure(Buffers &b, size_t bytes, bool h2d, int reps, sg_pinned_pool *pool, bool *ok) {
  Row r{};
  r.name = std::string(h2d ? "H2D " : "D2H ") + std::to_string(bytes / MiB) + " MiB";
  r.bytes = bytes;
  r.h2d = h2d;
  r.defaults = choose(h2d, bytes, 0, 0, nontemporal_default(h2d, bytes));
  cudaStream_t s = b.stream;
  uint8_t *host = h2d ? b.page_in : b.page_out;
  auto kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  void *dst = h2d ? static_cast<void *>(b.dev) : host;
  const void *src = h2d ? static_cast<const void *>(host) : b.dev;

  // Fresh data on the device for D2H, checked after each library case.
  CK(cudaMemcpy(b.dev, b.page_in, bytes, cudaMemcpyHostToDevice));
  auto verify = [&](const char *what) {
    if (h2d) {
      std::memset(b.page_out, 0, bytes);
      CK(cudaMemcpy(b.page_out, b.dev, bytes, cudaMemcpyDeviceToHost));
    }
    *ok &= check(b.page_out, b.page_in, bytes, what);
    CK(cudaMemset(b.dev, 0, bytes)); // the next case must write it again
    if (!h2d) CK(cudaMemcpy(b.dev, b.page_in, bytes, cudaMemcpyHostToDevice));
    std::memset(b.page_out, 0xDD, bytes);
  };

  // The driver, the pinned ceiling and the two staged cases in interleaved
  // rounds; then each staged case once more on its own, checked.
  {
    OneCopy streams(dst, src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool);
    OneCopy graph(dst, src, bytes, SG_MODE_GRAPH, SG_STAGING_STAGE, pool);
    std::vector<double> got = interleaved_rates(
        bytes, reps,
        {[&] {
           CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
           CK(cudaStreamSynchronize(s));
         },
         [&] {
           CK(cudaMemcpyAsync(h2d ? static_cast<void *>(b.dev) : b.pinned,
                              h2d ? static_cast<const void *>(b.pinned) : b.dev, bytes, kind, s));
           CK(cudaStreamSynchronize(s));
         },
         [&] { streams.run(); }, [&] { graph.run(); }});
    r.driver = got[0];
    r.pinned = got[1];
    r.staged_streams = got[2];
    r.staged_graph = got[3];
    if (streams.stats().staged_copies == 0)
      std::fprintf(stderr, "%s: not staged?\n", r.name.c_str());
    verify("driver/pinned/staged rounds");
    streams.run();
    verify("staged, streams mode");
    graph.run();
    verify("staged, graph mode");
  }
  {
    OneCopy c(dst, src, bytes, SG_MODE_STREAMS, SG_STAGING_REGISTER, pool);
    c.run(); // pins the buffer in place (cudaHostRegister), not timed
    r.registered = rate(bytes, reps, [&] { c.run(); });
    if (c.stats().registered_copies == 0)
      std::fprintf(stderr, "%s: not registered?\n", r.name.c_str());
  }
  verify("registered");
  {
    OneCopy c(dst, src, bytes, SG_MODE_STREAMS, SG_STAGING_AUTO, pool);
    for (int i = 0; i < 3; i++) c.run(); // AUTO registers on the third launch in a row
    r.autop = rate(bytes, reps, [&] { c.run(); });
  }
  verify("auto");
  return r;
}

// A cold source (host->device) or destination (device->host): each run
// takes the next of the 64 MiB windows of the 1 GiB pageable buffer, so
// that no run finds its host side in the CPU caches from the run before (a
// 64 MiB buffer copied again and again may sit in a large last-level
// cache, which speeds up the driver's single-threaded copy most). The
// driver, staged with the defaults, with non-temporal stores and with
// memcpy, in interleaved rounds; streams mode (a new pageable pointer each
// run would rebuild a graph-mode executable).
struct ColdRow {
  std::string name;
  bool h2d;
  double driver, staged, staged_nt, staged_memcpy;
};

ColdRow measure_cold(Buffers &b, size_t bytes, size_t big, bool h2d, int reps,
                     sg_pinned_pool *pool, sg_pinned_pool *nt_pool, sg_pinned_pool *plain_pool,
                     bool *ok) {
  ColdRow r{std::string(h2d ? "H2D " : "D2H ") + std::to_string(bytes / MiB) + " MiB cold", h2d,
            0, 0, 0, 0};
  const size_t windows = big / bytes;
  auto host_at = [&](size_t w) { return (h2d ? b.page_in : b.page_out) + (w % windows) * bytes; };
  auto dst_at = [&](size_t w) { return h2d ? static_cast<void *>(b.dev) : host_at(w); };
  auto src_at = [&](size_t w) {
    return h2d ? static_cast<const void *>(host_at(w)) : static_cast<const void *>(b.dev);
  };
  CK(cudaMemcpy(b.dev, b.page_in, bytes, cudaMemcpyHostToDevice)); // what D2H reads
  OneCopy dflt(dst_at(0), src_at(0), bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool);
  OneCopy nt(dst_at(0), src_at(0), bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, nt_pool);
  OneCopy plain(dst_at(0), src_at(0), bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, plain_pool);
  size_t next = 0; // window of the next run, whoever makes it
  auto kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  auto staged = [&](OneCopy &c) {
    return [&] {
      size_t w = next++;
      c.retarget(dst_at(w), src_at(w), bytes);
      c.run();
    };
  };
  std::vector<double> got = interleaved_rates(
      bytes, reps,
      {[&] {
         size_t w = next++;
         CK(cudaMemcpyAsync(dst_at(w), src_at(w), bytes, kind, b.stream));
         CK(cudaStreamSynchronize(b.stream));
       },
       staged(dflt), staged(nt), staged(plain)});
  r.driver = got[0];
  r.staged = got[1];
  r.staged_nt = got[2];
  r.staged_memcpy = got[3];
  if (h2d) { // the device holds the last run's window
    std::vector<uint8_t> back(bytes);
    CK(cudaMemcpy(back.data(), b.dev, bytes, cudaMemcpyDeviceToHost));
    *ok &= check(back.data(), host_at(next - 1), bytes, r.name.c_str());
  } else { // every window written holds what the device held
    for (size_t w = 0; w < std::min(next, windows); w++)
      *ok &= check(host_at(w), b.page_in, bytes, r.name.c_str());
    std::memset(b.page_out, 0xDD, big);
  }
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  const char *json_path = "staging_bench.json";
  int reps = 5;
  bool quick = false;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else json_path = argv[i];
  }
  if (sg_cuda_device_count() == 0) {
    std::printf("staging_bench: no CUDA device; nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaSetDevice(0));

  const size_t big = quick ? 256 * MiB : 1024 * MiB;
  Buffers b;
  b.bytes = big;
  b.page_in = static_cast<uint8_t *>(std::malloc(big));
  b.page_out = static_cast<uint8_t *>(std::malloc(big));
  if (!b.page_in || !b.page_out) {
    std::fprintf(stderr, "out of host memory\n");
    return 2;
  }
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < big; i += 8) { // fresh data, every page touched
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(b.page_in + i, &x, std::min<size_t>(8, big - i));
  }
  std::memset(b.page_out, 0xDD, big);
  double t0 = now_s();
  CK(cudaHostAlloc(reinterpret_cast<void **>(&b.pinned), big, cudaHostAllocPortable));
  double pin_s = now_s() - t0;
  std::memcpy(b.pinned, b.page_in, big);
  CK(cudaMalloc(reinterpret_cast<void **>(&b.dev), big));
  CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));

  // One pool, prewarmed, so that no timed launch pays for pinned allocation.
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_CUDA;
  po.prewarm_bytes = 64 * MiB;
  sg_pinned_pool *pool;
  t0 = now_s();
  SGK(sg_pinned_pool_create(&po, &pool));
  double prewarm_s = now_s() - t0;

  bool ok = true;
  std::vector<Row> rows;
  for (size_t bytes : {64 * MiB, big})
    for (bool h2d : {true, false})
      rows.push_back(measure(b, bytes, h2d, bytes >= 512 * MiB ? std::max(3, reps - 2) : reps * 2,
                             pool, &ok));

  // Sweep, streams mode, staged: per size and direction, every configuration
  // against the driver, run in interleaved rounds. A second pool whose copy
  // threads use plain memcpy (no non-temporal stores) shows what streaming
  // stores buy; each pool is made with the setting forced, whatever the
  // environment says.
  const char *env_nt = std::getenv("SG_STAGING_NONTEMPORAL");
  std::string saved_nt = env_nt ? env_nt : "";
  setenv("SG_STAGING_NONTEMPORAL", "1", 1);
  sg_pinned_pool *nt_pool;
  SGK(sg_pinned_pool_create(&po, &nt_pool));
  setenv("SG_STAGING_NONTEMPORAL", "0", 1);
  sg_pinned_pool *plain_pool;
  SGK(sg_pinned_pool_create(&po, &plain_pool));
  if (env_nt) setenv("SG_STAGING_NONTEMPORAL", saved_nt.c_str(), 1);
  else unsetenv("SG_STAGING_NONTEMPORAL");

  struct Sweep {
    size_t bytes;
    bool h2d;
    size_t chunk_opt;      // 0: adaptive
    unsigned threads_opt;  // 0: default
    bool streaming;
    Choice got;
    bool is_default;
    double gbps, driver;
  };
  std::vector<Sweep> sweep;
  const double sweep_t0 = now_s();
  // 256 MiB (no row of its own, so no driver figure): only the store kinds,
  // to place the size where host->device switches them (tuning.h).
  std::vector<size_t> sweep_sizes = {64 * MiB, big};
  if (big > 256 * MiB) sweep_sizes.insert(sweep_sizes.begin() + 1, 256 * MiB);
  for (size_t bytes : sweep_sizes) {
    for (bool h2d : {true, false}) {
      const Row *base = nullptr;
      for (const Row &r : rows)
        if (r.bytes == bytes && r.h2d == h2d) base = &r;
      std::vector<Sweep> group;
      auto add = [&](size_t chunk, unsigned threads, bool streaming) {
        Sweep w{bytes, h2d, chunk, threads, streaming, choose(h2d, bytes, chunk, threads, streaming),
                chunk == 0 && threads == 0 && streaming == nontemporal_default(h2d, bytes), 0,
                base ? base->driver : 0};
        group.push_back(w);
      };
      add(0, 0, true);
      add(0, 0, false);
      if (base) {
        for (size_t chunk : {2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB}) add(chunk, 0, false);
        if (bytes >= 512 * MiB) add(32 * MiB, 0, false);
        for (unsigned threads : {4u, 8u, 16u}) add(0, threads, false);
      }

      void *dst = h2d ? static_cast<void *>(b.dev) : b.page_out;
      const void *src = h2d ? static_cast<const void *>(b.page_in) : b.dev;
      std::vector<std::unique_ptr<OneCopy>> copies;
      for (const Sweep &w : group) {
        copies.emplace_back(new OneCopy(dst, src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE,
                                        w.streaming ? nt_pool : plain_pool, w.threads_opt,
                                        w.chunk_opt));
      }
      std::vector<std::function<void()>> runs;
      for (auto &c : copies) runs.push_back([&c] { c->run(); });
      std::vector<double> got = interleaved_rates(bytes, bytes >= 512 * MiB ? 5 : 11, runs);
      for (size_t i = 0; i < group.size(); i++) {
        group[i].gbps = got[i];
        sweep.push_back(group[i]);
      }
      copies.clear();
      if (h2d) {
        std::memset(b.page_out, 0, bytes);
        CK(cudaMemcpy(b.page_out, b.dev, bytes, cudaMemcpyDeviceToHost));
      }
      ok &= check(b.page_out, b.page_in, bytes, "sweep");
      std::memset(b.page_out, 0xDD, bytes);
    }
  }
  const double sweep_s = now_s() - sweep_t0;

  std::vector<ColdRow> cold;
  for (bool h2d : {true, false})
    cold.push_back(
        measure_cold(b, 64 * MiB, big, h2d, reps * 2, pool, nt_pool, plain_pool, &ok));
  SGK(sg_pinned_pool_destroy(plain_pool));
  SGK(sg_pinned_pool_destroy(nt_pool));

  sg_pinned_pool_stats ps;
  SGK(sg_pinned_pool_get_stats(pool, &ps));

  std::printf("staging_bench on %s (%d CPUs); pinned allocation of %zu MiB took %.0f ms, "
              "pool prewarm of 64 MiB %.0f ms\n",
              prop.name, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), big / MiB, pin_s * 1e3,
              prewarm_s * 1e3);
  std::printf("GB/s, medians. x drv = staged (streams) / driver; x pin = registered / pinned\n");
  std::printf("%-12s %8s %8s %8s %8s %8s %8s %8s %8s\n", "case", "driver", "pinned", "staged",
              "st-graph", "register", "auto", "x drv", "x pin");
  for (const Row &r : rows)
    std::printf("%-12s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.3f\n", r.name.c_str(),
                r.driver, r.pinned, r.staged_streams, r.staged_graph, r.registered, r.autop,
                r.staged_streams / r.driver, r.registered / r.pinned);
  std::printf("\ndefaults the staged cases got (chunk_bytes, copy_threads, ring_depth 0):\n");
  for (const Row &r : rows)
    std::printf("  %-12s %s\n", r.name.c_str(), describe(r.defaults).c_str());

  std::printf("\nsweep, staged, streams mode (GB/s, median of interleaved rounds; "
              "* = the defaults; %.1f s):\n", sweep_s);
  std::printf("  %-12s %6s %10s %5s %8s %-13s %8s %7s\n", "case", "chunks", "chunk MiB", "ring",
              "threads", "stores", "GB/s", "x drv");
  for (const Sweep &w : sweep) {
    std::string name = std::string(w.h2d ? "H2D " : "D2H ") + std::to_string(w.bytes / MiB) +
                       " MiB";
    std::printf("%s %-12s %6u %10.2f %5u %8u %-13s %8.2f %7.2f%s\n", w.is_default ? "*" : " ",
                name.c_str(), w.got.chunks, w.got.chunk / double(MiB), w.got.ring, w.got.threads,
                w.got.nontemporal ? "non-temporal" : "memcpy", w.gbps,
                w.driver > 0 ? w.gbps / w.driver : 0.0,
                w.chunk_opt ? "" : "  (adaptive chunk)");
  }

  std::printf("\ncold host side (each run a different 64 MiB window of a %zu MiB buffer; "
              "streams mode; GB/s, medians of interleaved rounds):\n", big / MiB);
  std::printf("%-17s %8s %8s %8s %9s %8s\n", "case", "driver", "staged", "st-NT", "st-memcpy",
              "x drv");
  for (const ColdRow &c : cold)
    std::printf("%-17s %8.2f %8.2f %8.2f %9.2f %8.2f\n", c.name.c_str(), c.driver, c.staged,
                c.staged_nt, c.staged_memcpy, c.staged / c.driver);

  // Targets at both sizes: rows are H2D 64, D2H 64, H2D big, D2H big.
  struct Target {
    std::string what;
    double want, got;
    bool met;
  };
  std::vector<Target> targets;
  for (const Row &r : rows) {
    char what[64];
    std::snprintf(what, sizeof what, "%s staged >= %.1fx driver", r.name.c_str(),
                  r.h2d ? 3.5 : 2.0);
    double ratio = r.staged_streams / r.driver, want = r.h2d ? 3.5 : 2.0;
    targets.push_back({what, want, ratio, ratio >= want});
    std::snprintf(what, sizeof what, "%s registered >= 0.95x pinned", r.name.c_str());
    ratio = r.registered / r.pinned;
    targets.push_back({what, 0.95, ratio, ratio >= 0.95});
  }
  for (const ColdRow &c : cold) {
    char what[64];
    double want = c.h2d ? 3.5 : 2.0, ratio = c.staged / c.driver;
    std::snprintf(what, sizeof what, "%s staged >= %.1fx driver", c.name.c_str(), want);
    targets.push_back({what, want, ratio, ratio >= want});
  }
  std::printf("\ntargets:\n");
  for (const Target &t : targets)
    std::printf("  %-40s %s (%.2fx)\n", t.what.c_str(), t.met ? "met" : "MISSED", t.got);
  std::printf("pool: peak in use %zu MiB, slabs %zu, waits %llu; data %s\n",
              ps.peak_in_use_bytes / MiB, ps.slab_count, (unsigned long long)ps.waits,
              ok ? "exact" : "WRONG");

  FILE *f = std::fopen(json_path, "w");
  if (f) {
    std::fprintf(f, "{\n  \"bench\": \"staging_bench\",\n  \"device\": \"%s\",\n  \"cpus\": %d,\n",
                 prop.name, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
    std::fprintf(f, "  \"pinned_alloc_ms\": %.1f,\n  \"data_exact\": %s,\n  \"rows\": [\n",
                 pin_s * 1e3, ok ? "true" : "false");
    for (size_t i = 0; i < rows.size(); i++) {
      const Row &r = rows[i];
      std::fprintf(f,
                   "    {\"case\": \"%s\", \"bytes\": %zu, \"direction\": \"%s\", "
                   "\"driver_gbps\": %.3f, \"pinned_gbps\": %.3f, \"staged_streams_gbps\": %.3f, "
                   "\"staged_graph_gbps\": %.3f, \"registered_gbps\": %.3f, \"auto_gbps\": %.3f, "
                   "\"staged_over_driver\": %.3f, \"registered_over_pinned\": %.3f, "
                   "\"defaults\": %s}%s\n",
                   r.name.c_str(), r.bytes, r.h2d ? "H2D" : "D2H", r.driver, r.pinned,
                   r.staged_streams, r.staged_graph, r.registered, r.autop,
                   r.staged_streams / r.driver, r.registered / r.pinned,
                   choice_json(r.defaults).c_str(), i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"cold\": [\n");
    for (size_t i = 0; i < cold.size(); i++)
      std::fprintf(f,
                   "    {\"case\": \"%s\", \"driver_gbps\": %.3f, \"staged_streams_gbps\": %.3f, "
                   "\"staged_nontemporal_gbps\": %.3f, \"staged_memcpy_gbps\": %.3f, "
                   "\"staged_over_driver\": %.3f}%s\n",
                   cold[i].name.c_str(), cold[i].driver, cold[i].staged, cold[i].staged_nt,
                   cold[i].staged_memcpy, cold[i].staged / cold[i].driver, i + 1 < cold.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"sweep_seconds\": %.1f,\n  \"sweep\": [\n", sweep_s);
    for (size_t i = 0; i < sweep.size(); i++) {
      const Sweep &w = sweep[i];
      std::fprintf(f,
                   "    {\"bytes\": %zu, \"direction\": \"%s\", \"chunk_adaptive\": %s, "
                   "\"threads_default\": %s, \"is_default\": %s, \"got\": %s, \"gbps\": %.3f, "
                   "\"over_driver\": %.3f}%s\n",
                   w.bytes, w.h2d ? "H2D" : "D2H", w.chunk_opt ? "false" : "true",
                   w.threads_opt ? "false" : "true", w.is_default ? "true" : "false",
                   choice_json(w.got).c_str(), w.gbps, w.driver > 0 ? w.gbps / w.driver : 0.0,
                   i + 1 < sweep.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"targets\": [\n");
    for (size_t i = 0; i < targets.size(); i++)
      std::fprintf(f, "    {\"what\": \"%s\", \"want\": %.2f, \"got\": %.3f, \"met\": %s}%s\n",
                   targets[i].what.c_str(), targets[i].want, targets[i].got,
                   targets[i].met ? "true" : "false", i + 1 < targets.size() ? "," : "");
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
  } else {
    std::fprintf(stderr, "cannot write %s\n", json_path);
  }

  SGK(sg_pinned_pool_destroy(pool));
  CK(cudaStreamDestroy(b.stream));
  CK(cudaFree(b.dev));
  CK(cudaFreeHost(b.pinned));
  std::free(b.page_in);
  std::free(b.page_out);
  return ok ? 0 : 1;
}
