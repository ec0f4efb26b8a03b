// staging_bench: copies from and to ordinary (pageable) host memory, side by
// side in one run, 64 MiB and 1 GiB, both directions:
//   driver      cudaMemcpyAsync on the pageable buffer (+ stream sync): the
//               driver's own pageable path, what users get without us
//   pinned      cudaMemcpyAsync on a cudaHostAlloc'ed buffer: the ceiling
//   staged      an executable with one copy node, SG_STAGING_STAGE, streams
//               mode and graph mode (launch + wait, wall clock)
//   registered  the same pageable buffer reused under SG_STAGING_REGISTER
//               (first launch, which pins it, not timed)
//   auto        SG_STAGING_AUTO (the default), reused: registered from the
//               third launch on; timed after the switch
// plus a sweep of copy threads and chunk sizes for the 1 GiB staged H2D, to
// check the defaults. Medians of several runs; GB/s and ratios; targets
// (h200-limits.md): staged H2D >= 3.5x driver, staged D2H >= 2x driver,
// registered >= 0.95x pinned.
//
// Usage: staging_bench [out.json] [--reps N] [--quick]
// Prints a table and writes JSON. Exit status 1 if a copy came out wrong.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <unistd.h>

#include "streamgraph/streamgraph.h"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

#define SGK(x)                                                                             \
  do {                                                                                     \
    sg_status s_ = (x);                                                                    \
    if (s_ != SG_OK) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #x,                 \
                   sg_status_name(s_), sg_last_error());                                   \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

constexpr size_t MiB = size_t(1) << 20;

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
  OneCopy(void *dst, const void *src, size_t bytes, sg_exec_mode mode, sg_staging_policy policy,
          sg_pinned_pool *pool, unsigned threads = 0, size_t chunk = 0) {
    SGK(sg_graph_create(&g));
    sg_copy_desc c = {dst, src, bytes, SG_COPY_AUTO, "copy"};
    SGK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
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
  cudaStream_t s = b.stream;
  uint8_t *host = h2d ? b.page_in : b.page_out;
  auto kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  void *dst = h2d ? static_cast<void *>(b.dev) : host;
  const void *src = h2d ? static_cast<const void *>(host) : b.dev;

  // Fresh data on the device for D2H, checked after each library case.
  CK(cudaMemcpy(b.dev, b.page_in, bytes, cudaMemcpyHostToDevice));
  r.driver = rate(bytes, reps, [&] {
    CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CK(cudaStreamSynchronize(s));
  });
  r.pinned = rate(bytes, reps, [&] {
    CK(cudaMemcpyAsync(h2d ? static_cast<void *>(b.dev) : b.pinned,
                       h2d ? static_cast<const void *>(b.pinned) : b.dev, bytes, kind, s));
    CK(cudaStreamSynchronize(s));
  });

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
  verify("driver/pinned setup");

  {
    OneCopy c(dst, src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool);
    r.staged_streams = rate(bytes, reps, [&] { c.run(); });
    if (c.stats().staged_copies == 0) std::fprintf(stderr, "%s: not staged?\n", r.name.c_str());
  }
  verify("staged, streams mode");
  {
    OneCopy c(dst, src, bytes, SG_MODE_GRAPH, SG_STAGING_STAGE, pool);
    r.staged_graph = rate(bytes, reps, [&] { c.run(); });
  }
  verify("staged, graph mode");
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

  // Sweep: threads and chunk size, 1 GiB staged H2D and D2H, streams mode.
  // A second pool whose copy threads use plain memcpy (no non-temporal
  // stores), to show what streaming stores buy.
  setenv("SG_STAGING_NONTEMPORAL", "0", 1);
  sg_pinned_pool *plain_pool;
  SGK(sg_pinned_pool_create(&po, &plain_pool));
  unsetenv("SG_STAGING_NONTEMPORAL");
  struct Sweep {
    bool h2d;
    unsigned threads;
    size_t chunk;
    bool streaming;
    double gbps;
  };
  std::vector<Sweep> sweep;
  for (bool h2d : {true, false})
    for (unsigned threads : {1u, 2u, 4u, 8u, 12u})
      for (size_t chunk : {2 * MiB, 4 * MiB, 16 * MiB})
        for (bool streaming : {true, false}) {
          // threads at 4 MiB; chunks at 8 threads; plain memcpy at 8 threads, 4 MiB
          if (threads != 8 && chunk != 4 * MiB) continue;
          if (!streaming && (threads != 8 || chunk != 4 * MiB)) continue;
          void *dst = h2d ? static_cast<void *>(b.dev) : b.page_out;
          const void *src = h2d ? static_cast<const void *>(b.page_in) : b.dev;
          OneCopy c(dst, src, big, SG_MODE_STREAMS, SG_STAGING_STAGE,
                    streaming ? pool : plain_pool, threads, chunk);
          sweep.push_back({h2d, threads, chunk, streaming, rate(big, 3, [&] { c.run(); })});
        }
  SGK(sg_pinned_pool_destroy(plain_pool));

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
  std::printf("\nsweep, %zu MiB staged, streams mode (GB/s):\n", big / MiB);
  for (const Sweep &s : sweep)
    std::printf("  %s threads %2u chunk %2zu MiB %-9s %6.2f\n", s.h2d ? "H2D" : "D2H", s.threads,
                s.chunk / MiB, s.streaming ? "streaming" : "memcpy", s.gbps);
  const Row &h = rows[2], &d = rows[3];
  bool pass_h2d = h.staged_streams >= 3.5 * h.driver;
  bool pass_d2h = d.staged_streams >= 2.0 * d.driver;
  bool pass_reg = h.registered >= 0.95 * h.pinned && d.registered >= 0.95 * d.pinned;
  std::printf("\ntargets (%zu MiB): H2D staged >= 3.5x driver: %s (%.2fx); D2H staged >= 2x "
              "driver: %s (%.2fx); registered >= 0.95x pinned: %s (%.3f / %.3f)\n",
              big / MiB, pass_h2d ? "met" : "MISSED", h.staged_streams / h.driver,
              pass_d2h ? "met" : "MISSED", d.staged_streams / d.driver, pass_reg ? "met" : "MISSED",
              h.registered / h.pinned, d.registered / d.pinned);
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
                   "\"staged_over_driver\": %.3f, \"registered_over_pinned\": %.3f}%s\n",
                   r.name.c_str(), r.bytes, r.h2d ? "H2D" : "D2H", r.driver, r.pinned,
                   r.staged_streams, r.staged_graph, r.registered, r.autop,
                   r.staged_streams / r.driver, r.registered / r.pinned,
                   i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"sweep\": [\n");
    for (size_t i = 0; i < sweep.size(); i++)
      std::fprintf(f,
                   "    {\"direction\": \"%s\", \"copy_threads\": %u, \"chunk_bytes\": %zu, "
                   "\"nontemporal\": %s, \"gbps\": %.3f}%s\n",
                   sweep[i].h2d ? "H2D" : "D2H", sweep[i].threads, sweep[i].chunk,
                   sweep[i].streaming ? "true" : "false", sweep[i].gbps,
                   i + 1 < sweep.size() ? "," : "");
    std::fprintf(f,
                 "  ],\n  \"targets\": {\"h2d_staged_over_driver\": {\"want\": 3.5, \"got\": %.3f, "
                 "\"met\": %s}, \"d2h_staged_over_driver\": {\"want\": 2.0, \"got\": %.3f, "
                 "\"met\": %s}, \"registered_over_pinned\": {\"want\": 0.95, \"got_h2d\": %.3f, "
                 "\"got_d2h\": %.3f, \"met\": %s}}\n}\n",
                 h.staged_streams / h.driver, pass_h2d ? "true" : "false",
                 d.staged_streams / d.driver, pass_d2h ? "true" : "false",
                 h.registered / h.pinned, d.registered / d.pinned, pass_reg ? "true" : "false");
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
