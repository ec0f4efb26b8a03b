// staging_bench: copies from and to ordinary (pageable) host memory, side by
// side in one run, against the hardware (the pinned rate) and the driver's
// own pageable path. Sections:
//
//  1. rows: 64 MiB and 1 GiB, both directions, the host side warm (the same
//     buffer copied again and again; a device->host destination read by the
//     bench's thread before each run, as an application reads its output)
//     and cold (flushed from the CPU caches before each run, untimed): the
//     driver's path (cudaMemcpyAsync on the
//     pageable buffer + sync), the pinned ceiling (cudaHostAlloc'ed buffer),
//     and staged copies (an executable with one copy node, SG_STAGING_STAGE,
//     launch + wait) in streams mode and graph mode, under the memop
//     protocol and the callback protocol (SG_STAGING_PROTOCOL) - all in
//     interleaved rounds. Targets: staged >= 0.85x pinned at 64 MiB and
//     >= 0.92x at 1 GiB (the protocol the library picks, both modes).
//     Then a reused buffer under SG_STAGING_REGISTER and SG_STAGING_AUTO.
//  2. sizes: 4 KiB to 1 GiB in powers of 4, both directions: driver,
//     pinned, staged (streams, graph), the driver's path through an
//     executable (SG_STAGING_NONE), and SG_STAGING_AUTO with fresh data
//     each launch (the node pointed at one of two buffers in turn, so it
//     never registers), with the route AUTO took. Device->host, each case
//     starts from a destination the bench's thread has read. Where staging
//     overtakes the driver's path (the crossover), and whether AUTO took the
//     faster path at every size.
//  3. launches: a reused 64 MiB and 1 GiB buffer under AUTO (registered in
//     the background, in pieces, from its first reuse), every launch timed:
//     no launch after the first may take more than 1.5x the steady state
//     (the staged launches before the switch count too). Prints the launch
//     from which the copies went through the registration, and whether
//     the driver refused it.
//  4. CPU: process CPU time per staged copy, memops against callbacks.
//  5. sweep: 64 MiB, 256 MiB, 1 GiB, both directions, under the memop
//     protocol: chunk sizes, copy threads, store kinds, and the callback
//     protocol's defaults, in interleaved rounds.
//  6. the host-copy ceiling (host_copy_ceiling.h): pageable <-> pinned
//     copies with 1-16 threads, memcpy and non-temporal stores, cold and
//     warm, alone and with the link busy; each row of section 1 against
//     the best of them with the link busy (target: staged >= 0.95x it), and
//     against min(that, pinned), the most a staged copy can reach.
//  7. by hand: the library's staged copy against a hand-written one
//     (hand_staging.h: spinning threads, lock-free parts, the caller as
//     conductor) at the library's defaults and three other geometries, both
//     against pinned (target: the library >= 0.95x by hand); then the DMA's
//     own rate while 0-12 host threads copy other memory, and the device
//     side alone (pinned chunks with and without each chunk's wait and
//     flag write: what a chunk costs the device).
// Medians of interleaved rounds (one run of each case per round), so that
// drift in the machine's state hits the cases alike. GB/s; ratios; targets
// printed beside the figures; JSON with all of it.
//
// Usage: staging_bench [out.json] [--reps N] [--quick] [--sections DIGITS]
// (--sections 13 measures sections 1 and 3 only; the others print empty)
// Exit status 1 if a copy came out wrong. About 4 minutes on the H200
// host (each section prints its time).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench_check.h"
#include "hand_staging.h"
#include "host_copy_ceiling.h"
#include "staging/policy.h" /* internal: the geometry the library picks */
#include "staging/tuning.h"
#include "streamgraph/streamgraph.h"

extern "C" int sg__staging_cuda_memops_supported(int device); // src/cuda/staged_memops.c

namespace {

constexpr size_t KiB = size_t(1) << 10, MiB = size_t(1) << 20;

double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

double cpu_s() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string size_name(size_t bytes) {
  char buf[32];
  if (bytes >= MiB) std::snprintf(buf, sizeof buf, "%zu MiB", bytes / MiB);
  else std::snprintf(buf, sizeof buf, "%zu KiB", bytes / KiB);
  return buf;
}

// Evicts [p, p + n) from the CPU caches (the host side of a cold run).
void flush_cache(const void *p, size_t n) {
#if defined(__x86_64__)
  const char *c = static_cast<const char *>(p);
  for (size_t i = 0; i < n; i += 64) _mm_clflush(c + i);
  _mm_mfence();
#else
  static std::vector<char> scratch(512 * MiB);
  std::memset(scratch.data(), static_cast<int>(n & 0xff), scratch.size());
  (void)p;
#endif
}

// Reads [p, p + n) on this thread, as an application reads a copy's
// output; the sum goes to a global so that the reads stay.
uint64_t read_sink;
void read_all(const uint8_t *p, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
    uint64_t w;
    std::memcpy(&w, p + i, sizeof w);
    sum += w;
  }
  read_sink += sum;
}

// One timed case: `run` is timed; `before` (may be empty) runs untimed
// before each timed run.
struct Case {
  std::function<void()> run, before;
};

// Median GB/s of each case, in `rounds` interleaved rounds after one
// untimed warm-up of each.
std::vector<double> interleaved_rates(size_t bytes, int rounds, const std::vector<Case> &cases) {
  for (const auto &c : cases) {
    if (c.before) c.before();
    c.run();
  }
  std::vector<std::vector<double>> gbps(cases.size());
  for (int r = 0; r < rounds; r++)
    for (size_t i = 0; i < cases.size(); i++) {
      if (cases[i].before) cases[i].before();
      double t0 = now_s();
      cases[i].run();
      gbps[i].push_back(bytes / (now_s() - t0) / 1e9);
    }
  std::vector<double> out;
  for (auto &g : gbps) out.push_back(median(g));
  return out;
}

// SG_STAGING_PROTOCOL for the executables made while it lives (nullptr:
// the library's choice).
struct ProtocolEnv {
  std::string saved;
  bool had;
  explicit ProtocolEnv(const char *protocol) {
    const char *e = std::getenv("SG_STAGING_PROTOCOL");
    had = e != nullptr;
    if (e) saved = e;
    if (protocol) setenv("SG_STAGING_PROTOCOL", protocol, 1);
    else unsetenv("SG_STAGING_PROTOCOL");
  }
  ~ProtocolEnv() {
    if (had) setenv("SG_STAGING_PROTOCOL", saved.c_str(), 1);
    else unsetenv("SG_STAGING_PROTOCOL");
  }
};

// One executable with one copy node; launch + wait is one run.
struct OneCopy {
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  sg_node node{};
  OneCopy(void *dst, const void *src, size_t bytes, sg_exec_mode mode, sg_staging_policy policy,
          sg_pinned_pool *pool, const char *protocol = nullptr, unsigned threads = 0,
          size_t chunk = 0, unsigned ring = 0) {
    ProtocolEnv env(protocol);
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
    o.staging.ring_depth = ring;
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

struct Buffers {
  size_t big;
  uint8_t *page_in, *page_out, *page_alt; // pageable (malloc), touched
  uint8_t *pinned;                        // cudaHostAlloc
  uint8_t *dev;
  cudaStream_t stream;
};

bool check(const uint8_t *a, const uint8_t *b, size_t n, const std::string &what) {
  if (std::memcmp(a, b, n) == 0) return true;
  std::fprintf(stderr, "WRONG DATA: %s\n", what.c_str());
  return false;
}

// The device holds page_in's first `bytes` (what device->host copies read);
// for host->device checks, what the device holds against page_in.
void load_device(Buffers &b, size_t bytes) {
  CK(cudaMemcpy(b.dev, b.page_in, bytes, cudaMemcpyHostToDevice));
  // A pageable copy may return before its DMA lands, and the library's
  // streams do not wait for the legacy stream.
  CK(cudaDeviceSynchronize());
}
bool device_matches(Buffers &b, size_t bytes, const std::string &what) {
  std::vector<uint8_t> back(bytes);
  CK(cudaMemcpy(back.data(), b.dev, bytes, cudaMemcpyDeviceToHost));
  return check(back.data(), b.page_in, bytes, what);
}

// Both directions' pointers for a copy of `bytes` from/to `host`.
struct Ends {
  void *dst;
  const void *src;
};
Ends ends(Buffers &b, bool h2d, uint8_t *host) {
  return h2d ? Ends{b.dev, host} : Ends{host, b.dev};
}

void driver_copy(Buffers &b, bool h2d, uint8_t *host, size_t bytes) {
  Ends e = ends(b, h2d, host);
  CK(cudaMemcpyAsync(e.dst, e.src, bytes, h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                     b.stream));
  CK(cudaStreamSynchronize(b.stream));
}

void pinned_copy(Buffers &b, bool h2d, size_t bytes) {
  Ends e = ends(b, h2d, b.pinned);
  CK(cudaMemcpyAsync(e.dst, e.src, bytes, h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                     b.stream));
  CK(cudaStreamSynchronize(b.stream));
}

// ---- 1. rows ------------------------------------------------------------------

struct Row {
  std::string name;
  size_t bytes;
  bool h2d, cold;
  double driver, pinned, memops_streams, memops_graph, cb_streams, cb_graph;
};

Row measure_row(Buffers &b, size_t bytes, bool h2d, bool cold, int rounds, sg_pinned_pool *pool,
                bool *ok) {
  Row r{};
  r.name = std::string(h2d ? "H2D " : "D2H ") + size_name(bytes) + (cold ? " cold" : " warm");
  r.bytes = bytes;
  r.h2d = h2d;
  r.cold = cold;
  uint8_t *host = h2d ? b.page_in : b.page_out;
  load_device(b, bytes);
  Ends e = ends(b, h2d, host);
  OneCopy ms(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool, "memops");
  OneCopy mg(e.dst, e.src, bytes, SG_MODE_GRAPH, SG_STAGING_STAGE, pool, "memops");
  OneCopy cs(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool, "callbacks");
  OneCopy cg(e.dst, e.src, bytes, SG_MODE_GRAPH, SG_STAGING_STAGE, pool, "callbacks");
  // Before each timed run the host side is cold (flushed) or, warm, as the
  // application left it: a source it wrote once, a destination it read
  // after the previous copy (section 2 says why that matters).
  std::function<void()> flush, pinned_flush;
  if (cold) {
    flush = [&] { flush_cache(host, bytes); };
    pinned_flush = [&] { flush_cache(b.pinned, bytes); };
  } else if (!h2d) {
    flush = [&] { read_all(host, bytes); };
    pinned_flush = [&] { read_all(b.pinned, bytes); };
  }
  std::vector<Case> cases = {
      {[&] { driver_copy(b, h2d, host, bytes); }, flush},
      {[&] { pinned_copy(b, h2d, bytes); }, pinned_flush},
      {[&] { ms.run(); }, flush},
      {[&] { mg.run(); }, flush},
      {[&] { cs.run(); }, flush},
      {[&] { cg.run(); }, flush}};
  std::vector<double> got = interleaved_rates(bytes, rounds, cases);
  r.driver = got[0];
  r.pinned = got[1];
  r.memops_streams = got[2];
  r.memops_graph = got[3];
  r.cb_streams = got[4];
  r.cb_graph = got[5];
  // Each staged case once more, checked.
  for (OneCopy *c : {&ms, &mg, &cs, &cg}) {
    if (h2d) CK(cudaMemset(b.dev, 0, bytes));
    else std::memset(b.page_out, 0xDD, bytes);
    CK(cudaDeviceSynchronize());  // the memset runs on the legacy stream
    c->run();
    *ok &= h2d ? device_matches(b, bytes, r.name) : check(b.page_out, b.page_in, bytes, r.name);
  }
  if (ms.stats().staged_copies == 0) std::fprintf(stderr, "%s: not staged?\n", r.name.c_str());
  return r;
}

struct Reuse {
  std::string name;
  double pinned, registered, autop;
};

// A reused buffer under REGISTER and AUTO (steady state, after it
// registered), against the pinned ceiling.
Reuse measure_reuse(Buffers &b, size_t bytes, bool h2d, int rounds, sg_pinned_pool *pool,
                    bool *ok) {
  Reuse r{std::string(h2d ? "H2D " : "D2H ") + size_name(bytes), 0, 0, 0};
  uint8_t *host = h2d ? b.page_in : b.page_out;
  load_device(b, bytes);
  Ends e = ends(b, h2d, host);
  OneCopy reg(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_REGISTER, pool);
  reg.run(); // pins the buffer in place, not timed
  std::vector<double> got = interleaved_rates(
      bytes, rounds, {{[&] { pinned_copy(b, h2d, bytes); }, {}}, {[&] { reg.run(); }, {}}});
  r.pinned = got[0];
  r.registered = got[1];
  if (reg.stats().registered_copies == 0)
    std::fprintf(stderr, "%s: not registered?\n", r.name.c_str());
  {
    OneCopy au(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_AUTO, pool);
    for (int i = 0; i < 8; i++) au.run(); // registered by then (in the background)
    r.autop = interleaved_rates(bytes, rounds, {{[&] { au.run(); }, {}}})[0];
  }
  if (h2d) *ok &= device_matches(b, bytes, r.name + " reused");
  else *ok &= check(b.page_out, b.page_in, bytes, r.name + " reused");
  return r;
}

// ---- 2. sizes -------------------------------------------------------------------

struct SizeRow {
  size_t bytes;
  bool h2d;
  double driver, pinned, staged, staged_graph, direct, autop;
  std::string auto_route;
};

SizeRow measure_size(Buffers &b, size_t bytes, bool h2d, sg_pinned_pool *pool, bool *ok) {
  SizeRow r{bytes, h2d, 0, 0, 0, 0, 0, 0, ""};
  uint8_t *host = h2d ? b.page_in : b.page_out;
  load_device(b, bytes);
  Ends e = ends(b, h2d, host);
  OneCopy st(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool);
  OneCopy gr(e.dst, e.src, bytes, SG_MODE_GRAPH, SG_STAGING_STAGE, pool);
  OneCopy dr(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_NONE, pool);
  OneCopy au(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_AUTO, pool);
  // AUTO sees a different buffer at every launch, as with fresh data each
  // time: it never registers; the two buffers hold the same bytes.
  uint8_t *alt = b.page_alt;
  if (h2d) std::memcpy(alt, host, bytes);
  bool on_alt = false;
  auto flip = [&] {
    on_alt = !on_alt;
    Ends x = ends(b, h2d, on_alt ? alt : host);
    au.retarget(x.dst, x.src, bytes);
  };
  // Device->host, every case starts with its destination as the
  // application left it after reading the previous output: read by this
  // thread. Without that, each case would find the lines the case before it
  // wrote, and whoever wrote them decides what the next write costs: lines
  // a dozen copy threads left modified in their cores' caches cost the
  // driver's one copying thread far more than lines it wrote itself, at
  // sizes that fit in the caches. Host->device cases only read their
  // sources, so no case changes what the next one finds.
  auto read_back = [&](const uint8_t *dst) {
    if (!h2d) read_all(dst, bytes);
  };
  // Reading leaves the lines where their writer left them, so the two
  // cases the driver carries out (its own call, the direct route) each
  // come right after a staged copy whose threads wrote the same
  // destination: neither finds it written by the launching thread itself.
  const int rounds = bytes <= 1 * MiB ? 41 : bytes <= 64 * MiB ? 11 : bytes <= 256 * MiB ? 5 : 3;
  sg_exec_stats before = au.stats();
  std::vector<double> got = interleaved_rates(
      bytes, rounds,
      {{[&] { pinned_copy(b, h2d, bytes); }, [&] { read_back(b.pinned); }},
       {[&] { st.run(); }, [&] { read_back(host); }},
       {[&] { driver_copy(b, h2d, host, bytes); }, [&] { read_back(host); }},
       {[&] { gr.run(); }, [&] { read_back(host); }},
       {[&] { dr.run(); }, [&] { read_back(host); }},
       {[&] { au.run(); }, [&] {
          flip();
          read_back(on_alt ? alt : host);
        }}});
  sg_exec_stats after = au.stats();
  r.pinned = got[0];
  r.staged = got[1];
  r.driver = got[2];
  r.staged_graph = got[3];
  r.direct = got[4];
  r.autop = got[5];
  const uint64_t staged = after.staged_copies - before.staged_copies;
  const uint64_t registered = after.registered_copies - before.registered_copies;
  r.auto_route = registered ? "registered" : staged ? "staged" : "driver";
  if (staged && registered) r.auto_route = "mixed";
  const std::string what = std::string(h2d ? "H2D " : "D2H ") + size_name(bytes);
  for (OneCopy *c : {&st, &gr, &au}) {
    if (c == &au) {
      Ends x = ends(b, h2d, host);
      au.retarget(x.dst, x.src, bytes);
    }
    if (h2d) CK(cudaMemset(b.dev, 0, bytes));
    else std::memset(b.page_out, 0xDD, bytes);
    CK(cudaDeviceSynchronize());  // the memset runs on the legacy stream
    c->run();
    *ok &= h2d ? device_matches(b, bytes, what) : check(b.page_out, b.page_in, bytes, what);
  }
  return r;
}

// ---- 3. launches ------------------------------------------------------------------

struct LaunchRow {
  std::string name;
  std::vector<double> ms;
  double steady, worst;
  int first_registered; // launch (1-based) whose copy went through the registration; 0: none
  uint64_t pin_failures; // registrations the driver refused meanwhile (the copies then stage)
};

LaunchRow measure_launches(Buffers &b, size_t bytes, bool h2d, sg_pinned_pool *pool, bool *ok) {
  LaunchRow r{std::string(h2d ? "H2D " : "D2H ") + size_name(bytes), {}, 0, 0, 0, 0};
  sg_registration_stats reg0{}, reg1{};
  sg_registration_get_stats(SG_BACKEND_CUDA, &reg0);
  uint8_t *host = h2d ? b.page_in : b.page_out;
  load_device(b, bytes);
  Ends e = ends(b, h2d, host);
  const int launches = 12;
  {
    OneCopy au(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_AUTO, pool);
    uint64_t registered = 0;
    for (int i = 0; i < launches; i++) {
      double t0 = now_s();
      au.run();
      r.ms.push_back((now_s() - t0) * 1e3);
      uint64_t now = au.stats().registered_copies;
      if (now > registered && !r.first_registered) r.first_registered = i + 1;
      registered = now;
    }
  }
  sg_registration_get_stats(SG_BACKEND_CUDA, &reg1);
  r.pin_failures = reg1.pin_failures - reg0.pin_failures;
  r.steady = median(std::vector<double>(r.ms.end() - 6, r.ms.end()));
  r.worst = *std::max_element(r.ms.begin() + 1, r.ms.end());
  if (h2d) *ok &= device_matches(b, bytes, r.name + " launches");
  else *ok &= check(b.page_out, b.page_in, bytes, r.name + " launches");
  return r;
}

// ---- 4. CPU -------------------------------------------------------------------------

struct CpuRow {
  std::string name;
  double driver_ms, memops_ms, callbacks_ms; // process CPU time per copy
};

CpuRow measure_cpu(Buffers &b, size_t bytes, bool h2d, sg_pinned_pool *pool) {
  CpuRow r{std::string(h2d ? "H2D " : "D2H ") + size_name(bytes), 0, 0, 0};
  uint8_t *host = h2d ? b.page_in : b.page_out;
  load_device(b, bytes);
  Ends e = ends(b, h2d, host);
  OneCopy ms(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool, "memops");
  OneCopy cb(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE, pool, "callbacks");
  auto per_copy = [&](const std::function<void()> &f) {
    f();
    const int n = 10;
    double c0 = cpu_s();
    for (int i = 0; i < n; i++) f();
    return (cpu_s() - c0) / n * 1e3;
  };
  r.driver_ms = per_copy([&] { driver_copy(b, h2d, host, bytes); });
  r.memops_ms = per_copy([&] { ms.run(); });
  r.callbacks_ms = per_copy([&] { cb.run(); });
  return r;
}

// ---- 5. sweep -----------------------------------------------------------------------

// What a staged copy of `bytes` gets with `chunk` and `threads` (0: the
// defaults of the protocol), as the library computes it (stage_run.c,
// tuning.c).
struct Choice {
  size_t chunk;
  unsigned chunks, ring, threads;
  bool nontemporal;
};

bool nontemporal_default(bool h2d, size_t bytes) {
  const char *env = std::getenv("SG_STAGING_NONTEMPORAL");
  if (!env) return sg__stage_nontemporal_default(h2d, bytes) != 0;
  return std::strcmp(env, "0") != 0;
}

Choice choose(bool h2d, size_t bytes, bool memops, size_t chunk, unsigned threads,
              bool nontemporal, unsigned ring = 0) {
  sg__stage_geometry g;
  sg__route_geometry(chunk, ring, threads, memops, h2d, bytes,
                     static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)), &g);
  Choice c;
  c.chunk = g.chunk;
  c.chunks = g.chunks;
  c.ring = g.ring;
  c.threads = g.parts;
  c.nontemporal = nontemporal;
  return c;
}

std::string choice_json(const Choice &c) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "{\"chunk_bytes\": %zu, \"chunks\": %u, \"ring\": %u, \"copy_threads\": %u, "
                "\"nontemporal\": %s}",
                c.chunk, c.chunks, c.ring, c.threads, c.nontemporal ? "true" : "false");
  return buf;
}

struct Sweep {
  size_t bytes;
  bool h2d, memops;
  size_t chunk_opt;
  unsigned threads_opt;
  bool streaming;
  unsigned ring_opt;
  Choice got;
  bool is_default;
  double gbps, pinned;
};

void run_sweep(Buffers &b, const std::vector<size_t> &sizes, sg_pinned_pool *nt_pool,
               sg_pinned_pool *plain_pool, std::vector<Sweep> *out, bool *ok) {
  for (size_t bytes : sizes) {
    for (bool h2d : {true, false}) {
      const bool nt = nontemporal_default(h2d, bytes);
      std::vector<Sweep> group;
      auto add = [&](bool memops, size_t chunk, unsigned threads, bool streaming,
                     unsigned ring = 0) {
        group.push_back({bytes, h2d, memops, chunk, threads, streaming, ring,
                         choose(h2d, bytes, memops, chunk, threads, streaming, ring),
                         memops && !chunk && !threads && !ring && streaming == nt, 0, 0});
      };
      add(true, 0, 0, nt);
      add(true, 0, 0, !nt);
      for (size_t chunk : {1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB})
        if (chunk < bytes) add(true, chunk, 0, nt);
      for (unsigned threads : {4u, 8u, 12u, 16u}) add(true, 0, threads, nt);
      add(false, 0, 0, nt); // the callback protocol's defaults
      // Rings small enough to stay in the last-level cache, written with
      // plain stores: the DMA may then read (or the drain find) a chunk in
      // the cache instead of memory, which would lift the three passes
      // through memory a staged copy otherwise makes.
      if (bytes <= 64 * MiB)
        for (size_t chunk : {1 * MiB, 2 * MiB})
          for (unsigned ring : {4u, 8u}) add(true, chunk, 0, false, ring);
      uint8_t *host = h2d ? b.page_in : b.page_out;
      load_device(b, bytes);
      Ends e = ends(b, h2d, host);
      std::vector<std::unique_ptr<OneCopy>> copies;
      for (const Sweep &w : group)
        copies.emplace_back(new OneCopy(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE,
                                        w.streaming ? nt_pool : plain_pool,
                                        w.memops ? "memops" : "callbacks", w.threads_opt,
                                        w.chunk_opt, w.ring_opt));
      std::vector<Case> cases = {{[&] { pinned_copy(b, h2d, bytes); }, {}}};
      for (auto &c : copies) cases.push_back({[&c] { c->run(); }, {}});
      std::vector<double> got = interleaved_rates(bytes, bytes >= 512 * MiB ? 3 : 7, cases);
      for (size_t i = 0; i < group.size(); i++) {
        group[i].gbps = got[i + 1];
        group[i].pinned = got[0];
        out->push_back(group[i]);
      }
      const std::string what = "sweep " + size_name(bytes);
      *ok &= h2d ? device_matches(b, bytes, what) : check(b.page_out, b.page_in, bytes, what);
      std::memset(b.page_out, 0xDD, bytes);
    }
  }
}

// ---- 7. by hand ---------------------------------------------------------------------

// The library's staged copy (streams mode) against the hand-written one
// (hand_staging.h) at the same chunk size, ring depth, thread count and
// store kind, and both against pinned, in interleaved rounds.
struct HandRow {
  size_t bytes;
  bool h2d;
  Choice got;
  bool is_default;
  double pinned, hand, library;
};

void measure_by_hand(Buffers &b, const std::vector<size_t> &sizes, sg_pinned_pool *nt_pool,
                     sg_pinned_pool *plain_pool, std::vector<HandRow> *out, bool *ok) {
  std::vector<std::unique_ptr<hand::Stager>> stagers(17);
  auto stager = [&](unsigned threads) -> hand::Stager & {
    // The caller copies too: threads - 1 more make `threads` copiers.
    if (!stagers[threads]) stagers[threads].reset(new hand::Stager(threads - 1, 64 * MiB));
    return *stagers[threads];
  };
  for (size_t bytes : sizes)
    for (bool h2d : {true, false}) {
      const bool nt = nontemporal_default(h2d, bytes);
      std::vector<HandRow> group;
      // The defaults; more threads at the same chunks and ring; larger
      // chunks in a ring of 4 with more threads, the geometry the memop
      // defaults are chosen over (the callback protocol's defaults: 64 MiB
      // in 6 or 4 chunks, 1 GiB in 16 MiB chunks with every CPU, at most
      // 16); 8 MiB chunks in a ring of 4.
      const size_t adaptive = sg__stage_auto_chunk(h2d, bytes);
      const unsigned adaptive_threads = sg__stage_default_threads(
          h2d, bytes, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)));
      group.push_back({bytes, h2d, choose(h2d, bytes, true, 0, 0, nt), true, 0, 0, 0});
      group.push_back({bytes, h2d, choose(h2d, bytes, true, 4 * MiB, 12, nt, 8), false, 0, 0, 0});
      group.push_back({bytes, h2d, choose(h2d, bytes, true, adaptive, adaptive_threads, nt, 4),
                       false, 0, 0, 0});
      group.push_back({bytes, h2d, choose(h2d, bytes, true, 8 * MiB, 12, nt, 4), false, 0, 0, 0});
      uint8_t *host = h2d ? b.page_in : b.page_out;
      load_device(b, bytes);
      Ends e = ends(b, h2d, host);
      auto read_back = [&](const uint8_t *dst) {
        if (!h2d) read_all(dst, bytes);
      };
      const int rounds = bytes >= 512 * MiB ? 3 : 7;
      for (HandRow &r : group) {
        const Choice &c = r.got;
        hand::Stager &st = stager(std::min(16u, std::max(1u, c.threads)));
        OneCopy lib(e.dst, e.src, bytes, SG_MODE_STREAMS, SG_STAGING_STAGE,
                    c.nontemporal ? nt_pool : plain_pool, "memops", c.threads, c.chunk, c.ring);
        auto by_hand = [&] {
          st.copy(h2d, host, b.dev, bytes, c.chunk, c.ring, c.nontemporal, b.stream);
        };
        std::vector<double> got = interleaved_rates(
            bytes, rounds,
            {{[&] { pinned_copy(b, h2d, bytes); }, [&] { read_back(b.pinned); }},
             {by_hand, [&] { read_back(host); }},
             {[&] { lib.run(); }, [&] { read_back(host); }}});
        r.pinned = got[0];
        r.hand = got[1];
        r.library = got[2];
        // The hand-written copy, checked.
        if (h2d) CK(cudaMemset(b.dev, 0, bytes));
        else std::memset(b.page_out, 0xDD, bytes);
        CK(cudaDeviceSynchronize());
        by_hand();
        const std::string what = "by hand " + size_name(bytes);
        *ok &= h2d ? device_matches(b, bytes, what) : check(b.page_out, b.page_in, bytes, what);
        out->push_back(r);
      }
    }
}

// The DMA's rate (64 MiB, pinned) while 0-12 host threads copy other memory.
struct LoadRow {
  bool h2d;
  unsigned threads;
  double gbps;
};

std::vector<LoadRow> measure_dma_under_load(Buffers &b) {
  std::vector<LoadRow> rows;
  const size_t bytes = 64 * MiB, load = 64 * MiB;
  for (bool h2d : {true, false})
    for (unsigned threads : {0u, 4u, 8u, 12u})
      rows.push_back({h2d, threads,
                      hand::dma_rate_under_load(h2d, b.pinned, b.dev, bytes, threads,
                                                b.page_alt, b.pinned + b.big / 2, load, 9,
                                                b.stream, now_s)});
  return rows;
}

// The device side of the program alone, 64 MiB from or to the ring's
// first slot: chunks as plain copies, and with each chunk's wait (already
// satisfied) and flag write; what a chunk costs the device.
struct DeviceSideRow {
  bool h2d;
  size_t chunk;
  double plain, memops; // GB/s
};

std::vector<DeviceSideRow> measure_device_side(Buffers &b) {
  std::vector<DeviceSideRow> rows;
  const size_t bytes = 64 * MiB;
  hand::Stager st(0, bytes);
  for (bool h2d : {true, false})
    for (size_t chunk : {64 * MiB, 8 * MiB, 4 * MiB, 2 * MiB, 1 * MiB}) {
      std::vector<double> got = interleaved_rates(
          bytes, 9,
          {{[&] { st.device_side(h2d, b.dev, bytes, chunk, false, b.stream); }, {}},
           {[&] { st.device_side(h2d, b.dev, bytes, chunk, true, b.stream); }, {}}});
      rows.push_back({h2d, chunk, got[0], got[1]});
    }
  return rows;
}

// ---- targets and output ---------------------------------------------------------------

struct Target {
  std::string what;
  double want, got;
  bool met;
};

std::string json_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

} // namespace

int main(int argc, char **argv) {
  const char *json_path = "staging_bench.json";
  int reps = 5;
  bool quick = false;
  std::string sections = "1234567";  // --sections 13: sections 1 and 3 only
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--sections") && i + 1 < argc) sections = argv[++i];
    else json_path = argv[i];
  }
  auto runs = [&](char section) { return sections.find(section) != std::string::npos; };
  if (sg_cuda_device_count() == 0) {
    std::printf("staging_bench: no CUDA device; nothing measured\n");
    return 0;
  }
  const double t_start = now_s();
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaSetDevice(0));
  int driver_version = 0;
  CK(cudaDriverGetVersion(&driver_version));
  const bool memops = sg__staging_cuda_memops_supported(0) != 0;
  // For the record (the protocol needs neither: 32-bit operations on host
  // memory only): 64-bit stream memory operations (the runtime's reserved
  // attribute 122 is the driver's CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS)
  // and CU_STREAM_WAIT_VALUE_FLUSH.
  int attr_64 = -1, attr_flush = -1, attr_unified = -1;
  if (cudaDeviceGetAttribute(&attr_64, static_cast<cudaDeviceAttr>(122), 0) != cudaSuccess)
    attr_64 = -1;
  if (cudaDeviceGetAttribute(&attr_flush, cudaDevAttrCanFlushRemoteWrites, 0) != cudaSuccess)
    attr_flush = -1;
  if (cudaDeviceGetAttribute(&attr_unified, cudaDevAttrUnifiedAddressing, 0) != cudaSuccess)
    attr_unified = -1;
  cudaGetLastError();

  const size_t big = quick ? 256 * MiB : 1024 * MiB;
  Buffers b;
  b.big = big;
  b.page_in = static_cast<uint8_t *>(std::malloc(big));
  b.page_out = static_cast<uint8_t *>(std::malloc(big));
  b.page_alt = static_cast<uint8_t *>(std::malloc(big));
  if (!b.page_in || !b.page_out || !b.page_alt) {
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
  std::memset(b.page_alt, 0, big);
  double t0 = now_s();
  CK(cudaHostAlloc(reinterpret_cast<void **>(&b.pinned), big, cudaHostAllocPortable));
  const double pin_s = now_s() - t0;
  std::memcpy(b.pinned, b.page_in, big);
  CK(cudaMalloc(reinterpret_cast<void **>(&b.dev), big));
  CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));

  // One pool, prewarmed, so that no timed launch pays for pinned allocation.
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_CUDA;
  po.prewarm_bytes = 128 * MiB;
  sg_pinned_pool *pool;
  SGK(sg_pinned_pool_create(&po, &pool));
  bool ok = true;

  // 1. rows
  double ts = now_s();
  std::vector<Row> rows;
  std::vector<Reuse> reuse;
  for (size_t bytes : {64 * MiB, big})
    for (bool h2d : {true, false}) {
      if (!runs('1')) break;
      const int rounds = bytes >= 512 * MiB ? std::max(3, reps - 2) : reps * 2;
      for (bool cold : {false, true})
        rows.push_back(measure_row(b, bytes, h2d, cold, rounds, pool, &ok));
      reuse.push_back(measure_reuse(b, bytes, h2d, rounds, pool, &ok));
    }
  const double rows_s = now_s() - ts;

  // 2. sizes
  ts = now_s();
  std::vector<SizeRow> sizes;
  for (bool h2d : {true, false})
    for (size_t bytes = 4 * KiB; bytes <= big && runs('2'); bytes *= 4)
      sizes.push_back(measure_size(b, bytes, h2d, pool, &ok));
  const double sizes_s = now_s() - ts;

  // 3. launches
  ts = now_s();
  std::vector<LaunchRow> launches;
  for (size_t bytes : {64 * MiB, big})
    for (bool h2d : {true, false})
      if (runs('3')) launches.push_back(measure_launches(b, bytes, h2d, pool, &ok));
  const double launches_s = now_s() - ts;

  // 4. CPU
  std::vector<CpuRow> cpu;
  for (bool h2d : {true, false})
    if (runs('4')) cpu.push_back(measure_cpu(b, 64 * MiB, h2d, pool));

  // 5. sweep: pools forcing each store kind, whatever the environment says
  ts = now_s();
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
  std::vector<Sweep> sweep;
  std::vector<size_t> sweep_sizes = {64 * MiB, big};
  if (big > 256 * MiB) sweep_sizes.insert(sweep_sizes.begin() + 1, 256 * MiB);
  if (runs('5')) run_sweep(b, sweep_sizes, nt_pool, plain_pool, &sweep, &ok);
  const double sweep_s = now_s() - ts;

  // 7. by hand: measured here, with the sweep's pools of each store kind
  ts = now_s();
  std::vector<HandRow> by_hand;
  std::vector<LoadRow> dma_load;
  std::vector<DeviceSideRow> device_side;
  if (runs('7')) {
    measure_by_hand(b, {64 * MiB, big}, nt_pool, plain_pool, &by_hand, &ok);
    dma_load = measure_dma_under_load(b);
    device_side = measure_device_side(b);
  }
  SGK(sg_pinned_pool_destroy(plain_pool));
  SGK(sg_pinned_pool_destroy(nt_pool));
  const double by_hand_s = now_s() - ts;

  // 6. host-copy ceiling: into a pinned buffer of its own, while the busy
  // link reads or writes b.pinned.
  ts = now_s();
  ceiling::Ceiling host_ceiling;
  if (runs('6')) {
    uint8_t *slot = nullptr;
    CK(cudaHostAlloc(reinterpret_cast<void **>(&slot), big, cudaHostAllocPortable));
    std::memset(slot, 0, big);
    host_ceiling = ceiling::measure(
        {64 * MiB, big}, b.page_out, slot, b.pinned, b.dev, 256 * MiB, 3,
        [](const void *p, size_t n) { flush_cache(p, n); }, now_s);
    CK(cudaFreeHost(slot));
  }
  const double ceiling_s = now_s() - ts;

  sg_pinned_pool_stats ps;
  SGK(sg_pinned_pool_get_stats(pool, &ps));

  // ---- targets ----
  std::vector<Target> targets;
  for (const Row &r : rows) {
    const double want = r.bytes >= 1024 * MiB ? 0.92 : 0.85;
    const double s = memops ? r.memops_streams : r.cb_streams, g = memops ? r.memops_graph : r.cb_graph;
    targets.push_back({r.name + " staged streams >= " + std::to_string(want).substr(0, 4) +
                           "x pinned",
                       want, s / r.pinned, s / r.pinned >= want});
    targets.push_back({r.name + " staged graph >= " + std::to_string(want).substr(0, 4) +
                           "x pinned",
                       want, g / r.pinned, g / r.pinned >= want});
  }
  // Against the host-copy ceiling with the link busy, as it is during a
  // staged copy.
  for (const Row &r : rows) {
    const double c = host_ceiling.best(r.bytes, r.h2d, r.cold, true);
    const double s = memops ? r.memops_streams : r.cb_streams, g = memops ? r.memops_graph : r.cb_graph;
    if (c <= 0) continue;
    targets.push_back({r.name + " staged streams >= 0.95x host-copy ceiling (link busy)", 0.95,
                       s / c, s / c >= 0.95});
    targets.push_back({r.name + " staged graph >= 0.95x host-copy ceiling (link busy)", 0.95,
                       g / c, g / c >= 0.95});
  }
  // Sizes: AUTO takes the faster of its two routes (within 10%: noise at
  // the smallest sizes), and is not slower than the driver's own call.
  int auto_right = 0, not_slower = 0;
  size_t crossover[2] = {0, 0};
  for (int d = 0; d < 2; d++) {
    const bool h2d = d == 0;
    size_t from = 0;
    for (const SizeRow &s : sizes) {
      if (s.h2d != h2d) continue;
      if (s.staged < s.direct) from = 0;
      else if (!from) from = s.bytes;
    }
    crossover[d] = from;
  }
  // The worst ratio over sizes: AUTO against the faster of the driver's
  // own call and staging, and the direct route through an executable
  // against the driver's own call.
  double auto_worst = 1e9, direct_worst = 1e9;
  for (const SizeRow &s : sizes) {
    const double best = std::max(s.staged, s.direct);
    auto_right += s.autop >= 0.9 * best;
    not_slower += s.autop >= 0.95 * s.driver;
    auto_worst = std::min(auto_worst, s.autop / std::max(s.driver, s.staged));
    direct_worst = std::min(direct_worst, s.direct / s.driver);
  }
  const int nsizes = static_cast<int>(sizes.size());
  if (nsizes) {
    targets.push_back({"AUTO within 10% of its faster route at every size", 1.0,
                       double(auto_right) / nsizes, auto_right == nsizes});
    targets.push_back({"AUTO >= 0.95x the driver's own call at every size", 1.0,
                       double(not_slower) / nsizes, not_slower == nsizes});
    targets.push_back({"AUTO >= 0.95x faster of (driver, staged), worst size", 0.95, auto_worst,
                       auto_worst >= 0.95});
    targets.push_back({"direct route >= 0.95x the driver's own call, worst size", 0.95,
                       direct_worst, direct_worst >= 0.95});
  }
  for (const HandRow &h : by_hand) {
    char what[120];
    std::snprintf(what, sizeof what, "%s %s %.1f MiB x%u, %u thr: staged >= 0.95x by hand",
                  h.h2d ? "H2D" : "D2H", size_name(h.bytes).c_str(), h.got.chunk / double(MiB),
                  h.got.ring, h.got.threads);
    targets.push_back({what, 0.95, h.library / h.hand, h.library / h.hand >= 0.95});
  }
  for (const LaunchRow &l : launches) {
    const double ratio = l.worst / l.steady;
    targets.push_back({l.name + " AUTO reused: no launch after the first > 1.5x steady", 1.5,
                       ratio, ratio <= 1.5});
  }

  // ---- print ----
  std::printf("staging_bench on %s (%d CPUs), driver %d; protocol: %s; pinned allocation of "
              "%zu MiB %.0f ms\n",
              prop.name, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), driver_version,
              memops ? "memops (stream memory operations)" : "callbacks (memops unsupported)",
              big / MiB, pin_s * 1e3);
  std::printf("device attributes: unified addressing %d, 64-bit stream memory operations %d, "
              "flush of remote writes %d\n", attr_unified, attr_64, attr_flush);
  std::printf("\n1. pageable copies, GB/s, medians of interleaved rounds (%.1f s); x pin = staged "
              "(the library's protocol, streams / graph) / pinned\n", rows_s);
  std::printf("%-17s %7s %7s %8s %8s %8s %8s %6s %6s\n", "case", "driver", "pinned", "memops",
              "mo-graph", "callback", "cb-graph", "x pin", "x pin");
  for (const Row &r : rows) {
    const double s = memops ? r.memops_streams : r.cb_streams, g = memops ? r.memops_graph : r.cb_graph;
    std::printf("%-17s %7.2f %7.2f %8.2f %8.2f %8.2f %8.2f %6.3f %6.3f  (target %.2f)\n",
                r.name.c_str(), r.driver, r.pinned, r.memops_streams, r.memops_graph, r.cb_streams,
                r.cb_graph, s / r.pinned, g / r.pinned, r.bytes >= 1024 * MiB ? 0.92 : 0.85);
  }
  std::printf("\nreused buffer (streams mode): GB/s\n%-12s %8s %9s %8s %6s\n", "case", "pinned",
              "register", "auto", "x pin");
  for (const Reuse &r : reuse)
    std::printf("%-12s %8.2f %9.2f %8.2f %6.3f\n", r.name.c_str(), r.pinned, r.registered,
                r.autop, r.registered / r.pinned);

  std::printf("\n2. sizes (%.1f s): GB/s; direct = SG_STAGING_NONE through an executable; auto = "
              "SG_STAGING_AUTO, fresh buffer each launch\n", sizes_s);
  std::printf("%-13s %8s %8s %8s %8s %8s %8s  %-10s %s\n", "case", "driver", "pinned", "staged",
              "st-graph", "direct", "auto", "auto took", "faster");
  for (const SizeRow &s : sizes)
    std::printf("%-13s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f  %-10s %s%s\n",
                ((s.h2d ? "H2D " : "D2H ") + size_name(s.bytes)).c_str(), s.driver, s.pinned,
                s.staged, s.staged_graph, s.direct, s.autop, s.auto_route.c_str(),
                s.staged >= s.direct ? "staged" : "driver",
                s.autop >= 0.9 * std::max(s.staged, s.direct) ? "" : "  <- AUTO slower");
  for (int d = 0; d < 2; d++)
    std::printf("crossover %s: staged (streams) at least as fast as the direct route (the "
                "driver's pageable path in an executable) from %s on; AUTO stages from %s\n",
                d == 0 ? "H2D" : "D2H", crossover[d] ? size_name(crossover[d]).c_str() : "(never)",
                size_name(sg__stage_auto_min_bytes(memops, d == 0)).c_str());

  std::printf("\n3. launches of a reused buffer under AUTO (%.1f s): ms per launch (launch + "
              "wait)\n", launches_s);
  for (const LaunchRow &l : launches) {
    std::printf("%-12s", l.name.c_str());
    for (double m : l.ms) std::printf(" %6.2f", m);
    std::printf("   steady %.2f, worst after the first %.2f (%.2fx; target <= 1.5x); registered "
                "from launch %d%s\n",
                l.steady, l.worst, l.worst / l.steady, l.first_registered,
                l.pin_failures ? " (the driver refused the registration)" : "");
  }

  std::printf("\n4. CPU time per 64 MiB copy (process, all threads), ms\n%-12s %8s %8s %9s\n",
              "case", "driver", "memops", "callbacks");
  for (const CpuRow &c : cpu)
    std::printf("%-12s %8.2f %8.2f %9.2f\n", c.name.c_str(), c.driver_ms, c.memops_ms,
                c.callbacks_ms);

  std::printf("\n5. sweep, staged, streams mode (GB/s, interleaved rounds with pinned; * = the "
              "defaults; %.1f s)\n", sweep_s);
  std::printf("  %-12s %-9s %6s %10s %5s %8s %-13s %8s %6s\n", "case", "protocol", "chunks",
              "chunk MiB", "ring", "threads", "stores", "GB/s", "x pin");
  for (const Sweep &w : sweep)
    std::printf("%s %-12s %-9s %6u %10.2f %5u %8u %-13s %8.2f %6.3f\n", w.is_default ? "*" : " ",
                ((w.h2d ? "H2D " : "D2H ") + size_name(w.bytes)).c_str(),
                w.memops ? "memops" : "callbacks", w.got.chunks, w.got.chunk / double(MiB),
                w.got.ring, w.got.threads, w.got.nontemporal ? "non-temporal" : "memcpy", w.gbps,
                w.gbps / w.pinned);

  std::printf("\n6. host-copy ceiling (%.1f s): the best pageable <-> pinned rate over 1-16 "
              "threads and both store kinds, GB/s (threads, stores), alone and with the link "
              "busy; staged (streams / graph) against the busy ceiling, and against the "
              "bound a staged copy can reach, min(busy ceiling, pinned)\n", ceiling_s);
  std::printf("%-17s %22s %22s %7s %7s %7s %7s\n", "case", "alone", "link busy", "x ceil",
              "x ceil", "x bound", "x bound");
  for (const Row &r : rows) {
    const ceiling::Point *alone = host_ceiling.best_point(r.bytes, r.h2d, r.cold, false);
    const ceiling::Point *busy = host_ceiling.best_point(r.bytes, r.h2d, r.cold, true);
    if (!alone || !busy) continue;
    const double s = memops ? r.memops_streams : r.cb_streams, g = memops ? r.memops_graph : r.cb_graph;
    // Every byte also crosses the link: a host copy faster than the pinned
    // rate (a warm source, in the caches) is not what holds a staged copy.
    const double bound = std::min(busy->gbps, r.pinned);
    std::printf("%-17s %8.2f (%2u, %-8s) %8.2f (%2u, %-8s) %7.3f %7.3f %7.3f %7.3f  (target "
                "0.95 x ceil)\n",
                r.name.c_str(), alone->gbps, alone->threads, alone->nontemporal ? "nt" : "memcpy",
                busy->gbps, busy->threads, busy->nontemporal ? "nt" : "memcpy", s / busy->gbps,
                g / busy->gbps, s / bound, g / bound);
  }

  std::printf("\n7. by hand (%.1f s): the library's staged copy (streams mode) against a "
              "hand-written one (bench/hand_staging.h) at the same geometry, GB/s; * = the "
              "library's defaults\n", by_hand_s);
  std::printf("  %-12s %6s %10s %5s %8s %-13s %8s %8s %8s %7s %7s %7s\n", "case", "chunks",
              "chunk MiB", "ring", "threads", "stores", "pinned", "by hand", "library", "hand/p",
              "lib/p", "lib/hand");
  for (const HandRow &h : by_hand)
    std::printf("%s %-12s %6u %10.2f %5u %8u %-13s %8.2f %8.2f %8.2f %7.3f %7.3f %7.3f\n",
                h.is_default ? "*" : " ", ((h.h2d ? "H2D " : "D2H ") + size_name(h.bytes)).c_str(),
                h.got.chunks, h.got.chunk / double(MiB), h.got.ring, h.got.threads,
                h.got.nontemporal ? "non-temporal" : "memcpy", h.pinned, h.hand, h.library,
                h.hand / h.pinned, h.library / h.pinned, h.library / h.hand);
  if (!dma_load.empty()) {
    std::printf("the DMA alone (64 MiB, pinned) while host threads copy other memory "
                "(pageable -> pinned, non-temporal), GB/s:\n");
    for (const LoadRow &l : dma_load)
      std::printf("  %s, %2u threads copying: %6.2f\n", l.h2d ? "H2D" : "D2H", l.threads, l.gbps);
  }
  if (!device_side.empty()) {
    std::printf("the device side alone, 64 MiB pinned in chunks, GB/s: plain copies, and with the "
                "program's wait and flag write per chunk (us per chunk over plain)\n");
    for (const DeviceSideRow &d : device_side) {
      const double chunks = double(64 * MiB) / d.chunk;
      const double extra_us = (64 * MiB / d.memops - 64 * MiB / d.plain) / 1e3 / chunks;
      std::printf("  %s %5.1f MiB chunks: %6.2f %6.2f (%+.2f us)\n", d.h2d ? "H2D" : "D2H",
                  d.chunk / double(MiB), d.plain, d.memops, extra_us);
    }
  }

  std::printf("\ntargets:\n");
  for (const Target &t : targets)
    std::printf("  %-62s %s (%.3f)\n", t.what.c_str(), t.met ? "met" : "MISSED", t.got);
  const double total_s = now_s() - t_start;
  std::printf("pool: peak in use %zu MiB, slabs %zu, waits %llu; data %s; %.0f s in all\n",
              ps.peak_in_use_bytes / MiB, ps.slab_count, (unsigned long long)ps.waits,
              ok ? "exact" : "WRONG", total_s);

  // ---- JSON ----
  FILE *f = std::fopen(json_path, "w");
  if (f) {
    std::fprintf(f, "{\n  \"bench\": \"staging_bench\",\n  \"device\": \"%s\",\n  \"cpus\": %d,\n"
                 "  \"driver\": %d,\n  \"protocol\": \"%s\",\n  \"attr_unified\": %d,\n"
                 "  \"attr_64bit_memops\": %d,\n  \"attr_flush_remote_writes\": %d,\n"
                 "  \"pinned_alloc_ms\": %.1f,\n"
                 "  \"data_exact\": %s,\n  \"seconds\": %.1f,\n  \"rows\": [\n",
                 prop.name, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), driver_version,
                 memops ? "memops" : "callbacks", attr_unified, attr_64, attr_flush, pin_s * 1e3,
                 ok ? "true" : "false", total_s);
    for (size_t i = 0; i < rows.size(); i++) {
      const Row &r = rows[i];
      std::fprintf(f,
                   "    {\"case\": \"%s\", \"bytes\": %zu, \"direction\": \"%s\", \"cold\": %s, "
                   "\"driver_gbps\": %.3f, \"pinned_gbps\": %.3f, \"memops_streams_gbps\": %.3f, "
                   "\"memops_graph_gbps\": %.3f, \"callbacks_streams_gbps\": %.3f, "
                   "\"callbacks_graph_gbps\": %.3f, \"target_over_pinned\": %.2f}%s\n",
                   r.name.c_str(), r.bytes, r.h2d ? "H2D" : "D2H", r.cold ? "true" : "false",
                   r.driver, r.pinned, r.memops_streams, r.memops_graph, r.cb_streams, r.cb_graph,
                   r.bytes >= 1024 * MiB ? 0.92 : 0.85, i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"reused\": [\n");
    for (size_t i = 0; i < reuse.size(); i++)
      std::fprintf(f,
                   "    {\"case\": \"%s\", \"pinned_gbps\": %.3f, \"registered_gbps\": %.3f, "
                   "\"auto_gbps\": %.3f}%s\n",
                   reuse[i].name.c_str(), reuse[i].pinned, reuse[i].registered, reuse[i].autop,
                   i + 1 < reuse.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"sizes\": [\n");
    for (size_t i = 0; i < sizes.size(); i++) {
      const SizeRow &s = sizes[i];
      std::fprintf(f,
                   "    {\"bytes\": %zu, \"direction\": \"%s\", \"driver_gbps\": %.4f, "
                   "\"pinned_gbps\": %.4f, \"staged_gbps\": %.4f, \"staged_graph_gbps\": %.4f, "
                   "\"direct_gbps\": %.4f, \"auto_gbps\": %.4f, \"auto_route\": \"%s\"}%s\n",
                   s.bytes, s.h2d ? "H2D" : "D2H", s.driver, s.pinned, s.staged, s.staged_graph,
                   s.direct, s.autop, s.auto_route.c_str(), i + 1 < sizes.size() ? "," : "");
    }
    std::fprintf(f,
                 "  ],\n  \"crossover_bytes\": {\"H2D\": %zu, \"D2H\": %zu},\n"
                 "  \"auto_min_bytes\": {\"H2D\": %zu, \"D2H\": %zu},\n  \"launches\": [\n",
                 crossover[0], crossover[1], sg__stage_auto_min_bytes(memops, 1),
                 sg__stage_auto_min_bytes(memops, 0));
    for (size_t i = 0; i < launches.size(); i++) {
      const LaunchRow &l = launches[i];
      std::fprintf(f, "    {\"case\": \"%s\", \"ms\": [", l.name.c_str());
      for (size_t j = 0; j < l.ms.size(); j++)
        std::fprintf(f, "%s%.3f", j ? ", " : "", l.ms[j]);
      std::fprintf(f, "], \"steady_ms\": %.3f, \"worst_after_first_ms\": %.3f, "
                   "\"first_registered_launch\": %d, \"pin_failures\": %llu}%s\n",
                   l.steady, l.worst, l.first_registered,
                   static_cast<unsigned long long>(l.pin_failures),
                   i + 1 < launches.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"cpu_ms_per_copy\": [\n");
    for (size_t i = 0; i < cpu.size(); i++)
      std::fprintf(f,
                   "    {\"case\": \"%s\", \"driver\": %.3f, \"memops\": %.3f, \"callbacks\": "
                   "%.3f}%s\n",
                   cpu[i].name.c_str(), cpu[i].driver_ms, cpu[i].memops_ms, cpu[i].callbacks_ms,
                   i + 1 < cpu.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"sweep\": [\n");
    for (size_t i = 0; i < sweep.size(); i++) {
      const Sweep &w = sweep[i];
      std::fprintf(f,
                   "    {\"bytes\": %zu, \"direction\": \"%s\", \"protocol\": \"%s\", "
                   "\"is_default\": %s, \"got\": %s, \"gbps\": %.3f, \"pinned_gbps\": %.3f}%s\n",
                   w.bytes, w.h2d ? "H2D" : "D2H", w.memops ? "memops" : "callbacks",
                   w.is_default ? "true" : "false", choice_json(w.got).c_str(), w.gbps, w.pinned,
                   i + 1 < sweep.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"host_copy_ceiling\": [\n");
    for (size_t i = 0; i < host_ceiling.points.size(); i++) {
      const ceiling::Point &p = host_ceiling.points[i];
      std::fprintf(f,
                   "    {\"bytes\": %zu, \"copy\": \"%s\", \"cold\": %s, \"link_busy\": %s, "
                   "\"threads\": %u, \"stores\": \"%s\", \"gbps\": %.3f}%s\n",
                   p.bytes, p.fill ? "fill" : "drain", p.cold ? "true" : "false",
                   p.busy ? "true" : "false", p.threads, p.nontemporal ? "non-temporal" : "memcpy",
                   p.gbps, i + 1 < host_ceiling.points.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"by_hand\": [\n");
    for (size_t i = 0; i < by_hand.size(); i++) {
      const HandRow &h = by_hand[i];
      std::fprintf(f,
                   "    {\"bytes\": %zu, \"direction\": \"%s\", \"is_default\": %s, \"got\": %s, "
                   "\"pinned_gbps\": %.3f, \"by_hand_gbps\": %.3f, \"library_gbps\": %.3f}%s\n",
                   h.bytes, h.h2d ? "H2D" : "D2H", h.is_default ? "true" : "false",
                   choice_json(h.got).c_str(), h.pinned, h.hand, h.library,
                   i + 1 < by_hand.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"dma_under_host_copies\": [\n");
    for (size_t i = 0; i < dma_load.size(); i++)
      std::fprintf(f, "    {\"direction\": \"%s\", \"copy_threads\": %u, \"gbps\": %.3f}%s\n",
                   dma_load[i].h2d ? "H2D" : "D2H", dma_load[i].threads, dma_load[i].gbps,
                   i + 1 < dma_load.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"device_side\": [\n");
    for (size_t i = 0; i < device_side.size(); i++)
      std::fprintf(f, "    {\"direction\": \"%s\", \"chunk_bytes\": %zu, \"plain_gbps\": %.3f, "
                   "\"memops_gbps\": %.3f}%s\n",
                   device_side[i].h2d ? "H2D" : "D2H", device_side[i].chunk, device_side[i].plain,
                   device_side[i].memops, i + 1 < device_side.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"targets\": [\n");
    for (size_t i = 0; i < targets.size(); i++)
      std::fprintf(f, "    {\"what\": \"%s\", \"want\": %.2f, \"got\": %.3f, \"met\": %s}%s\n",
                   json_escape(targets[i].what).c_str(), targets[i].want, targets[i].got,
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
  std::free(b.page_alt);
  return ok ? 0 : 1;
}
