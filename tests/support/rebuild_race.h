// Launches racing a background rebuild (sg_exec_update_async), for every
// backend: versions of a random DAG of mixing kernels, each version's last
// node a host callback that logs which version ran and the bytes it made.
// Launches run in order, so the log's entry i is launch i + 1: each launch's
// bytes are checked bitwise against the version its number says it ran
// (the version whose first launch, as sg_exec_update_query reports it, is
// the latest at or before it).
#ifndef SG_REBUILD_RACE_H
#define SG_REBUILD_RACE_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace sgrebuild {

constexpr size_t kWords = 64;
constexpr size_t kBytes = kWords * 4;

struct Log {
  std::mutex m;
  std::vector<std::pair<int, std::vector<uint32_t>>> entries;
};

// One version: its graph, its device memory, the bytes it must make.
struct Version {
  int id = 0;
  Log *log = nullptr;
  sg_backend backend = SG_BACKEND_HOST;
  sg_graph *graph = nullptr;
  void *dev = nullptr;
  std::vector<uint32_t> in = std::vector<uint32_t>(kWords);
  std::vector<uint32_t> out = std::vector<uint32_t>(kWords);
  std::vector<uint32_t> expect = std::vector<uint32_t>(kWords);

  static int record(void *p) {
    auto *v = static_cast<Version *>(p);
    std::lock_guard<std::mutex> l(v->log->m);
    v->log->entries.emplace_back(v->id, v->out);
    return 0;
  }

  ~Version() {
    if (graph) sg_graph_destroy(graph);
    if (dev) sg_mem_free(dev);
  }

  // A random DAG of `nodes` kernels between an upload and a download: node
  // v mixes its first two predecessors' buffers (the input when it has
  // none), later predecessors only order it. A last kernel with the
  // version's own salt makes versions tell apart.
  sg_status build(uint32_t seed, uint32_t nodes, double p) {
    std::mt19937 rng(seed);
    for (auto &w : in) w = static_cast<uint32_t>(rng());
    sg_status st = sg_graph_create(&graph);
    if (!st) st = sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, (nodes + 2) * kBytes, &dev);
    if (st) return st;
    uint32_t *d = static_cast<uint32_t *>(dev);
    auto buf = [&](uint32_t i) { return d + (i + 1) * kWords; };  // d: the input
    std::vector<std::vector<uint32_t>> host(nodes + 1, std::vector<uint32_t>(kWords));
    sg_node up{};
    sg_copy_desc u = {d, in.data(), kBytes, SG_COPY_HOST_TO_DEVICE, "up"};
    if ((st = sg_graph_add_copy(graph, &u, nullptr, 0, &up))) return st;
    auto preds = sgtest::predecessors(nodes, sgtest::random_dag(rng, nodes, p));
    std::vector<sg_node> h(nodes + 1);
    for (uint32_t v = 0; v < nodes; v++) {
      const uint32_t salt = seed * 131u + v;
      const uint32_t *a = preds[v].empty() ? d : buf(preds[v][0]);
      const uint32_t *b = preds[v].size() < 2 ? a : buf(preds[v][1]);
      const std::vector<uint32_t> &ha = preds[v].empty() ? in : host[preds[v][0]];
      const std::vector<uint32_t> &hb = preds[v].size() < 2 ? ha : host[preds[v][1]];
      for (size_t i = 0; i < kWords; i++) host[v][i] = sg_kernels_mix(ha[i], hb[i], salt);
      sg_kernel_call k;
      sg_kernels_mix_u32(&k, buf(v), a, b, salt, kWords);
      std::vector<sg_node> deps;
      for (uint32_t q : preds[v]) deps.push_back(h[q]);
      if (deps.empty()) deps.push_back(up);
      if ((st = sg_graph_add_kernel(graph, &k.desc, deps.data(), static_cast<uint32_t>(deps.size()),
                                    &h[v])))
        return st;
    }
    // The last node's buffer mixed with the first's, with the version's salt.
    const uint32_t vsalt = 0x5EED0000u + static_cast<uint32_t>(id);
    for (size_t i = 0; i < kWords; i++)
      expect[i] = sg_kernels_mix(host[nodes - 1][i], host[0][i], vsalt);
    sg_kernel_call k;
    sg_kernels_mix_u32(&k, buf(nodes), buf(nodes - 1), buf(0), vsalt, kWords);
    sg_node sink_deps[2] = {h[nodes - 1], h[0]};
    sg_node sink{}, down{}, rec{};
    if ((st = sg_graph_add_kernel(graph, &k.desc, sink_deps, 2, &sink))) return st;
    sg_copy_desc dn = {out.data(), buf(nodes), kBytes, SG_COPY_DEVICE_TO_HOST, "down"};
    if ((st = sg_graph_add_copy(graph, &dn, &sink, 1, &down))) return st;
    sg_host_desc hd = {record, this, "record"};
    return sg_graph_add_host(graph, &hd, &down, 1, &rec);
  }
};

// Which version launch `launch` ran: firsts[u] is version u's first launch
// (firsts[0] = 1).
inline int version_of(const std::vector<uint64_t> &firsts, uint64_t launch) {
  int v = 0;
  for (size_t u = 0; u < firsts.size(); u++)
    if (firsts[u] <= launch) v = static_cast<int>(u);
  return v;
}

// Checks every logged launch against the version it ran; "" when right.
inline std::string check_log(Log &log, const std::vector<std::unique_ptr<Version>> &versions,
                             const std::vector<uint64_t> &firsts, uint64_t launches) {
  std::lock_guard<std::mutex> l(log.m);
  if (log.entries.size() != launches)
    return std::to_string(log.entries.size()) + " launches logged, " + std::to_string(launches) +
           " made";
  for (uint64_t i = 0; i < launches; i++) {
    const int want = version_of(firsts, i + 1);
    if (log.entries[i].first != want)
      return "launch " + std::to_string(i + 1) + " ran version " +
             std::to_string(log.entries[i].first) + ", its number says " + std::to_string(want);
    if (log.entries[i].second != versions[want]->expect)
      return "launch " + std::to_string(i + 1) + " (version " + std::to_string(want) +
             "): wrong bytes";
  }
  return "";
}

// The race: version 0 runs; each next version is built in the background
// while launches go on (`ahead` launches queued at most), until the query
// says it switched; then a few more launches. Sizes alternate small and
// large so that a build outlasts many launches.
inline void race(sg_backend backend, const sg_exec_options &options, uint32_t seed,
                 int version_count, uint32_t small, uint32_t large, uint64_t ahead) {
  std::printf("rebuild race: seed %u, %d versions, %u/%u nodes, %llu ahead\n", seed,
              version_count, small, large, static_cast<unsigned long long>(ahead));
  Log log;
  std::vector<std::unique_ptr<Version>> versions;
  for (int v = 0; v < version_count; v++) {
    versions.emplace_back(new Version);
    Version &x = *versions.back();
    x.id = v;
    x.log = &log;
    x.backend = backend;
    SG_ASSERT_OK(x.build(seed + static_cast<uint32_t>(v) * 7919u, v % 2 ? large : small, 0.08));
  }
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(versions[0]->graph, &options, &e));
  sgtest::Watchdog dog([] { std::fprintf(stderr, "rebuild race: hung\n"); }, 240);
  std::vector<uint64_t> firsts{1};
  uint64_t launched = 0;
  auto launch = [&]() -> sg_status {
    sg_status st = sg_exec_launch(e, nullptr);
    if (st) return st;
    launched++;
    if (launched > ahead) st = sg_exec_wait_launch(e, launched - ahead);
    return st;
  };
  for (int v = 1; v < version_count; v++) {
    SG_ASSERT_OK(sg_exec_update_async(e, versions[v]->graph));
    uint64_t raced = 0, first = 0;
    sg_status q;
    while ((q = sg_exec_update_query(e, &first)) == SG_NOT_READY) {
      SG_ASSERT_OK(launch());
      raced++;
      ASSERT_LT(raced, 2000000u) << "the build never ended";
    }
    SG_ASSERT_OK(q);
    std::printf("version %d: first launch %llu, %llu launches made while it was built\n", v,
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(raced));
    ASSERT_EQ(first, launched) << "the switch is the last launch made";
    firsts.push_back(first);
    for (int i = 0; i < 3; i++) SG_ASSERT_OK(launch());
  }
  SG_ASSERT_OK(sg_exec_wait(e));
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.rebuilds, static_cast<uint64_t>(version_count - 1));
  EXPECT_EQ(stats.launches, launched);
  SG_EXPECT_OK(sg_exec_destroy(e));
  dog.disarm();
  EXPECT_EQ(check_log(log, versions, firsts, launched), "") << "seed " << seed;
}

}  // namespace sgrebuild

#endif
