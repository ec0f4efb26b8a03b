// The randomized equivalence check (see eq_model.h).
#include "eq_model.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

#include "eq_kernel.h"

namespace sgeq {
namespace {

enum Kind : uint8_t { MEMSET, UPLOAD_IN, UPLOAD, KERNEL, D2D, DOWNLOAD, HOST, KIND_COUNT };

const char *kind_name(Kind k) {
  static const char *const names[KIND_COUNT] = {"memset", "upload-in", "upload", "kernel",
                                                "d2d",    "download",  "host"};
  return names[k];
}

constexpr uint8_t kPoison = 0xA5;

struct Scenario;

// A host node's user data. Each host node has two (salts A and B), and
// sg_exec_set_host switches between them.
struct HostRec {
  Scenario *s;
  uint32_t node;
  uint32_t salt;
};

struct Node {
  Kind kind = MEMSET;
  std::vector<uint32_t> preds;  // data inputs, in fold order; all of lower index
  uint32_t salt = 0;            // KERNEL: fold salt; MEMSET: the value
  uint32_t elem = 4;            // MEMSET: element size
  int slot[2] = {-1, -1};       // UPLOAD_IN: input slots; DOWNLOAD: output slots; HOST: [0]
  int cur = 0;                  // the slot (UPLOAD_IN, DOWNLOAD) or record (HOST) in use
  HostRec rec[2] = {};
  sg_node handle{};
  // KERNEL: argument values and the pointers to them (a descriptor's args)
  uint32_t *k_out = nullptr;
  const uint32_t *k_in[SGEQ_MAX_INPUTS] = {};
  uint32_t k_count = 0, k_salt = 0, k_n = 0;
  std::vector<uint32_t> ref;
};

struct Slot {
  uint8_t *p;
  bool pinned;
};

struct Scenario {
  Config cfg;
  Limits lim;
  Chooser &ch;
  uint32_t words = 1;
  size_t bytes = 4;
  uint32_t capacity = 0;  // nodes, counting those topology changes add
  std::vector<uint8_t> pageable;
  size_t pageable_used = 0;
  void *pinned = nullptr;
  size_t pinned_size = 0, pinned_used = 0;
  void *dev = nullptr;
  size_t dev_stride = 0;
  std::vector<Slot> slots;
  std::vector<Node> nodes;
  sg_graph *graph = nullptr;
  sg_exec *exec = nullptr;
  uint64_t fill_state = 1;
  uint32_t round = 0;
  std::vector<std::string> log;  // what this round changed
  Stats stats;
  std::string error;

  Scenario(const Config &c, Chooser &chooser, const Limits &l) : cfg(c), lim(l), ch(chooser) {}
  ~Scenario() {
    if (exec) sg_exec_destroy(exec);
    if (graph) sg_graph_destroy(graph);
    if (pinned) sg_mem_free(pinned);
    if (dev) sg_mem_free(dev);
  }

  bool failed() const { return !error.empty(); }

  void fail(const char *fmt, ...) {
    if (failed()) return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    std::ostringstream out;
    out << describe(cfg) << ", " << nodes.size() << " nodes of " << words << " words, round "
        << round << ": " << text;
    if (!log.empty()) {
      out << " (changes this round:";
      for (auto &l : log) out << " " << l << ";";
      out << ")";
    }
    error = out.str();
  }

  // A call that must succeed.
  bool ok(sg_status st, const char *what) {
    if (st == SG_OK) return true;
    fail("%s returned %s: %s", what, sg_status_name(st), sg_last_error());
    return false;
  }

  uint32_t *dev_of(uint32_t v) const {
    return reinterpret_cast<uint32_t *>(static_cast<uint8_t *>(dev) + v * dev_stride);
  }
  uint8_t *host_of(uint32_t v) const {
    const Node &n = nodes[v];
    return slots[n.kind == HOST ? n.slot[0] : n.slot[n.cur]].p;
  }
  bool on_device(Kind k) const { return k != DOWNLOAD && k != HOST; }

  // A host slot packed right after the previous one of its arena (a few
  // bytes apart, at an odd offset): neighbours share pages, which is what
  // a registration of one of them pins too.
  int new_slot() {
    bool use_pinned = pinned && ch.coin(3);
    size_t gap = 1 + ch.below(15);
    size_t &used = use_pinned ? pinned_used : pageable_used;
    uint8_t *base = use_pinned ? static_cast<uint8_t *>(pinned) : pageable.data();
    size_t size = use_pinned ? pinned_size : pageable.size();
    if (used + gap + bytes > size) return -1;
    slots.push_back({base + used + gap, use_pinned});
    used += gap + bytes;
    return static_cast<int>(slots.size() - 1);
  }

  bool setup() {
    // Log-uniform: small and large copies alike.
    uint32_t bits = 0;
    while (bits < 31 && (1u << (bits + 1)) <= lim.max_words) bits++;
    words = 1 + ch.below(std::min<uint32_t>(lim.max_words, 1u << ch.below(bits + 1)));
    if (lim.min_words && lim.min_words <= lim.max_words)
      words = lim.min_words + ch.below(lim.max_words - lim.min_words + 1);
    bytes = static_cast<size_t>(words) * 4;
    capacity = lim.max_nodes + lim.rounds * lim.max_added;
    nodes.reserve(capacity);  // host records point into nodes: never reallocate
    size_t slot_room = 2 * static_cast<size_t>(capacity) * (bytes + 16) + 4096;
    pageable.assign(slot_room, 0);
    pinned_size = slot_room;
    if (!ok(sg_mem_alloc(cfg.backend, SG_MEMORY_HOST_PINNED, 0, pinned_size, &pinned),
            "sg_mem_alloc (pinned)"))
      return false;
    dev_stride = (bytes + 255) / 256 * 256;
    if (!ok(sg_mem_alloc(cfg.backend, SG_MEMORY_DEVICE, 0, dev_stride * capacity, &dev),
            "sg_mem_alloc (device)"))
      return false;
    fill_state = 0x9E3779B97F4A7C15ull ^ ch.below(0x7fffffff);
    return ok(sg_graph_create(&graph), "sg_graph_create");
  }

  // Picks up to `most` distinct nodes of `pool`, biased towards recent ones.
  std::vector<uint32_t> pick(const std::vector<uint32_t> &pool, uint32_t least, uint32_t most) {
    std::vector<uint32_t> out;
    if (pool.size() < least) return out;
    uint32_t want = least + ch.below(std::min<uint32_t>(most, pool.size()) - least + 1);
    std::vector<uint32_t> left = pool;
    while (out.size() < want) {
      uint32_t at = ch.coin(2) ? ch.below(left.size())
                               : left.size() - 1 - ch.below(std::min<size_t>(left.size(), 4));
      out.push_back(left[at]);
      left.erase(left.begin() + at);
    }
    return out;
  }

  std::string name_of(uint32_t v) const {
    return std::string(kind_name(nodes[v].kind)) + "-" + std::to_string(v);
  }

  // ---- descriptors -------------------------------------------------------

  sg_memset_desc memset_desc(const Node &n, const std::string &name) {
    return {dev_of(&n - nodes.data()), n.salt, n.elem, bytes / n.elem, name.c_str()};
  }

  sg_copy_desc copy_desc(uint32_t v, const std::string &name) {
    const Node &n = nodes[v];
    sg_copy_desc c{};
    c.bytes = bytes;
    c.name = name.c_str();
    c.kind = SG_COPY_AUTO;
    switch (n.kind) {
      case UPLOAD_IN:
        c.dst = dev_of(v);
        c.src = slots[n.slot[n.cur]].p;
        if ((v + n.cur) % 2) c.kind = SG_COPY_HOST_TO_DEVICE;
        break;
      case UPLOAD:
        c.dst = dev_of(v);
        c.src = host_of(n.preds[0]);
        break;
      case D2D:
        c.dst = dev_of(v);
        c.src = dev_of(n.preds[0]);
        if (v % 2) c.kind = SG_COPY_DEVICE_TO_DEVICE;
        break;
      case DOWNLOAD:
        c.dst = slots[n.slot[n.cur]].p;
        c.src = dev_of(n.preds[0]);
        if ((v + n.cur) % 2) c.kind = SG_COPY_DEVICE_TO_HOST;
        break;
      default:
        break;
    }
    return c;
  }

  struct KernelDesc {
    sg_kernel_desc d;
    void *args[SGEQ_KERNEL_ARGS];
    size_t sizes[SGEQ_KERNEL_ARGS];
  };

  void kernel_desc(Node &n, const std::string &name, KernelDesc *k) {
    n.k_out = dev_of(&n - nodes.data());
    n.k_count = static_cast<uint32_t>(n.preds.size());
    for (uint32_t i = 0; i < SGEQ_MAX_INPUTS; i++)
      n.k_in[i] = i < n.k_count ? dev_of(n.preds[i]) : n.k_out; /* unused ones: any pointer */
    n.k_salt = n.salt;
    n.k_n = words;
    void *args[SGEQ_KERNEL_ARGS] = {&n.k_out,   &n.k_in[0], &n.k_in[1], &n.k_in[2],
                                    &n.k_in[3], &n.k_count, &n.k_salt,  &n.k_n};
    size_t sizes[SGEQ_KERNEL_ARGS] = {sizeof(void *), sizeof(void *), sizeof(void *),
                                      sizeof(void *), sizeof(void *), 4, 4, 4};
    std::memcpy(k->args, args, sizeof args);
    std::memcpy(k->sizes, sizes, sizeof sizes);
    k->d = sg_kernel_desc{};
    k->d.func = cfg.kernel_func;
    k->d.grid = {std::min<unsigned>((words + 255) / 256, 64), 1, 1};
    k->d.block = {256, 1, 1};
    k->d.args = k->args;
    k->d.arg_sizes = k->sizes;
    k->d.arg_count = SGEQ_KERNEL_ARGS;
    k->d.host_twin = sgeq_kernel_twin;
    k->d.name = name.c_str();
  }

  static int host_fn(void *p) {
    const HostRec *r = static_cast<const HostRec *>(p);
    const Scenario &s = *r->s;
    const Node &n = s.nodes[r->node];
    uint8_t *out = s.host_of(r->node);
    for (uint32_t i = 0; i < s.words; i++) {
      uint32_t in[SGEQ_MAX_INPUTS];
      for (size_t k = 0; k < n.preds.size(); k++)
        std::memcpy(&in[k], s.host_of(n.preds[k]) + 4 * i, 4);
      uint32_t w = sgeq_word(r->salt, i, in, static_cast<uint32_t>(n.preds.size()));
      std::memcpy(out + 4 * i, &w, 4);
    }
    return 0;
  }

  // ---- building ------------------------------------------------------------

  // Chooses node `v`'s kind and inputs among the nodes before it.
  bool make_node(uint32_t v) {
    std::vector<uint32_t> dev_side, host_side, host_nodes;
    for (uint32_t u = 0; u < v; u++) {
      if (on_device(nodes[u].kind)) dev_side.push_back(u);
      else host_side.push_back(u);
      if (nodes[u].kind == HOST) host_nodes.push_back(u);
    }
    Node n;
    n.kind = static_cast<Kind>(ch.below(KIND_COUNT));
    if ((n.kind == D2D || n.kind == DOWNLOAD) && dev_side.empty()) n.kind = UPLOAD_IN;
    if (n.kind == UPLOAD && host_nodes.empty()) n.kind = MEMSET;
    switch (n.kind) {
      case KERNEL: n.preds = pick(dev_side, 0, SGEQ_MAX_INPUTS); break;
      case HOST: n.preds = pick(host_side, 0, SGEQ_MAX_INPUTS); break;
      case D2D:
      case DOWNLOAD: n.preds = pick(dev_side, 1, 1); break;
      case UPLOAD: n.preds = pick(host_nodes, 1, 1); break;
      default: break;
    }
    n.salt = 0x1000u * (v + 1) + ch.below(0x1000);
    if (n.kind == MEMSET) {
      static const uint32_t sizes[3] = {1, 2, 4};
      n.elem = sizes[ch.below(3)];
      if (n.elem < 4) n.salt &= (1u << (8 * n.elem)) - 1;
    }
    if (n.kind == UPLOAD_IN || n.kind == DOWNLOAD) {
      n.slot[0] = new_slot();
      n.slot[1] = new_slot();
      if (n.slot[0] < 0 || n.slot[1] < 0) {
        fail("internal: out of slot room");
        return false;
      }
    }
    if (n.kind == HOST) {
      if ((n.slot[0] = new_slot()) < 0) {
        fail("internal: out of slot room");
        return false;
      }
      n.rec[0] = {this, v, n.salt};
      n.rec[1] = {this, v, n.salt ^ 0x5a5a5a5au};
    }
    nodes.push_back(n);
    return add_to_graph(v);
  }

  bool add_to_graph(uint32_t v) {
    Node &n = nodes[v];
    std::vector<sg_node> deps;
    for (uint32_t p : n.preds) deps.push_back(nodes[p].handle);
    const sg_node *d = deps.empty() ? nullptr : deps.data();
    std::string name = name_of(v);
    sg_status st = SG_OK;
    switch (n.kind) {
      case MEMSET: {
        sg_memset_desc m = memset_desc(n, name);
        st = sg_graph_add_memset(graph, &m, d, deps.size(), &n.handle);
        break;
      }
      case KERNEL: {
        KernelDesc k;
        kernel_desc(n, name, &k);
        st = sg_graph_add_kernel(graph, &k.d, d, deps.size(), &n.handle);
        break;
      }
      case HOST: {
        sg_host_desc h = {host_fn, &n.rec[n.cur], name.c_str()};
        st = sg_graph_add_host(graph, &h, d, deps.size(), &n.handle);
        break;
      }
      default: {
        sg_copy_desc c = copy_desc(v, name);
        st = sg_graph_add_copy(graph, &c, d, deps.size(), &n.handle);
        break;
      }
    }
    return ok(st, ("sg_graph_add (" + name + ")").c_str());
  }

  bool create_exec() {
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = cfg.backend;
    o.mode = cfg.mode;
    o.build = cfg.build;
    o.max_streams = cfg.max_streams;
    o.staging.policy = cfg.policy;
    o.staging.pool = cfg.pool;
    o.staging.auto_min_bytes = cfg.auto_min_bytes;
    o.staging.auto_register_after = cfg.auto_register_after;
    // The default, or a few chunks of odd sizes (a ring shorter than the copy).
    const size_t chunks[5] = {0, bytes, bytes / 2 + 1, bytes / 3 + 7, bytes / 8 + 1};
    o.staging.chunk_bytes = chunks[ch.below(5)];
    o.staging.ring_depth = ch.below(4);
    if (cfg.chunk_bytes) o.staging.chunk_bytes = cfg.chunk_bytes;
    if (cfg.ring_depth) o.staging.ring_depth = cfg.ring_depth;
    o.staging.copy_threads = cfg.copy_threads;
    return ok(sg_exec_create(graph, &o, &exec), "sg_exec_create");
  }

  // ---- updates -------------------------------------------------------------

  // Nodes of `kind`, or -1.
  int any_of(Kind kind) {
    std::vector<uint32_t> of;
    for (uint32_t v = 0; v < nodes.size(); v++)
      if (nodes[v].kind == kind) of.push_back(v);
    return of.empty() ? -1 : static_cast<int>(of[ch.below(of.size())]);
  }

  // Changes one node's parameters; through the executable (and mirrored
  // into the graph, which stays the truth for later sg_exec_update calls),
  // or through the graph only when `graph_only`.
  bool change_node(bool graph_only) {
    static const Kind kinds[5] = {KERNEL, MEMSET, UPLOAD_IN, DOWNLOAD, HOST};
    Kind kind = kinds[ch.below(5)];
    int v = any_of(kind);
    if (v < 0) return true;
    Node &n = nodes[v];
    std::string name = name_of(v) + (ch.coin(2) ? "'" : "");
    const char *how = graph_only ? "graph" : "exec";
    sg_status se = SG_OK, sg = SG_OK;
    switch (kind) {
      case KERNEL: {
        n.salt = n.salt * 7 + 1 + ch.below(1000);
        KernelDesc k;
        kernel_desc(n, name, &k);
        if (!graph_only) se = sg_exec_set_kernel(exec, n.handle, &k.d);
        sg = sg_graph_set_kernel(graph, n.handle, &k.d);
        log.push_back(std::string(how) + " set_kernel " + name_of(v));
        break;
      }
      case MEMSET: {
        static const uint32_t sizes[3] = {1, 2, 4};
        n.elem = sizes[ch.below(3)];
        n.salt = n.salt * 13 + ch.below(1u << 16);
        if (n.elem < 4) n.salt &= (1u << (8 * n.elem)) - 1;
        sg_memset_desc m = memset_desc(n, name);
        if (!graph_only) se = sg_exec_set_memset(exec, n.handle, &m);
        sg = sg_graph_set_memset(graph, n.handle, &m);
        log.push_back(std::string(how) + " set_memset " + name_of(v));
        break;
      }
      case UPLOAD_IN:
      case DOWNLOAD: {
        bool same = ch.coin(3);  // the same pointer again, or the other slot
        if (!same) n.cur ^= 1;
        sg_copy_desc c = copy_desc(v, name);
        if (!graph_only) se = sg_exec_set_copy(exec, n.handle, &c);
        sg = sg_graph_set_copy(graph, n.handle, &c);
        log.push_back(std::string(how) + " set_copy " + name_of(v) + (same ? " (same)" : " (other)") +
                      (slots[n.slot[n.cur]].pinned ? " pinned" : " pageable"));
        break;
      }
      case HOST: {
        n.cur ^= 1;
        sg_host_desc h = {host_fn, &n.rec[n.cur], name.c_str()};
        if (!graph_only) se = sg_exec_set_host(exec, n.handle, &h);
        sg = sg_graph_set_host(graph, n.handle, &h);
        log.push_back(std::string(how) + " set_host " + name_of(v));
        break;
      }
      default:
        break;
    }
    if (!ok(se, ("sg_exec_set (" + name_of(v) + ")").c_str())) return false;
    return ok(sg, ("sg_graph_set (" + name_of(v) + ")").c_str());
  }

  bool update() {
    uint32_t ops = 1 + ch.below(3);
    stats.updates += ops;
    for (uint32_t i = 0; i < ops && !failed(); i++) {
      uint32_t what = ch.below(6);
      if (what < 4) {
        change_node(false);
      } else if (what == 4) {
        if (change_node(true)) {
          log.push_back("sg_exec_update (same topology)");
          ok(sg_exec_update(exec, graph), "sg_exec_update (same topology)");
        }
      } else {
        uint32_t add = 1 + ch.below(lim.max_added);
        for (uint32_t k = 0; k < add && nodes.size() < capacity && !failed(); k++) {
          make_node(static_cast<uint32_t>(nodes.size()));
          if (!failed()) log.push_back("added " + name_of(nodes.size() - 1));
        }
        if (!failed()) {
          log.push_back("sg_exec_update (new topology)");
          ok(sg_exec_update(exec, graph), "sg_exec_update (new topology)");
        }
      }
    }
    return !failed();
  }

  // ---- a round -------------------------------------------------------------

  uint32_t next_word() {
    fill_state ^= fill_state << 13;
    fill_state ^= fill_state >> 7;
    fill_state ^= fill_state << 17;
    return static_cast<uint32_t>(fill_state >> 11);
  }

  void reference() {
    for (uint32_t v = 0; v < nodes.size(); v++) {
      Node &n = nodes[v];
      n.ref.assign(words, 0);
      for (uint32_t i = 0; i < words; i++) {
        uint32_t in[SGEQ_MAX_INPUTS];
        for (size_t k = 0; k < n.preds.size(); k++) in[k] = nodes[n.preds[k]].ref[i];
        uint32_t w = 0;
        switch (n.kind) {
          case MEMSET:
            w = n.elem == 4 ? n.salt : n.elem == 2 ? n.salt * 0x10001u : n.salt * 0x01010101u;
            break;
          case UPLOAD_IN: std::memcpy(&w, slots[n.slot[n.cur]].p + 4 * i, 4); break;
          case KERNEL: w = sgeq_word(n.salt, i, in, static_cast<uint32_t>(n.preds.size())); break;
          case HOST:
            w = sgeq_word(n.rec[n.cur].salt, i, in, static_cast<uint32_t>(n.preds.size()));
            break;
          default: w = in[0]; break;  // copies
        }
        n.ref[i] = w;
      }
    }
  }

  bool run_round() {
    // Fresh inputs; every output poisoned.
    for (auto &n : nodes) {
      if (n.kind == UPLOAD_IN)
        for (int s : n.slot)
          for (uint32_t i = 0; i < words; i++) {
            uint32_t w = next_word();
            std::memcpy(slots[s].p + 4 * i, &w, 4);
          }
      if (n.kind == DOWNLOAD)
        for (int s : n.slot) std::memset(slots[s].p, kPoison, bytes);
      if (n.kind == HOST) std::memset(slots[n.slot[0]].p, kPoison, bytes);
    }
    std::vector<uint8_t> poison(dev_stride * nodes.size(), kPoison);
    if (!ok(sg_mem_copy(dev, poison.data(), poison.size()), "sg_mem_copy (poison)")) return false;
    reference();

    uint32_t launches = 1 + ch.below(lim.max_launches);
    for (uint32_t i = 0; i < launches; i++)
      if (!ok(sg_exec_launch(exec, nullptr), "sg_exec_launch")) return false;
    stats.launches += launches;
    if (!ok(sg_exec_wait(exec), "sg_exec_wait")) return false;

    std::vector<uint8_t> back(dev_stride * nodes.size());
    if (!ok(sg_mem_copy(back.data(), dev, back.size()), "sg_mem_copy (read back)")) return false;
    for (uint32_t v = 0; v < nodes.size(); v++) {
      const Node &n = nodes[v];
      const uint8_t *got = on_device(n.kind) ? back.data() + v * dev_stride : host_of(v);
      for (uint32_t i = 0; i < words; i++) {
        uint32_t w;
        std::memcpy(&w, got + 4 * i, 4);
        if (w != n.ref[i]) {
          stats.words_checked += i;
          fail("node %s (%s, %zu inputs): word %u is 0x%08x, expected 0x%08x%s", name_of(v).c_str(),
               on_device(n.kind) ? "device" : slots[n.slot[n.cur]].pinned ? "pinned" : "pageable",
               n.preds.size(), i, w, n.ref[i], w == 0xA5A5A5A5u ? " (never written)" : "");
          return false;
        }
      }
      stats.words_checked += words;
      if (n.kind == DOWNLOAD) {  // the slot not in use must not have been written
        const uint8_t *old = slots[n.slot[n.cur ^ 1]].p;
        for (size_t b = 0; b < bytes; b++)
          if (old[b] != kPoison) {
            fail("node %s wrote its former destination (byte %zu)", name_of(v).c_str(), b);
            return false;
          }
      }
    }
    return true;
  }

  std::string run() {
    if (!setup()) return error;
    uint32_t count = lim.exact_nodes ? lim.max_nodes : 1 + ch.below(lim.max_nodes);
    for (uint32_t v = 0; v < count && !failed(); v++) make_node(v);
    if (failed() || !create_exec()) return error;
    for (round = 0; round < lim.rounds && !failed(); round++) {
      log.clear();
      if (round > 0 && !update()) break;
      run_round();
    }
    stats.scenarios = 1;
    stats.nodes = nodes.size();
    sg_exec_stats es;
    if (exec && sg_exec_get_stats(exec, &es) == SG_OK) stats.rebuilds = es.rebuilds;
    return error;
  }
};

}  // namespace

std::string describe(const Config &c) {
  static const char *const policies[] = {"AUTO", "STAGE", "REGISTER", "NONE"};
  std::ostringstream out;
  out << (c.backend == SG_BACKEND_CUDA ? "cuda" : "host") << "/"
      << (c.mode == SG_MODE_STREAMS ? "streams"
                                    : c.build == SG_BUILD_CAPTURE ? "graph-capture" : "graph-explicit")
      << "/" << policies[c.policy & 3] << "/max_streams=" << c.max_streams;
  if (c.chunk_bytes) out << "/chunk_bytes=" << c.chunk_bytes;
  if (c.ring_depth) out << "/ring_depth=" << c.ring_depth;
  if (c.copy_threads) out << "/copy_threads=" << c.copy_threads;
  return out.str();
}

std::string run_scenario(const Config &config, Chooser &choose, const Limits &limits,
                         Stats *stats) {
  Scenario s(config, choose, limits);
  std::string error = s.run();
  if (stats) {
    stats->scenarios += s.stats.scenarios;
    stats->nodes += s.stats.nodes;
    stats->launches += s.stats.launches;
    stats->updates += s.stats.updates;
    stats->rebuilds += s.stats.rebuilds;
    stats->words_checked += s.stats.words_checked;
  }
  return error;
}

}  // namespace sgeq
