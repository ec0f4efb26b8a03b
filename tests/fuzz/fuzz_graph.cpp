// Fuzz target: the graph builder, validation, planning and executable
// creation, driven by arbitrary bytes, against a shadow model that predicts
// which calls must succeed and which must fail.
//
// The bytes are a program of operations on up to two graphs at once: nodes
// of every kind with descriptors good and bad (NULL pointers, zero and huge
// sizes, overlapping and wrapping copies, copies past the end of blocks,
// wrong copy kinds, kernel shapes and arguments on both sides of every
// limit, names of any bytes and length), edges (duplicates, self-edges,
// cycles, foreign, stale and forged node handles), parameter edits, queries,
// validation, plans (checked for consistency: a topological issue order,
// stream order, counts, well-formed DOT) and host-backend executables
// (created, updated, destroyed). Every failing call must leave a message
// naming the function; stream-function release callbacks must run exactly
// once; nothing may leak.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "eq_model.h"
#include "fuzz_expectations.h"
#include "fuzz_pool.h"
#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"
#include "text_check.h"

namespace {

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      std::fprintf(stderr, "fuzz_graph: check failed: %s: ", #cond); \
      std::fprintf(stderr, __VA_ARGS__);                       \
      std::fprintf(stderr, "\n  last error: %s\n", sg_last_error()); \
      std::abort();                                            \
    }                                                          \
  } while (0)

constexpr size_t kBlock = 4096;

struct Memory {
  void *dev[2] = {};
  void *pinned = nullptr;
  uint8_t pageable[2][kBlock];
  sg_pinned_pool *pool = nullptr;
};

Memory *memory() {
  static Memory *m = [] {
    Memory *mm = new Memory;
    for (auto &d : mm->dev)
      if (sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, kBlock, &d) != SG_OK) std::abort();
    if (sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_HOST_PINNED, 0, kBlock, &mm->pinned) != SG_OK)
      std::abort();
    mm->pool = sgfuzz::pool();
    return mm;
  }();
  return m;
}

enum Expect { MUST_SUCCEED, MUST_FAIL, MAY_FAIL };

// Calls judged, and of them those the shadow said must fail (bad input):
// printed when the fuzzer exits, for the record of what was tried.
unsigned long long calls_judged, bad_inputs;

void print_counts() {
  std::fprintf(stderr, "fuzz_graph: %llu calls judged by the shadow model, %llu of them bad input\n",
               calls_judged, bad_inputs);
}

void expect(Expect e, sg_status st, const char *fn, const char *what, bool names_fn = true) {
  calls_judged++;
  bad_inputs += e == MUST_FAIL;
  if (e == MUST_SUCCEED) CHECK(st == SG_OK, "%s: %s must succeed, got %s", fn, what, sg_status_name(st));
  if (e == MUST_FAIL) CHECK(st != SG_OK, "%s: %s must fail", fn, what);
  if (st != SG_OK) {
    CHECK(st != SG_NOT_READY && st < SG_STATUS_COUNT_, "%s: %s: status %d", fn, what, (int)st);
    CHECK(*sg_last_error(), "%s: %s: no message", fn, what);
    if (names_fn)
      CHECK(std::strstr(sg_last_error(), fn) != nullptr,
            "%s: %s: the message does not name the call", fn, what);
  }
}

// ---- shadow --------------------------------------------------------------

enum Kind { K_COPY, K_KERNEL, K_MEMSET, K_HOST, K_STREAM_FN, K_EMPTY };

struct ShadowNode {
  Kind kind;
  bool has_name;
  std::string name;
  bool runs_on_host;  // kernels and stream functions need a host twin
};

struct Shadow {
  sg_graph *g = nullptr;
  std::vector<ShadowNode> nodes;
  std::vector<sg_node> handles;
  std::set<std::pair<uint32_t, uint32_t>> edges;

  bool has_cycle() const {
    size_t n = nodes.size();
    std::vector<uint32_t> indeg(n, 0);
    std::vector<std::vector<uint32_t>> succ(n);
    for (auto &e : edges) {
      succ[e.first].push_back(e.second);
      indeg[e.second]++;
    }
    std::vector<uint32_t> ready;
    for (uint32_t v = 0; v < n; v++)
      if (!indeg[v]) ready.push_back(v);
    size_t seen = 0;
    while (!ready.empty()) {
      uint32_t v = ready.back();
      ready.pop_back();
      seen++;
      for (uint32_t w : succ[v])
        if (--indeg[w] == 0) ready.push_back(w);
    }
    return seen != n;
  }
  bool all_run_on_host() const {
    for (auto &n : nodes)
      if (!n.runs_on_host) return false;
    return true;
  }
};

int releases = 0;  // stream-function release callbacks run
int release_owed = 0;
void release_fn(void *) { releases++; }
int host_fn(void *) { return 0; }
int stream_fn(void *, void *) { return 0; }
void twin_fn(const sg_kernel_launch *, void *const *) {}
int func_stand_in;

struct Fuzz {
  sgeq::BytesChooser in;
  Shadow graphs[2];
  std::vector<sg_node> stale;  // handles of destroyed graphs
  Memory *m = memory();
  int execs_made = 0;

  Fuzz(const uint8_t *data, size_t size) : in(data, size) {}

  uint32_t pick(uint32_t n) { return in.below(n); }

  // ---- pointers and sizes ------------------------------------------------

  struct Ptr {
    void *p;
    size_t room;        // bytes from p to the end of its known block (0: none known)
    bool known;         // in a block the library knows (sg_mem_alloc)
    bool device;        // host-backend device memory
  };

  Ptr pick_ptr() {
    uint32_t which = pick(7);
    size_t off = pick(kBlock + 64);
    auto in_block = [&](void *base, bool device) {
      uint8_t *p = static_cast<uint8_t *>(base) + off;
      if (off < kBlock) return Ptr{p, kBlock - off, true, device};
      return Ptr{p, 0, false, false};  // past the block: unknown, pageable
    };
    switch (which) {
      case 0: return in_block(m->dev[0], true);
      case 1: return in_block(m->dev[1], true);
      case 2: return in_block(m->pinned, false);
      case 3: return Ptr{m->pageable[0] + off % kBlock, 0, false, false};
      case 4: return Ptr{m->pageable[1] + off % kBlock, 0, false, false};
      case 5: return Ptr{nullptr, 0, false, false};
      default: return Ptr{reinterpret_cast<void *>(0x10000 + off), 0, false, false};
    }
  }

  size_t pick_bytes(const Ptr &a) {
    switch (pick(8)) {
      case 0: return 0;
      case 1: return 1 + pick(64);
      case 2: return 1 + pick(8192);
      // Sizes that wrap the address space: undefined pointer arithmetic in
      // the overlap test until that fix lands (fuzz_expectations.h).
      case 3: return SG_FUZZ_CHECK_WRAP ? SIZE_MAX - pick(16) : (SIZE_MAX >> 17) - pick(16);
      case 4: return static_cast<size_t>(1) << (40 + pick(24));
      case 5: return a.room ? a.room : 1 + pick(64);
      case 6: return a.room + 1;
      default: return static_cast<size_t>(pick(1u << 20)) * 4;
    }
  }

  std::string name_bytes;
  const char *pick_name(bool *too_long, bool *has, std::string *out) {
    uint32_t how = pick(6);
    *too_long = false;
    *has = how != 0;
    switch (how) {
      case 0: return nullptr;
      case 1: name_bytes = "n" + std::to_string(pick(1000)); break;
      case 2:
      case 3: {
        size_t len = pick(48);
        name_bytes.clear();
        for (size_t i = 0; i < len; i++) {
          char c = static_cast<char>(pick(256));
          name_bytes.push_back(c ? c : '\x80');
        }
        break;
      }
      case 4: name_bytes.assign(255, 'x'); break;
      default: name_bytes.assign(256 + pick(8), 'y'); *too_long = true; break;
    }
    *out = name_bytes;
    return name_bytes.c_str();
  }

  // ---- node handles --------------------------------------------------------

  // A node handle for graph `gi` and whether the library must accept it.
  sg_node pick_node(int gi, bool *valid) {
    Shadow &sh = graphs[gi], &other = graphs[gi ^ 1];
    *valid = false;
    switch (pick(6)) {
      case 0:
      case 1:
        if (!sh.handles.empty()) {
          *valid = true;
          return sh.handles[pick(sh.handles.size())];
        }
        return sg_node{0};
      case 2:
        if (!other.handles.empty()) return other.handles[pick(other.handles.size())];
        return sg_node{0};
      case 3:
        if (!sh.handles.empty()) {  // its serial, an index past the end
          uint64_t h = sh.handles[0].opaque & ~0xffffffffull;
          return sg_node{h | (sh.handles.size() + pick(3))};
        }
        return sg_node{0};
      case 4:
        if (!stale.empty()) return stale[pick(stale.size())];
        return sg_node{0};
      default: {
        uint64_t v = 0;
        for (int i = 0; i < 4; i++) v = v << 16 | pick(65536);
        return sg_node{v};
      }
    }
  }

  std::vector<sg_node> deps_buf;
  // Dependencies for a new node: *valid says whether all may be accepted.
  const sg_node *pick_deps(int gi, size_t *count, bool *valid) {
    *valid = true;
    deps_buf.clear();
    if (pick(16) == 0) {  // a count without an array
      *count = 1 + pick(4);
      *valid = false;
      return nullptr;
    }
    *count = pick(5);
    for (size_t i = 0; i < *count; i++) {
      bool ok;
      deps_buf.push_back(pick_node(gi, &ok));
      *valid = *valid && ok;
    }
    return deps_buf.empty() ? nullptr : deps_buf.data();
  }

  void added(int gi, sg_node node, Kind kind, bool has_name, const std::string &name, bool on_host,
             const sg_node *deps, size_t dep_count) {
    Shadow &sh = graphs[gi];
    uint32_t index = sh.nodes.size();
    CHECK(sg_node_index(node) == index, "node index %u, expected %u", sg_node_index(node), index);
    sh.nodes.push_back({kind, has_name, name, on_host});
    sh.handles.push_back(node);
    for (size_t i = 0; i < dep_count; i++) sh.edges.insert({sg_node_index(deps[i]), index});
  }

  // ---- descriptors ---------------------------------------------------------

  // What a copy descriptor deserves, by the documented rules.
  Expect judge_copy(const Ptr &dst, const Ptr &src, size_t bytes, int kind, bool too_long) {
    if (!dst.p || !src.p || bytes == 0 || kind < 0 || kind > SG_COPY_HOST_TO_HOST || too_long)
      return MUST_FAIL;
    uintptr_t d = reinterpret_cast<uintptr_t>(dst.p), s = reinterpret_cast<uintptr_t>(src.p);
    bool wraps = bytes > UINTPTR_MAX - d || bytes > UINTPTR_MAX - s;
    uintptr_t d_end = bytes > UINTPTR_MAX - d ? UINTPTR_MAX : d + bytes;
    uintptr_t s_end = bytes > UINTPTR_MAX - s ? UINTPTR_MAX : s + bytes;
    bool overlap = d < s_end && s < d_end;
    Expect unsure = MAY_FAIL;
    // No object is larger than PTRDIFF_MAX, and no range wraps the address space.
    if (SG_FUZZ_CHECK_WRAP && (bytes > PTRDIFF_MAX || wraps)) return MUST_FAIL;
    if (overlap && (!wraps || SG_FUZZ_CHECK_WRAP)) return MUST_FAIL;
    bool src_dev = src.device, dst_dev = dst.device;
    int k = kind;
    if (k == SG_COPY_AUTO)
      k = src_dev ? (dst_dev ? SG_COPY_DEVICE_TO_DEVICE : SG_COPY_DEVICE_TO_HOST)
                  : (dst_dev ? SG_COPY_HOST_TO_DEVICE : SG_COPY_HOST_TO_HOST);
    bool src_wants = k == SG_COPY_DEVICE_TO_HOST || k == SG_COPY_DEVICE_TO_DEVICE;
    bool dst_wants = k == SG_COPY_HOST_TO_DEVICE || k == SG_COPY_DEVICE_TO_DEVICE;
    if (src_wants != src_dev || dst_wants != dst_dev) return MUST_FAIL;
    bool past = (dst.known && bytes > dst.room) || (src.known && bytes > src.room);
    if (past) return SG_FUZZ_CHECK_BOUNDS ? MUST_FAIL : unsure;
    if (wraps) return SG_FUZZ_CHECK_WRAP ? MUST_SUCCEED : unsure;
    return MUST_SUCCEED;
  }

  struct KernelIn {
    sg_kernel_desc d{};
    std::vector<void *> args;
    std::vector<size_t> sizes;
    std::vector<uint8_t> storage = std::vector<uint8_t>(4200);
  };

  Expect make_kernel(KernelIn *k, bool too_long) {
    static const unsigned dims[8] = {0, 1, 7, 65535, 65536, 2147483647u, 2147483648u, 4294967295u};
    static const unsigned bdims[8] = {0, 1, 32, 64, 65, 1024, 1025, 3};
    sg_kernel_desc &d = k->d;
    d.grid = {dims[pick(8)], dims[pick(8)], dims[pick(8)]};
    if (pick(3)) d.grid = {1 + pick(100), 1, 1};
    d.block = {bdims[pick(8)], bdims[pick(8)], bdims[pick(8)]};
    if (pick(3)) d.block = {1 + pick(1024), 1, 1};
    static const size_t shared[5] = {0, 1024, 227 * 1024, 227 * 1024 + 1, SIZE_MAX};
    d.shared_bytes = shared[pick(5)];
    // Stored through memcpy: a C++ enum may not hold a value outside its range.
    int func_kind = pick(8) ? 0 : static_cast<int>(pick(3));
    std::memcpy(&d.func_kind, &func_kind, sizeof func_kind);
    d.func = pick(3) ? nullptr : &func_stand_in;
    d.host_twin = pick(5) ? twin_fn : nullptr;
    unsigned count = pick(8) ? pick(5) : 60 + pick(8);
    d.arg_count = count;
    k->args.assign(count, k->storage.data());
    k->sizes.assign(count, 8);
    bool null_arg = false, zero = false;
    size_t total = 0;
    bool too_big = false;
    for (unsigned i = 0; i < count; i++) {
      static const size_t sizes[6] = {1, 4, 8, 16, 0, 4097};
      k->sizes[i] = pick(4) ? sizes[pick(4)] : sizes[4 + pick(2)];
      if (pick(32) == 0) {
        k->args[i] = nullptr;
      }
    }
    // The documented checks, in the order the header gives them.
    for (unsigned i = 0; i < count; i++) {
      size_t sz = k->sizes[i];
      if (sz == 0) {
        zero = true;
        break;
      }
      if (sz > SG_MAX_KERNEL_ARG_BYTES || total + sz > SG_MAX_KERNEL_ARG_BYTES) {
        too_big = true;
        break;
      }
      if (!k->args[i]) {
        null_arg = true;
        break;
      }
      total += sz;
    }
    d.args = k->args.empty() ? nullptr : k->args.data();
    d.arg_sizes = k->sizes.empty() ? nullptr : k->sizes.data();
    bool null_arrays = false;
    if (count && pick(24) == 0) {
      if (pick(2)) d.args = nullptr; else d.arg_sizes = nullptr;
      null_arrays = true;
    }
    const sg_dim3 g = d.grid, b = d.block;
    unsigned long long threads = 1ull * b.x * b.y * b.z;
    bool bad_shape = !g.x || !g.y || !g.z || !b.x || !b.y || !b.z ||
                     threads > SG_MAX_BLOCK_THREADS || b.z > SG_MAX_BLOCK_Z ||
                     g.x > SG_MAX_GRID_X || g.y > SG_MAX_GRID_YZ || g.z > SG_MAX_GRID_YZ ||
                     d.shared_bytes > SG_MAX_SHARED_BYTES || func_kind > SG_KERNEL_CUDA_KERNEL ||
                     (!d.func && !d.host_twin);
    bool bad_args = count > SG_MAX_KERNEL_ARGS || null_arrays ||
                    (!null_arrays && (zero || too_big || null_arg));
    return bad_shape || bad_args || too_long ? MUST_FAIL : MUST_SUCCEED;
  }

  Expect make_memset(sg_memset_desc *d, Ptr *dst, bool too_long) {
    *dst = pick_ptr();
    static const unsigned sizes[6] = {1, 2, 4, 0, 3, 8};
    unsigned es = sizes[pick(4) ? pick(3) : 3 + pick(3)];
    uint32_t value = pick(4) ? pick(256) : static_cast<uint32_t>(pick(1u << 16)) << pick(17);
    size_t count;
    switch (pick(6)) {
      case 0: count = 0; break;
      case 1: count = 1 + pick(32); break;
      case 2: count = es && dst->room ? dst->room / es : 1; break;
      case 3: count = es && dst->room ? dst->room / es + 1 : 2; break;
      case 4: count = es ? SIZE_MAX / es + pick(2) : SIZE_MAX; break;
      default: count = SIZE_MAX - pick(4); break;
    }
    *d = sg_memset_desc{dst->p, value, es, count, nullptr};
    if (!dst->p || count == 0 || (es != 1 && es != 2 && es != 4) || too_long) return MUST_FAIL;
    if (es < 4 && (value >> (8 * es))) return MUST_FAIL;
    if (reinterpret_cast<uintptr_t>(dst->p) % es) return MUST_FAIL;
    if (count > SIZE_MAX / es) return MUST_FAIL;
    size_t bytes = count * es;
    if (SG_FUZZ_CHECK_WRAP &&
        (bytes > PTRDIFF_MAX || bytes > UINTPTR_MAX - reinterpret_cast<uintptr_t>(dst->p)))
      return MUST_FAIL;
    if (dst->known && bytes > dst->room) return SG_FUZZ_CHECK_BOUNDS ? MUST_FAIL : MAY_FAIL;
    return MUST_SUCCEED;
  }

  // ---- operations ------------------------------------------------------------

  void add_node(int gi) {
    Shadow &sh = graphs[gi];
    if (sh.nodes.size() >= 48) return;
    size_t dep_count;
    bool deps_ok;
    const sg_node *deps = pick_deps(gi, &dep_count, &deps_ok);
    bool too_long, has_name;
    std::string name;
    const char *nm = pick_name(&too_long, &has_name, &name);
    sg_node node{};
    sg_status st;
    Expect e;
    Kind kind = static_cast<Kind>(pick(6));
    bool on_host = true;
    const char *fn = "";
    switch (kind) {
      case K_COPY: {
        Ptr dst = pick_ptr(), src = pick_ptr();
        size_t bytes = pick_bytes(pick(2) ? dst : src);
        int ck = pick(8) ? static_cast<int>(pick(5)) : pick(2) ? 5 : -1;
        sg_copy_desc c = {dst.p, src.p, bytes, SG_COPY_AUTO, nm};
        std::memcpy(&c.kind, &ck, sizeof ck);
        e = judge_copy(dst, src, bytes, ck, too_long);
        bool null_desc = pick(64) == 0;
        if (null_desc) e = MUST_FAIL;
        fn = "sg_graph_add_copy";
        st = sg_graph_add_copy(sh.g, null_desc ? nullptr : &c, deps, dep_count, &node);
        break;
      }
      case K_KERNEL: {
        KernelIn k;
        e = make_kernel(&k, too_long);
        k.d.name = nm;
        on_host = k.d.host_twin != nullptr;
        fn = "sg_graph_add_kernel";
        st = sg_graph_add_kernel(sh.g, &k.d, deps, dep_count, &node);
        break;
      }
      case K_MEMSET: {
        sg_memset_desc d;
        Ptr dst;
        e = make_memset(&d, &dst, too_long);
        d.name = nm;
        fn = "sg_graph_add_memset";
        st = sg_graph_add_memset(sh.g, &d, deps, dep_count, &node);
        break;
      }
      case K_HOST: {
        sg_host_desc h = {pick(16) ? host_fn : nullptr, nullptr, nm};
        e = !h.fn || too_long ? MUST_FAIL : MUST_SUCCEED;
        fn = "sg_graph_add_host";
        st = sg_graph_add_host(sh.g, &h, deps, dep_count, &node);
        break;
      }
      case K_STREAM_FN: {
        sg_stream_fn_desc s{};
        s.fn = pick(3) ? stream_fn : nullptr;
        s.host_twin = pick(3) ? host_fn : nullptr;
        s.release = release_fn;
        s.name = nm;
        on_host = s.host_twin != nullptr;
        e = (!s.fn && !s.host_twin) || too_long ? MUST_FAIL : MUST_SUCCEED;
        fn = "sg_graph_add_stream_fn";
        st = sg_graph_add_stream_fn(sh.g, &s, deps, dep_count, &node);
        if (st == SG_OK) release_owed++;
        break;
      }
      default: {
        e = too_long ? MUST_FAIL : MUST_SUCCEED;
        fn = "sg_graph_add_empty";
        st = sg_graph_add_empty(sh.g, nm, deps, dep_count, &node);
        break;
      }
    }
    if (!deps_ok) e = MUST_FAIL;
    expect(e, st, fn, "adding a node");
    if (st == SG_OK) added(gi, node, kind, has_name, name, on_host, deps, dep_count);
  }

  void add_edge(int gi) {
    bool fv, tv;
    sg_node from = pick_node(gi, &fv), to = pick_node(gi, &tv);
    sg_status st = sg_graph_add_edge(graphs[gi].g, from, to);
    bool self = fv && tv && from.opaque == to.opaque;
    expect(!fv || !tv || self ? MUST_FAIL : MUST_SUCCEED, st, "sg_graph_add_edge", "an edge");
    if (self) CHECK(st == SG_ERR_SELF_EDGE, "a self-edge answered %s", sg_status_name(st));
    if (st == SG_OK) graphs[gi].edges.insert({sg_node_index(from), sg_node_index(to)});
  }

  void set_node(int gi) {
    Shadow &sh = graphs[gi];
    bool valid;
    sg_node node = pick_node(gi, &valid);
    bool too_long, has_name;
    std::string name;
    const char *nm = pick_name(&too_long, &has_name, &name);
    Kind want = static_cast<Kind>(pick(4));  // copy, kernel, memset, host
    Kind have = valid ? sh.nodes[sg_node_index(node)].kind : K_EMPTY;
    Expect e;
    sg_status st;
    const char *fn;
    bool on_host = true;
    switch (want) {
      case K_COPY: {
        Ptr dst = pick_ptr(), src = pick_ptr();
        size_t bytes = pick_bytes(dst);
        int ck = static_cast<int>(pick(5));
        sg_copy_desc c = {dst.p, src.p, bytes, SG_COPY_AUTO, nm};
        std::memcpy(&c.kind, &ck, sizeof ck);
        e = judge_copy(dst, src, bytes, ck, too_long);
        fn = "sg_graph_set_copy";
        st = sg_graph_set_copy(sh.g, node, &c);
        break;
      }
      case K_KERNEL: {
        KernelIn k;
        e = make_kernel(&k, too_long);
        k.d.name = nm;
        on_host = k.d.host_twin != nullptr;
        fn = "sg_graph_set_kernel";
        st = sg_graph_set_kernel(sh.g, node, &k.d);
        break;
      }
      case K_MEMSET: {
        sg_memset_desc d;
        Ptr dst;
        e = make_memset(&d, &dst, too_long);
        d.name = nm;
        fn = "sg_graph_set_memset";
        st = sg_graph_set_memset(sh.g, node, &d);
        break;
      }
      default: {
        sg_host_desc h = {pick(16) ? host_fn : nullptr, nullptr, nm};
        e = !h.fn || too_long ? MUST_FAIL : MUST_SUCCEED;
        fn = "sg_graph_set_host";
        st = sg_graph_set_host(sh.g, node, &h);
        break;
      }
    }
    if (!valid || have != want) e = MUST_FAIL;
    expect(e, st, fn, "an edit");
    if (st == SG_OK) {
      ShadowNode &n = sh.nodes[sg_node_index(node)];
      n.runs_on_host = on_host;
      if (has_name) {  // a new name replaces the old; none keeps it
        n.has_name = true;
        n.name = name;
      }
    }
  }

  void query(int gi) {
    Shadow &sh = graphs[gi];
    size_t count = 0;
    CHECK(sg_graph_node_count(sh.g, &count) == SG_OK && count == sh.nodes.size(),
          "node count %zu, shadow %zu", count, sh.nodes.size());
    CHECK(sg_graph_edge_count(sh.g, &count) == SG_OK && count == sh.edges.size(),
          "edge count %zu, shadow %zu", count, sh.edges.size());
    bool valid;
    sg_node node = pick_node(gi, &valid);
    const char *name = nullptr;
    sg_status st = sg_graph_node_name(sh.g, node, &name);
    expect(valid ? MUST_SUCCEED : MUST_FAIL, st, "sg_graph_node_name", "a name");
    if (st == SG_OK) {
      const ShadowNode &n = sh.nodes[sg_node_index(node)];
      CHECK((name != nullptr) == n.has_name, "a name where none was given, or the reverse");
      if (name) CHECK(n.name == name, "the name differs from the one given");
    }
    uint32_t index = pick(sh.nodes.size() + 2);
    sg_node at{};
    st = sg_graph_node_at(sh.g, index, &at);
    expect(index < sh.nodes.size() ? MUST_SUCCEED : MUST_FAIL, st, "sg_graph_node_at", "an index");
    if (st == SG_OK) CHECK(sg_node_index(at) == index, "node_at gave another index");
  }

  void validate(int gi) {
    Shadow &sh = graphs[gi];
    sg_status st = sg_graph_validate(sh.g);
    bool cycle = sh.has_cycle();
    expect(cycle ? MUST_FAIL : MUST_SUCCEED, st, "sg_graph_validate", "validation");
    if (cycle) CHECK(st == SG_ERR_CYCLE, "a cycle answered %s", sg_status_name(st));
  }

  void plan(int gi) {
    Shadow &sh = graphs[gi];
    static const unsigned limits[6] = {0, 1, 2, 3, 8, 4096};
    unsigned limit = limits[pick(6)];
    sg_plan *p = nullptr;
    sg_status st = sg_plan_create(sh.g, limit, &p);
    bool cycle = sh.has_cycle();
    expect(cycle ? MUST_FAIL : MUST_SUCCEED, st, "sg_plan_create", "a plan");
    if (st != SG_OK) return;
    check_plan(sh, p, limit);
    CHECK(sg_plan_destroy(p) == SG_OK, "sg_plan_destroy");
  }

  void check_plan(const Shadow &sh, const sg_plan *p, unsigned limit) {
    const size_t n = sh.nodes.size();
    sg_plan_summary s;
    CHECK(sg_plan_get_summary(p, &s) == SG_OK, "summary");
    CHECK(s.node_count == n && s.edge_count == sh.edges.size(), "summary counts %zu/%zu", s.node_count,
          s.edge_count);
    CHECK(limit == 0 || s.max_streams == limit, "max_streams %u for limit %u", s.max_streams, limit);
    CHECK(s.stream_count <= s.max_streams, "%u streams over the limit %u", s.stream_count,
          s.max_streams);
    CHECK(n == 0 || s.stream_count >= 1, "no stream for %zu nodes", n);
    CHECK(s.reduced_edge_count <= s.edge_count, "reduced edges");
    CHECK(n == 0 || (s.critical_path_nodes >= 1 && s.critical_path_nodes <= n), "critical path");
    if (s.width_exact && n)
      CHECK(s.stream_count == (s.width < s.max_streams ? s.width : s.max_streams),
            "%u streams, width %zu, limit %u", s.stream_count, s.width, s.max_streams);
    std::vector<sg_plan_node_info> info(n);
    std::vector<char> order_seen(n, 0);
    for (uint32_t v = 0; v < n; v++) {
      CHECK(sg_plan_get_node(p, sh.handles[v], &info[v]) == SG_OK, "node %u", v);
      CHECK(info[v].stream < s.stream_count, "stream of node %u", v);
      CHECK(info[v].order < n && !order_seen[info[v].order], "order of node %u", v);
      order_seen[info[v].order] = 1;
    }
    size_t listed = 0;
    for (unsigned t = 0; t < s.stream_count; t++) {
      size_t len = 0;
      CHECK(sg_plan_get_stream(p, t, nullptr, 0, &len) == SG_OK, "stream %u length", t);
      std::vector<sg_node> on(len);
      size_t again = 0;
      CHECK(sg_plan_get_stream(p, t, on.data(), on.size(), &again) == SG_OK && again == len,
            "stream %u", t);
      for (size_t k = 0; k < len; k++) {
        uint32_t v = sg_node_index(on[k]);
        CHECK(v < n && info[v].stream == t && info[v].position == k, "stream %u position %zu", t, k);
        CHECK(k == 0 || info[sg_node_index(on[k - 1])].order < info[v].order,
              "stream order against issue order");
      }
      listed += len;
    }
    CHECK(listed == n, "streams list %zu nodes of %zu", listed, n);
    size_t none = 0;
    CHECK(sg_plan_get_stream(p, s.stream_count, nullptr, 0, &none) != SG_OK,
          "a stream past the last was accepted");
    for (auto &e : sh.edges) {
      CHECK(info[e.first].order < info[e.second].order, "edge %u->%u against the issue order",
            e.first, e.second);
      if (info[e.first].stream == info[e.second].stream)
        CHECK(info[e.first].position < info[e.second].position, "edge %u->%u against stream order",
              e.first, e.second);
    }
    // Stream order and the waits must imply every edge (happens-before).
    std::vector<uint32_t> by_order(n);
    for (uint32_t v = 0; v < n; v++) by_order[info[v].order] = v;
    const size_t words = (n + 63) / 64;
    std::vector<uint64_t> before(n * words, 0);
    std::vector<int64_t> last_on(s.stream_count, -1);
    auto join = [&](uint32_t into, uint32_t from) {
      for (size_t w = 0; w < words; w++) before[into * words + w] |= before[from * words + w];
      before[into * words + from / 64] |= uint64_t{1} << (from % 64);
    };
    for (uint32_t v : by_order) {
      if (last_on[info[v].stream] >= 0) join(v, static_cast<uint32_t>(last_on[info[v].stream]));
      last_on[info[v].stream] = v;
      size_t count = 0;
      CHECK(sg_plan_get_waits(p, sh.handles[v], nullptr, 0, &count) == SG_OK &&
                count == info[v].wait_count,
            "node %u: %zu waits listed, wait_count %u", v, count, info[v].wait_count);
      std::vector<sg_plan_wait> waits(count);
      size_t again = 0;
      CHECK(sg_plan_get_waits(p, sh.handles[v], waits.data(), count, &again) == SG_OK &&
                again == count, "node %u waits", v);
      for (const sg_plan_wait &w : waits) {
        uint32_t a = sg_node_index(w.after);
        CHECK(a < n && info[a].records_event && info[a].event == w.event &&
                  info[a].stream == w.stream && info[a].order < info[v].order,
              "node %u waits for event %u after node %u", v, w.event, a);
        join(v, a);
      }
    }
    for (auto &e : sh.edges)
      CHECK(before[e.second * words + e.first / 64] >> (e.first % 64) & 1,
            "edge %u->%u is implied by neither stream order nor a wait", e.first, e.second);
    char *dot = nullptr;
    CHECK(sg_plan_to_dot(p, &dot) == SG_OK && dot, "sg_plan_to_dot");
    std::string bad = sgfuzz::dot_check(dot, std::strlen(dot), SG_FUZZ_CHECK_UTF8);
    CHECK(bad.empty(), "DOT: %s\n%s", bad.c_str(), dot);
    sg_free(dot);
  }

  void exec(int gi) {
    if (execs_made >= 2) return;  // threads are slow to make: a few per input
    execs_made++;
    Shadow &sh = graphs[gi];
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = SG_BACKEND_HOST;
    o.mode = pick(2) ? SG_MODE_GRAPH : SG_MODE_STREAMS;
    o.max_streams = pick(4);
    o.trace = pick(2);
    static const sg_staging_policy policies[4] = {SG_STAGING_AUTO, SG_STAGING_NONE,
                                                  SG_STAGING_STAGE, SG_STAGING_REGISTER};
    o.staging.policy = policies[pick(4)];
    o.staging.pool = m->pool;
    bool staging = o.staging.policy == SG_STAGING_STAGE || o.staging.policy == SG_STAGING_REGISTER;
    bool cannot = sh.has_cycle() || !sh.all_run_on_host();
    sg_exec *e = nullptr;
    sg_status st = sg_exec_create(sh.g, &o, &e);
    expect(cannot ? MUST_FAIL : staging ? MAY_FAIL : MUST_SUCCEED, st, "sg_exec_create",
           "an executable");
    if (st != SG_OK) {
      CHECK(e == nullptr, "a failed sg_exec_create set *out");
      return;
    }
    sg_exec_info info;
    CHECK(sg_exec_get_info(e, &info) == SG_OK && info.node_count == sh.nodes.size(), "exec info");
    const sg_plan *p = nullptr;
    CHECK(sg_exec_get_plan(e, &p) == SG_OK && p, "exec plan");
    check_plan(sh, p, o.max_streams);
    CHECK(sg_plan_destroy(const_cast<sg_plan *>(p)) == SG_ERR_INVALID_ARGUMENT,
          "an executable's plan was destroyed");
    // Edit the graph, then re-apply it (a new topology or parameters only).
    size_t edits = pick(4);
    for (size_t i = 0; i < edits; i++) step(gi, pick(3));
    bool cannot_now = sh.has_cycle() || !sh.all_run_on_host();
    size_t before = info.node_count;
    st = sg_exec_update(e, sh.g);
    expect(cannot_now ? MUST_FAIL : MAY_FAIL, st, "sg_exec_update", "an update",
           SG_FUZZ_CHECK_UPDATE);
    if (st == SG_OK) {
      CHECK(sg_exec_get_info(e, &info) == SG_OK && info.node_count == sh.nodes.size(),
            "exec info after an update");
    } else if (SG_FUZZ_CHECK_UPDATE) {  // the executable as it was, usable
      CHECK(sg_exec_query(e) == SG_OK, "query after a failed update");
      CHECK(sg_exec_get_info(e, &info) == SG_OK && info.node_count == before,
            "a failed update changed the executable");
    }
    CHECK(sg_exec_destroy(e) == SG_OK, "sg_exec_destroy");
  }

  void destroy_graph(int gi) {
    Shadow &sh = graphs[gi];
    if (!sh.g) return;
    CHECK(sg_graph_destroy(sh.g) == SG_OK, "sg_graph_destroy");
    CHECK(sg_graph_destroy(sh.g) == SG_ERR_INVALID_HANDLE, "a destroyed graph was destroyed again");
    for (auto &h : sh.handles)
      if (stale.size() < 64) stale.push_back(h);
    sh = Shadow{};
  }

  void new_graph(int gi) {
    destroy_graph(gi);
    CHECK(sg_graph_create(&graphs[gi].g) == SG_OK, "sg_graph_create");
  }

  // One operation; `bias` 0..2 limits it to building ones.
  void step(int gi, uint32_t bias) {
    uint32_t op = bias < 3 ? pick(3) : pick(16);
    switch (op) {
      case 0:
      case 1:
      case 3:
      case 4:
      case 5: add_node(gi); break;
      case 2:
      case 6:
      case 7: add_edge(gi); break;
      case 8: set_node(gi); break;
      case 9: query(gi); break;
      case 10: validate(gi); break;
      case 11:
      case 12: plan(gi); break;
      case 13: exec(gi); break;
      case 14: if (pick(4) == 0) new_graph(gi); break;
      default: query(gi); break;
    }
  }

  void run() {
    new_graph(0);
    new_graph(1);
    for (int ops = 0; ops < 160; ops++) {
      int gi = pick(4) == 0 ? 1 : 0;
      step(gi, 3);
    }
    plan(0);
    destroy_graph(0);
    destroy_graph(1);
  }
};

long baseline = -1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Memory *m = memory();
  if (baseline < 0) {
    baseline = sgfuzz::warm_baseline(m->pool);
    std::atexit(print_counts);
  }
  releases = release_owed = 0;
  {
    Fuzz f(data, size);
    f.run();
  }
  CHECK(releases == release_owed, "%d release callbacks for %d stream-function nodes", releases,
        release_owed);
  sg_pinned_pool_trim(m->pool);
  long live = sg_live_allocations();
  CHECK(live == baseline, "%ld library allocations live, %ld before", live, baseline);
  return 0;
}
