// Random DAGs spread over devices, for the host backend (devices emulated)
// and the GPU tests. Node v owns kN words on its device. A source fills
// them; a node with predecessors folds their buffers into its own with mix
// kernels; every node ends with a work kernel. A predecessor on another
// device is first copied into a mirror buffer on v's device by a copy node
// (device to device), placed on the source's device, the destination's, or
// left on the executable's default, so a missing dependency or a wrong copy
// shows up as a wrong value. The reference is computed serially on the CPU.
#ifndef SG_MULTI_DEVICE_DAG_H
#define SG_MULTI_DEVICE_DAG_H

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace multidag {

constexpr size_t kN = 1031;
constexpr uint32_t kRounds = 16;

struct Dag {
  uint32_t n = 0;
  int devices = 2;
  int exec_device = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  std::vector<std::vector<uint32_t>> preds;
  std::vector<int> dev;          // node -> device
  std::vector<int> kernel_dev;   // node -> device its kernels are set to (or SG_DEVICE_DEFAULT)
  std::map<std::pair<uint32_t, uint32_t>, int> copy_dev;  // cross edge -> its copy node's device
  std::map<std::pair<uint32_t, uint32_t>, size_t> mirror; // cross edge -> slot on v's device
  std::vector<size_t> slots;     // device -> buffers (kN words each) it holds
  std::vector<size_t> slot_of;   // node -> its buffer's slot on its device
};

inline Dag make(uint32_t seed, uint32_t max_nodes, int devices) {
  std::mt19937 rng(seed);
  Dag d;
  d.devices = devices;
  d.n = 2 + rng() % (max_nodes - 1);
  d.exec_device = static_cast<int>(rng() % devices);
  double density = std::uniform_real_distribution<double>(0.05, 0.35)(rng);
  d.edges = sgtest::random_dag(rng, d.n, density);
  d.preds = sgtest::predecessors(d.n, d.edges);
  bool blocks = rng() % 2;  // stages of a pipeline, or scattered
  d.slots.assign(devices, 0);
  for (uint32_t v = 0; v < d.n; v++) {
    d.dev.push_back(blocks ? static_cast<int>(uint64_t{v} * devices / d.n)
                           : static_cast<int>(rng() % devices));
    d.kernel_dev.push_back(d.dev[v] == d.exec_device && rng() % 2 ? SG_DEVICE_DEFAULT : d.dev[v]);
    d.slot_of.push_back(d.slots[d.dev[v]]++);
  }
  for (auto &e : d.edges) {
    if (d.dev[e.first] == d.dev[e.second]) continue;
    int choice = rng() % 3;
    d.copy_dev[e] = choice == 0 ? d.dev[e.first] : choice == 1 ? d.dev[e.second] : SG_DEVICE_DEFAULT;
    d.mirror[e] = d.slots[d.dev[e.second]]++;
  }
  return d;
}

// Words each device's block needs.
inline size_t words_on(const Dag &d, int device) { return d.slots[device] * kN; }

// Adds the DAG to `g`; base[dev] is the block of device dev.
inline void build(sg_graph *g, const Dag &d, const std::vector<uint32_t *> &base, uint32_t seed) {
  auto buf = [&](uint32_t v) { return base[d.dev[v]] + d.slot_of[v] * kN; };
  std::vector<sg_node> last(d.n);
  for (uint32_t v = 0; v < d.n; v++) {
    uint32_t *out = buf(v);
    // Each predecessor's data as v's device sees it, and the node to wait for.
    std::vector<const uint32_t *> in;
    std::vector<sg_node> ready;
    for (uint32_t u : d.preds[v]) {
      std::pair<uint32_t, uint32_t> e{u, v};
      if (d.dev[u] == d.dev[v]) {
        in.push_back(buf(u));
        ready.push_back(last[u]);
        continue;
      }
      uint32_t *m = base[d.dev[v]] + d.mirror.at(e) * kN;
      sg_copy_desc c = {m, buf(u), kN * 4, SG_COPY_DEVICE_TO_DEVICE, "peer"};
      sg_node copy{};
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, &last[u], 1, &copy));
      SG_ASSERT_OK(sg_graph_set_device(g, copy, d.copy_dev.at(e)));
      in.push_back(m);
      ready.push_back(copy);
    }
    sg_node prev{};
    sg_kernel_call call;
    if (in.empty()) {
      sg_kernels_fill_u32(&call, out, seed * 1000 + v, kN);
      SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, nullptr, 0, &prev));
    } else {
      sg_kernels_mix_u32(&call, out, in.front(), in.back(), v, kN);
      sg_node deps[] = {ready.front(), ready.back()};
      SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, deps, in.size() > 1 ? 2 : 1, &prev));
      SG_ASSERT_OK(sg_graph_set_device(g, prev, d.kernel_dev[v]));
      for (size_t j = 1; j + 1 < in.size(); j++) {
        sg_kernels_mix_u32(&call, out, out, in[j], v + 7 * uint32_t(j), kN);
        sg_node more[] = {prev, ready[j]};
        SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, more, 2, &prev));
        SG_ASSERT_OK(sg_graph_set_device(g, prev, d.kernel_dev[v]));
      }
    }
    SG_ASSERT_OK(sg_graph_set_device(g, prev, d.kernel_dev[v]));
    sg_kernels_work_u32(&call, out, kN, kRounds);
    SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, &prev, 1, &last[v]));
    SG_ASSERT_OK(sg_graph_set_device(g, last[v], d.kernel_dev[v]));
  }
}

// node -> its kN words, computed serially.
inline std::vector<std::vector<uint32_t>> reference(const Dag &d, uint32_t seed) {
  std::vector<std::vector<uint32_t>> r(d.n, std::vector<uint32_t>(kN));
  for (uint32_t v = 0; v < d.n; v++) {
    const auto &p = d.preds[v];
    for (size_t i = 0; i < kN; i++) {
      uint32_t x;
      if (p.empty()) {
        x = seed * 1000 + v;
      } else {
        x = sg_kernels_mix(r[p.front()][i], r[p.back()][i], v);
        for (size_t j = 1; j + 1 < p.size(); j++)
          x = sg_kernels_mix(x, r[p[j]][i], v + 7 * uint32_t(j));
      }
      for (uint32_t k = 0; k < kRounds; k++) x = sg_kernels_mix(x, static_cast<uint32_t>(i), k);
      r[v][i] = x;
    }
  }
  return r;
}

}  // namespace multidag

#endif
