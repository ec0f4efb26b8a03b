// Declared access and planned temporaries on the host backend: random
// graphs of kernels that read and write random ranges of the caller's
// buffers and of temporaries, ordered only by their declarations (no
// explicit edge), give bitwise the results of running the nodes one after
// the other in creation order with every temporary in memory of its own;
// on every stream limit, over several launches, after parameter updates
// and after a topology change re-plans the memory. The packing is proved
// safe inside sg_exec_create (debug builds run the checker).
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "sg_test_util.h"

namespace {

constexpr uint32_t kElems = 256;  // per buffer and per temporary

uint32_t mix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t x = a * 2654435761u ^ (b + salt);
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  return x ^ (x >> 12);
}

// dst[i] = mix(src1[i], src2[i], salt), or dst[i] += it when `commute`
// (atomically: commutative writes run at the same time).
struct OpArgs {
  uint32_t *dst;
  const uint32_t *src1, *src2;
  uint32_t count, salt, commute;
};

void run_op(const OpArgs &a) {
  for (uint32_t i = 0; i < a.count; i++) {
    uint32_t v = mix(a.src1[i], a.src2[i], a.salt);
    if (a.commute) __atomic_fetch_add(&a.dst[i], v, __ATOMIC_RELAXED);
    else a.dst[i] = v;
  }
}

void op_twin(const sg_kernel_launch *, void *const *args) {
  OpArgs a;
  std::memcpy(&a.dst, args[0], sizeof a.dst);
  std::memcpy(&a.src1, args[1], sizeof a.src1);
  std::memcpy(&a.src2, args[2], sizeof a.src2);
  std::memcpy(&a.count, args[3], sizeof a.count);
  std::memcpy(&a.salt, args[4], sizeof a.salt);
  std::memcpy(&a.commute, args[5], sizeof a.commute);
  run_op(a);
}

// One operand: elements [at, at + count) of buffer `space` (< externals)
// or of temporary space - externals.
struct Operand {
  uint32_t space, at;
};

struct Op {
  Operand dst, src1, src2;
  uint32_t count, salt, commute;
};

struct Problem {
  uint32_t externals = 0, temps = 0;
  std::vector<Op> ops;
};

// Random operations; a temporary's element is read (or accumulated into)
// only after an earlier operation wrote it plainly, since a temporary's
// contents do not outlive a launch.
Problem random_problem(std::mt19937 &rng) {
  Problem p;
  p.externals = 1 + rng() % 3;
  p.temps = 1 + rng() % 12;
  uint32_t spaces = p.externals + p.temps;
  std::vector<std::vector<bool>> defined(spaces, std::vector<bool>(kElems, false));
  for (uint32_t s = 0; s < p.externals; s++) defined[s].assign(kElems, true);
  uint32_t n = 2 + rng() % 40;
  auto pick_defined = [&](uint32_t count, Operand &o, uint32_t avoid) {
    for (int tries = 0; tries < 20; tries++) {
      uint32_t s = (uint32_t)(rng() % spaces), at = (uint32_t)(rng() % (kElems - count + 1));
      if (s == avoid) continue;
      bool ok = true;
      for (uint32_t i = 0; i < count && ok; i++) ok = defined[s][at + i];
      if (ok) {
        o = {s, at};
        return;
      }
    }
    o = {avoid == 0 ? 1u % p.externals : 0u, (uint32_t)(rng() % (kElems - count + 1))};
    if (o.space == avoid) o.space = 0;  // one external buffer: reading it is fine
  };
  for (uint32_t v = 0; v < n; v++) {
    Op op{};
    op.count = 1 + rng() % 64;
    op.salt = rng();
    op.commute = rng() % 5 == 0;
    if (op.commute) {
      pick_defined(op.count, op.dst, UINT32_MAX);
      // Sources from other memory: a node may not read what it
      // accumulates into (a plain access next to a commutative one).
      pick_defined(op.count, op.src1, op.dst.space);
      pick_defined(op.count, op.src2, op.dst.space);
      if (op.src1.space == op.dst.space || op.src2.space == op.dst.space) op.commute = 0;
    } else {
      pick_defined(op.count, op.src1, UINT32_MAX);
      pick_defined(op.count, op.src2, UINT32_MAX);
      op.dst = {(uint32_t)(rng() % spaces), (uint32_t)(rng() % (kElems - op.count + 1))};
      for (uint32_t i = 0; i < op.count; i++) defined[op.dst.space][op.dst.at + i] = true;
    }
    p.ops.push_back(op);
  }
  return p;
}

uint32_t initial(uint32_t space, uint32_t i) { return mix(space, i, 12345); }

// Runs the operations one after the other, every temporary on its own.
std::vector<std::vector<uint32_t>> reference(const Problem &p) {
  std::vector<std::vector<uint32_t>> mem(p.externals + p.temps, std::vector<uint32_t>(kElems, 0));
  for (uint32_t s = 0; s < p.externals; s++)
    for (uint32_t i = 0; i < kElems; i++) mem[s][i] = initial(s, i);
  for (auto &op : p.ops)
    run_op({mem[op.dst.space].data() + op.dst.at, mem[op.src1.space].data() + op.src1.at,
            mem[op.src2.space].data() + op.src2.at, op.count, op.salt, op.commute});
  mem.resize(p.externals);
  return mem;
}

// The problem as a graph: kernels with declared accesses and no edge.
struct Built {
  sgtest::Graph g;
  std::vector<std::vector<uint32_t>> ext;
  std::vector<sg_temp> temps;
  std::vector<sg_node> nodes;
};

void fill_args(Built &b, const Problem &p, const Op &op, OpArgs &a) {
  auto ptr = [&](const Operand &o) -> uint32_t * {
    return o.space < p.externals ? b.ext[o.space].data() + o.at : nullptr;  // bound otherwise
  };
  a = {ptr(op.dst), ptr(op.src1), ptr(op.src2), op.count, op.salt, op.commute};
}

sg_status add_op(Built &b, const Problem &p, const Op &op, uint32_t salt_override,
                 sg_node *out) {
  OpArgs a;
  fill_args(b, p, op, a);
  if (salt_override) a.salt = salt_override;
  void *args[6] = {&a.dst, &a.src1, &a.src2, &a.count, &a.salt, &a.commute};
  size_t sizes[6] = {sizeof a.dst, sizeof a.src1, sizeof a.src2, 4, 4, 4};
  sg_kernel_desc k{};
  k.grid = k.block = sg_dim3{1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 6;
  k.host_twin = op_twin;
  sg_status st = sg_graph_add_kernel(b.g, &k, nullptr, 0, out);
  if (st) return st;
  const Operand *ops[3] = {&op.dst, &op.src1, &op.src2};
  sg_access acc[3];
  for (int j = 0; j < 3; j++) {
    acc[j] = sg_access{};
    const Operand &o = *ops[j];
    acc[j].bytes = op.count * 4;
    acc[j].mode = j == 0 ? (op.commute ? SG_ACCESS_READ_WRITE : SG_ACCESS_WRITE) : SG_ACCESS_READ;
    acc[j].flags = j == 0 && op.commute ? SG_ACCESS_COMMUTATIVE : 0;
    if (o.space < p.externals) {
      acc[j].ptr = b.ext[o.space].data() + o.at;
    } else {
      acc[j].temp = b.temps[o.space - p.externals];
      acc[j].offset = o.at * 4;
      if ((st = sg_graph_bind_temp(b.g, *out, (unsigned)j, acc[j].temp, o.at * 4))) return st;
    }
  }
  return sg_graph_declare_access(b.g, *out, acc, 3);
}

void build(Built &b, const Problem &p, std::mt19937 &rng) {
  b.ext.assign(p.externals, std::vector<uint32_t>(kElems));
  for (uint32_t t = 0; t < p.temps; t++) {
    sg_temp_desc td{};
    td.bytes = kElems * 4;
    td.alignment = (size_t)4 << (rng() % 8);
    sg_temp h{};
    SG_ASSERT_OK(sg_graph_add_temp(b.g, &td, &h));
    b.temps.push_back(h);
  }
  for (auto &op : p.ops) {
    sg_node n{};
    SG_ASSERT_OK(add_op(b, p, op, 0, &n));
    b.nodes.push_back(n);
  }
}

void reset(Built &b) {
  for (uint32_t s = 0; s < b.ext.size(); s++)
    for (uint32_t i = 0; i < kElems; i++) b.ext[s][i] = initial(s, i);
}

void launch_and_compare(Built &b, sg_exec *e, const std::vector<std::vector<uint32_t>> &want,
                        const std::string &what) {
  reset(b);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  for (uint32_t s = 0; s < want.size(); s++)
    ASSERT_EQ(std::memcmp(b.ext[s].data(), want[s].data(), kElems * 4), 0)
        << what << ": buffer " << s << " differs from the serial reference";
}

sg_exec_options host_options(unsigned streams) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.max_streams = streams;
  return o;
}

TEST(TempsHost, RandomGraphsMatchTheSerialReference) {
  uint32_t base = std::random_device{}();
  std::printf("TempsHost.RandomGraphs: seeds from %u\n", base);
  size_t reused = 0, total = 0;
  for (uint32_t i = 0; i < 150; i++) {
    uint32_t seed = base + i;
    std::mt19937 rng(seed);
    Problem p = random_problem(rng);
    auto want = reference(p);
    Built b;
    build(b, p, rng);
    if (HasFatalFailure()) FAIL() << "seed " << seed;
    size_t edges = 1;
    SG_ASSERT_OK(sg_graph_edge_count(b.g, &edges));
    ASSERT_EQ(edges, 0u);
    // A third of the graphs spread over two (emulated) devices: streams
    // per device, events across them.
    if (seed % 3 == 0)
      for (auto &n : b.nodes) SG_ASSERT_OK(sg_graph_set_device(b.g, n, (int)(rng() % 2)));
    sg_exec_options o = host_options(1 + rng() % 8);
    sgtest::Exec e;
    ASSERT_EQ(sg_exec_create(b.g, &o, &e.e), SG_OK) << "seed " << seed << ": " << sg_last_error();
    sg_exec_memory mem;
    SG_ASSERT_OK(sg_exec_get_memory(e, &mem));
    ASSERT_EQ(mem.temp_count, p.temps);
    ASSERT_LE(mem.arena_bytes, mem.no_reuse_bytes + 4096);
    reused += mem.no_reuse_bytes - std::min(mem.arena_bytes, mem.no_reuse_bytes);
    total += mem.no_reuse_bytes;
    std::vector<void *> before(p.temps);
    for (uint32_t t = 0; t < p.temps; t++) SG_ASSERT_OK(sg_exec_get_temp(e, b.temps[t], &before[t]));
    for (int launch = 0; launch < 3; launch++) {
      launch_and_compare(b, e, want, "seed " + std::to_string(seed));
      if (HasFatalFailure()) return;
    }
    for (uint32_t t = 0; t < p.temps; t++) {
      void *now = nullptr;
      SG_ASSERT_OK(sg_exec_get_temp(e, b.temps[t], &now));
      ASSERT_EQ(now, before[t]) << "seed " << seed;
    }
  }
  std::printf("  reuse saved %zu of %zu bytes\n", reused, total);
  EXPECT_GT(reused, 0u);
}

// Parameter changes keep bound arguments pointing at the temporaries;
// a topology change plans the memory again.
TEST(TempsHost, UpdatesKeepTheBindingsAndTopologyChangesRePlan) {
  uint32_t seed = std::random_device{}();
  std::printf("TempsHost.Updates: seed %u\n", seed);
  std::mt19937 rng(seed);
  Problem p;
  for (;;) {  // one with temporaries in use
    p = random_problem(rng);
    bool uses = false;
    for (auto &op : p.ops) uses |= op.dst.space >= p.externals;
    if (uses && p.ops.size() >= 3) break;
  }
  Built b;
  build(b, p, rng);
  sg_exec_options o = host_options(4);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(b.g, &o, &e.e));
  launch_and_compare(b, e, reference(p), "as built");
  if (HasFatalFailure()) return;

  // sg_exec_set_kernel with a new salt (and NULL where temporaries go).
  uint32_t k = rng() % p.ops.size();
  p.ops[k].salt ^= 0x9e3779b9u;
  OpArgs a;
  fill_args(b, p, p.ops[k], a);
  void *args[6] = {&a.dst, &a.src1, &a.src2, &a.count, &a.salt, &a.commute};
  size_t sizes[6] = {sizeof a.dst, sizeof a.src1, sizeof a.src2, 4, 4, 4};
  sg_kernel_desc kd{};
  kd.grid = kd.block = sg_dim3{1, 1, 1};
  kd.args = args;
  kd.arg_sizes = sizes;
  kd.arg_count = 6;
  kd.host_twin = op_twin;
  SG_ASSERT_OK(sg_exec_set_kernel(e, b.nodes[k], &kd));
  launch_and_compare(b, e, reference(p), "after sg_exec_set_kernel");
  if (HasFatalFailure()) return;

  // The same through the graph and sg_exec_update: parameters only.
  SG_ASSERT_OK(sg_graph_set_kernel(b.g, b.nodes[k], &kd));
  sg_exec_stats before, after;
  SG_ASSERT_OK(sg_exec_get_stats(e, &before));
  SG_ASSERT_OK(sg_exec_update(e, b.g));
  SG_ASSERT_OK(sg_exec_get_stats(e, &after));
  EXPECT_EQ(after.rebuilds, before.rebuilds);
  launch_and_compare(b, e, reference(p), "after sg_exec_update (parameters)");
  if (HasFatalFailure()) return;

  // A new node, a new topology: re-planned.
  Op extra{};
  extra.count = 32;
  extra.salt = 77;
  extra.dst = {p.externals, 0};  // temporary 0, then read back into buffer 0
  extra.src1 = extra.src2 = {0, 0};
  Op back{};
  back.count = 32;
  back.salt = 78;
  back.dst = {0, 100};
  back.src1 = back.src2 = {p.externals, 0};
  for (const Op *op : {&extra, &back}) {
    sg_node n{};
    SG_ASSERT_OK(add_op(b, p, *op, 0, &n));
    p.ops.push_back(*op);
  }
  SG_ASSERT_OK(sg_exec_update(e, b.g));
  SG_ASSERT_OK(sg_exec_get_stats(e, &after));
  EXPECT_EQ(after.rebuilds, before.rebuilds + 1);
  launch_and_compare(b, e, reference(p), "after a topology change");
}

// A topology change built in the background (sg_exec_update_async) plans
// the temporaries again in an arena of its own; the old version's goes with
// it on the build thread.
TEST(TempsHost, TopologyChangeBuiltInTheBackgroundRePlans) {
  uint32_t seed = std::random_device{}();
  std::printf("TempsHost.Background: seed %u\n", seed);
  std::mt19937 rng(seed);
  Problem p;
  for (;;) {
    p = random_problem(rng);
    bool uses = false;
    for (auto &op : p.ops) uses |= op.dst.space >= p.externals;
    if (uses && p.ops.size() >= 3) break;
  }
  Built b;
  build(b, p, rng);
  sg_exec_options o = host_options(3);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(b.g, &o, &e.e));
  launch_and_compare(b, e, reference(p), "as built");
  if (HasFatalFailure()) return;
  Op extra{};
  extra.count = 32;
  extra.salt = 91;
  extra.dst = {p.externals, 0};
  extra.src1 = extra.src2 = {0, 0};
  Op back{};
  back.count = 32;
  back.salt = 92;
  back.dst = {0, 100};
  back.src1 = back.src2 = {p.externals, 0};
  for (const Op *op : {&extra, &back}) {
    sg_node n{};
    SG_ASSERT_OK(add_op(b, p, *op, 0, &n));
    p.ops.push_back(*op);
  }
  SG_ASSERT_OK(sg_exec_update_async(e, b.g));
  uint64_t first = 0;
  SG_ASSERT_OK(sg_exec_update_wait(e, &first));
  EXPECT_EQ(first, 2u);
  launch_and_compare(b, e, reference(p), "after the background topology change");
}

// Temporaries whose sizes add up past what an arena can hold are refused
// when the executable is made, not wrapped around.
TEST(TempsHost, TemporariesTooLargeTogetherAreRefused) {
  sgtest::Graph g;
  sg_node n{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "user", nullptr, 0, &n));
  for (int i = 0; i < 4; i++) {
    sg_temp t{};
    sg_temp_desc td{};
    td.bytes = PTRDIFF_MAX / 2;
    SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t));
    sg_access a{};
    a.temp = t;
    a.mode = SG_ACCESS_WRITE;
    SG_ASSERT_OK(sg_graph_declare_access(g, n, &a, 1));
  }
  sg_exec_options o = host_options(2);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "sg_exec_create"), nullptr) << sg_last_error();
  EXPECT_NE(std::strstr(sg_last_error(), "arena"), nullptr) << sg_last_error();
  EXPECT_EQ(e, nullptr);
}

// Copies and memsets whose sides are temporaries: placed in each
// executable's arena, kept by parameter updates (NULL stays the temporary).
TEST(TempsHost, CopiesAndMemsetsWithTemporaries) {
  static uint32_t in[kElems], in2[kElems], out[kElems], out2[kElems];
  for (uint32_t i = 0; i < kElems; i++) in[i] = mix(i, 1, 2), in2[i] = mix(i, 3, 4);
  sgtest::Graph g;
  sg_temp t0{}, t1{};
  sg_temp_desc td{};
  td.bytes = kElems * 4;
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t0));
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t1));
  auto declare = [&](sg_node n, std::vector<sg_access> acc) {
    SG_ASSERT_OK(sg_graph_declare_access(g, n, acc.data(), acc.size()));
  };
  auto on_t = [](sg_temp t, sg_access_mode m) {
    sg_access a{};
    a.temp = t;
    a.mode = m;
    return a;
  };
  auto on_p = [](const void *p, sg_access_mode m) {
    sg_access a{};
    a.ptr = p;
    a.bytes = kElems * 4;
    a.mode = m;
    return a;
  };
  sg_copy_desc up{nullptr, in, kElems * 4, SG_COPY_AUTO, "up"};
  sg_node n0{}, n1{}, n2{}, n3{};
  SG_ASSERT_OK(sg_graph_add_copy_temp(g, &up, t0, 0, sg_temp{}, 0, nullptr, 0, &n0));
  declare(n0, {on_t(t0, SG_ACCESS_WRITE), on_p(in, SG_ACCESS_READ)});
  sg_memset_desc ms{nullptr, 7, 4, kElems, "fill"};
  SG_ASSERT_OK(sg_graph_add_memset_temp(g, &ms, t1, 0, nullptr, 0, &n1));
  declare(n1, {on_t(t1, SG_ACCESS_WRITE)});
  // t1 = mix(t0, t1, 5), in place.
  OpArgs a{nullptr, nullptr, nullptr, kElems, 5, 0};
  void *args[6] = {&a.dst, &a.src1, &a.src2, &a.count, &a.salt, &a.commute};
  size_t sizes[6] = {sizeof a.dst, sizeof a.src1, sizeof a.src2, 4, 4, 4};
  sg_kernel_desc k{};
  k.grid = k.block = sg_dim3{1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 6;
  k.host_twin = op_twin;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, &n2));
  SG_ASSERT_OK(sg_graph_bind_temp(g, n2, 0, t1, 0));
  SG_ASSERT_OK(sg_graph_bind_temp(g, n2, 1, t0, 0));
  SG_ASSERT_OK(sg_graph_bind_temp(g, n2, 2, t1, 0));
  declare(n2, {on_t(t0, SG_ACCESS_READ), on_t(t1, SG_ACCESS_READ_WRITE)});
  sg_copy_desc down{out, nullptr, kElems * 4, SG_COPY_AUTO, "down"};
  SG_ASSERT_OK(sg_graph_add_copy_temp(g, &down, sg_temp{}, 0, t1, 0, nullptr, 0, &n3));
  declare(n3, {on_t(t1, SG_ACCESS_READ), on_p(out, SG_ACCESS_WRITE)});
  auto want = [&](const uint32_t *src, uint32_t fill) {
    std::vector<uint32_t> w(kElems);
    for (uint32_t i = 0; i < kElems; i++) w[i] = mix(src[i], fill, 5);
    return w;
  };
  sg_exec_options o = host_options(4);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int launch = 0; launch < 2; launch++) {
    std::memset(out, 0, sizeof out);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    ASSERT_EQ(std::vector<uint32_t>(out, out + kElems), want(in, 7)) << "launch " << launch;
  }
  // In place: the download to another buffer, the fill's value (NULL sides
  // stay the temporaries).
  down.dst = out2;
  SG_ASSERT_OK(sg_exec_set_copy(e, n3, &down));
  ms.value = 9;
  SG_ASSERT_OK(sg_exec_set_memset(e, n1, &ms));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  ASSERT_EQ(std::vector<uint32_t>(out2, out2 + kElems), want(in, 9));
  // Through the graph and sg_exec_update: another source, same topology.
  up.src = in2;
  SG_ASSERT_OK(sg_graph_set_copy(g, n0, &up));
  SG_ASSERT_OK(sg_graph_set_copy(g, n3, &down));
  SG_ASSERT_OK(sg_graph_set_memset(g, n1, &ms));
  sg_exec_stats st0, st1;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st0));
  SG_ASSERT_OK(sg_exec_update(e, g));
  SG_ASSERT_OK(sg_exec_get_stats(e, &st1));
  EXPECT_EQ(st1.rebuilds, st0.rebuilds);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  ASSERT_EQ(std::vector<uint32_t>(out2, out2 + kElems), want(in2, 9));
  // Refused: a pointer where a temporary goes, a range past its end, no
  // temporary at all, a misaligned memset, too many bytes on update.
  sg_copy_desc bad = up;
  bad.dst = out;
  EXPECT_EQ(sg_graph_add_copy_temp(g, &bad, t0, 0, sg_temp{}, 0, nullptr, 0, nullptr),
            SG_ERR_INVALID_ARGUMENT);
  bad = up;
  EXPECT_EQ(sg_graph_add_copy_temp(g, &bad, t0, 8, sg_temp{}, 0, nullptr, 0, nullptr),
            SG_ERR_INVALID_ARGUMENT);
  bad.dst = out;
  EXPECT_EQ(sg_graph_add_copy_temp(g, &bad, sg_temp{}, 0, sg_temp{}, 0, nullptr, 0, nullptr),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_graph_add_memset_temp(g, &ms, t1, 2, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  down.bytes = kElems * 4 + 4;
  EXPECT_EQ(sg_exec_set_copy(e, n3, &down), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "past the end of temporary"), nullptr) << sg_last_error();
}

// Each executable (each pipeline instance is one) has its own arena.
TEST(TempsHost, EachExecutableHasItsOwnArena) {
  sgtest::Graph g;
  sg_temp t{};
  sg_temp_desc td{};
  td.bytes = 4096;
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t));
  sg_node n{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "user", nullptr, 0, &n));
  sg_access a{};
  a.temp = t;
  a.mode = SG_ACCESS_WRITE;
  SG_ASSERT_OK(sg_graph_declare_access(g, n, &a, 1));
  sg_exec_options o = host_options(2);
  sgtest::Exec e1, e2;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e1.e));
  SG_ASSERT_OK(sg_exec_create(g, &o, &e2.e));
  void *p1 = nullptr, *p2 = nullptr;
  SG_ASSERT_OK(sg_exec_get_temp(e1, t, &p1));
  SG_ASSERT_OK(sg_exec_get_temp(e2, t, &p2));
  EXPECT_NE(p1, nullptr);
  EXPECT_NE(p1, p2);
  EXPECT_EQ((uintptr_t)p1 % 256, 0u);
  EXPECT_EQ(sg_exec_get_temp(e1, sg_temp{n.opaque}, &p1), SG_ERR_INVALID_ARGUMENT);
}

// A pipeline's batch binds the caller's side of copies whose other side is
// a temporary (the request copied in, the result copied out): the bind
// replaces that side, the temporary side stays the instance's own. Binding
// the temporary side itself is refused with a message.
TEST(TempsHost, PipelineBindsTheSideThatIsNotATemporary) {
  uint32_t seed = std::random_device{}();
  std::printf("TempsHost.PipelineBinds: seed %u\n", seed);
  std::mt19937 rng(seed);
  sgtest::Graph g;
  sg_temp t{};
  sg_temp_desc td{};
  td.bytes = kElems * 4;
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t));
  static uint32_t first_in[kElems], first_out[kElems];
  sg_copy_desc up{nullptr, first_in, kElems * 4, SG_COPY_AUTO, "up"};
  sg_copy_desc down{first_out, nullptr, kElems * 4, SG_COPY_AUTO, "down"};
  sg_node nu{}, nd{};
  SG_ASSERT_OK(sg_graph_add_copy_temp(g, &up, t, 0, sg_temp{}, 0, nullptr, 0, &nu));
  SG_ASSERT_OK(sg_graph_add_copy_temp(g, &down, sg_temp{}, 0, t, 0, nullptr, 0, &nd));
  sg_access w{}, r{};
  w.temp = r.temp = t;
  w.mode = SG_ACCESS_WRITE;
  r.mode = SG_ACCESS_READ;
  SG_ASSERT_OK(sg_graph_declare_access(g, nu, &w, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, nd, &r, 1));
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.depth = 2;
  po.exec = host_options(2);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
  sgtest::Watchdog dog([] { std::fprintf(stderr, "PipelineBinds: hung\n"); });
  constexpr int kBatches = 6;
  static uint32_t in[kBatches][kElems], out[kBatches][kElems];
  for (int b = 0; b < kBatches; b++) {
    for (uint32_t i = 0; i < kElems; i++) in[b][i] = (uint32_t)rng(), out[b][i] = 0;
    sg_pipeline_bind binds[2] = {sg_bind_copy_src(nu, in[b]), sg_bind_copy_dst(nd, out[b])};
    sg_pipeline_batch batch{binds, 2, nullptr};
    EXPECT_EQ(sg_pipeline_submit(p, &batch, nullptr), SG_OK) << "batch " << b << ": "
                                                             << sg_last_error();
  }
  EXPECT_EQ(sg_pipeline_drain(p), SG_OK) << sg_last_error();
  for (int b = 0; b < kBatches; b++)
    EXPECT_EQ(std::memcmp(in[b], out[b], sizeof in[b]), 0) << "batch " << b;
  sg_pipeline_bind wrong = sg_bind_copy_dst(nu, out[0]);
  sg_pipeline_batch bad{&wrong, 1, nullptr};
  EXPECT_EQ(sg_pipeline_submit(p, &bad, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "dst is a temporary"), nullptr) << sg_last_error();
  EXPECT_EQ(sg_pipeline_destroy(p), SG_OK) << sg_last_error();
  dog.disarm();
  EXPECT_FALSE(dog.fired());
}

}  // namespace

namespace {

// Every allocation and thread or lock creation along the life of a graph
// with declared accesses and temporaries (declaring, inferring, drawing,
// planning memory, the arena, a parameter update, a re-plan) can fail:
// the failure comes back as a status with a message, and nothing leaks.
sg_status temps_scenario() {
  static uint32_t ext[kElems];
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  sg_status st = sg_graph_create(&g);
  sg_temp t[2]{};
  sg_temp_desc td{};
  td.bytes = kElems * 4;
  td.name = "t";
  for (int i = 0; i < 2 && !st; i++) st = sg_graph_add_temp(g, &td, &t[i]);
  std::vector<sg_node> nodes;
  for (int i = 0; i < 4 && !st; i++) {
    OpArgs a{ext, ext, ext, 64, (uint32_t)i, 0};
    void *args[6] = {&a.dst, &a.src1, &a.src2, &a.count, &a.salt, &a.commute};
    size_t sizes[6] = {sizeof a.dst, sizeof a.src1, sizeof a.src2, 4, 4, 4};
    sg_kernel_desc k{};
    k.grid = k.block = sg_dim3{1, 1, 1};
    k.args = args;
    k.arg_sizes = sizes;
    k.arg_count = 6;
    k.host_twin = op_twin;
    sg_node n{};
    st = sg_graph_add_kernel(g, &k, nullptr, 0, &n);
    sg_access acc[2]{};
    acc[0].temp = t[i % 2];
    acc[0].mode = i < 2 ? SG_ACCESS_WRITE : SG_ACCESS_READ;
    acc[1].ptr = ext;
    acc[1].bytes = 256;
    acc[1].mode = i < 2 ? SG_ACCESS_READ : SG_ACCESS_WRITE;
    if (!st) st = sg_graph_declare_access(g, n, acc, 2);
    if (!st) st = sg_graph_bind_temp(g, n, i < 2 ? 0 : 1, t[i % 2], 0);
    nodes.push_back(n);
  }
  sg_node fill{}, down{};
  sg_memset_desc ms{nullptr, 3, 4, 16, "fill"};
  if (!st) st = sg_graph_add_memset_temp(g, &ms, t[0], 64, nullptr, 0, &fill);
  sg_copy_desc cd{ext + 100, nullptr, 64, SG_COPY_AUTO, "down"};
  if (!st) st = sg_graph_add_copy_temp(g, &cd, sg_temp{}, 0, t[1], 0, nullptr, 0, &down);
  sg_access fa{}, da[2]{};
  fa.temp = t[0];
  fa.mode = SG_ACCESS_WRITE;
  da[0].temp = t[1];
  da[0].mode = SG_ACCESS_READ;
  da[1].ptr = ext + 100;
  da[1].bytes = 64;
  da[1].mode = SG_ACCESS_WRITE;
  if (!st) st = sg_graph_declare_access(g, fill, &fa, 1);
  if (!st) st = sg_graph_declare_access(g, down, da, 2);
  size_t count = 0;
  char *dot = nullptr;
  if (!st) st = sg_graph_validate(g);
  if (!st) st = sg_graph_inferred_edge_count(g, &count);
  if (!st) st = sg_graph_to_dot(g, &dot);
  sg_free(dot);
  sg_exec_options o = host_options(2);
  if (!st) st = sg_exec_create(g, &o, &e);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_wait(e);
  if (!st) {
    OpArgs a{nullptr, ext, ext, 64, 7, 0};
    void *args[6] = {&a.dst, &a.src1, &a.src2, &a.count, &a.salt, &a.commute};
    size_t sizes[6] = {sizeof a.dst, sizeof a.src1, sizeof a.src2, 4, 4, 4};
    sg_kernel_desc k{};
    k.grid = k.block = sg_dim3{1, 1, 1};
    k.args = args;
    k.arg_sizes = sizes;
    k.arg_count = 6;
    k.host_twin = op_twin;
    st = sg_exec_set_kernel(e, nodes[0], &k);
  }
  sg_node extra{};
  if (!st) st = sg_graph_add_empty(g, "extra", nodes.data(), 1, &extra);
  if (!st) st = sg_exec_update(e, g);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_wait(e);
  if (e) sg_exec_destroy(e);
  if (g) sg_graph_destroy(g);
  return st;
}

void sweep(unsigned kinds) {
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    sg_fault_arm(kinds, nth);
    sg_status st = temps_scenario();
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    std::string site = sg_fault_site();
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth << " at " << site;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_GT(failures, 0);
      return;
    }
    failures++;
    EXPECT_NE(st, SG_OK) << "fault " << nth << " at " << site << " was swallowed";
    EXPECT_STRNE(sg_last_error(), "") << "fault " << nth << " at " << site;
  }
  FAIL() << "the scenario never ran to completion";
}

TEST(TempsHost, EveryAllocationFailureIsReported) { sweep(SG_FAULT_ALLOC); }
TEST(TempsHost, EveryThreadOrLockFailureIsReported) { sweep(SG_FAULT_SYSTEM); }

}  // namespace
