// Declared buffer access: checking of declarations, the edges inferred from
// them (read after write, write after read, write after write, commutative
// writes left unordered) against an all-pairs reference on random graphs,
// their drawing in DOT, and the refusals (commutative reads, a node mixing
// commutative and plain access, explicit edges against creation order,
// temporaries bound without a declared access).
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "sg_test_util.h"

namespace {

using Edge = std::pair<uint32_t, uint32_t>;

struct Dot {
  std::set<Edge> solid, dashed;
};

// The edges sg_graph_to_dot draws, solid and dashed.
Dot dot_edges(sg_graph *g) {
  char *dot = nullptr;
  Dot out;
  EXPECT_EQ(sg_graph_to_dot(g, &dot), SG_OK) << sg_last_error();
  if (!dot) return out;
  for (const char *line = dot; *line;) {
    const char *end = std::strchr(line, '\n');
    std::string l(line, end ? (size_t)(end - line) : std::strlen(line));
    unsigned u, v;
    if (std::sscanf(l.c_str(), " n%u -> n%u", &u, &v) == 2)
      (l.find("dashed") != std::string::npos ? out.dashed : out.solid).insert({u, v});
    line = end ? end + 1 : line + l.size();
  }
  sg_free(dot);
  return out;
}

std::vector<std::vector<bool>> closure(uint32_t n, const std::set<Edge> &edges) {
  std::vector<std::vector<bool>> r(n, std::vector<bool>(n, false));
  for (auto &e : edges) r[e.first][e.second] = true;
  for (uint32_t k = 0; k < n; k++)
    for (uint32_t i = 0; i < n; i++)
      if (r[i][k])
        for (uint32_t j = 0; j < n; j++)
          if (r[k][j]) r[i][j] = true;
  return r;
}

sg_node add_empty(sg_graph *g, const char *name = nullptr) {
  sg_node n{};
  EXPECT_EQ(sg_graph_add_empty(g, name, nullptr, 0, &n), SG_OK) << sg_last_error();
  return n;
}

sg_access on(const void *p, size_t bytes, sg_access_mode mode, unsigned flags = 0) {
  sg_access a{};
  a.ptr = p;
  a.bytes = bytes;
  a.mode = mode;
  a.flags = flags;
  return a;
}

sg_access on_temp(sg_temp t, size_t offset, size_t bytes, sg_access_mode mode,
                  unsigned flags = 0) {
  sg_access a{};
  a.temp = t;
  a.offset = offset;
  a.bytes = bytes;
  a.mode = mode;
  a.flags = flags;
  return a;
}

// sg_access_temp names the whole temporary: the same as the access spelled
// out field by field.
TEST(Access, AccessTempIsTheWholeTemporary) {
  sgtest::Graph g;
  sg_temp_desc d = {256, 0, "t"};
  sg_temp t;
  SG_ASSERT_OK(sg_graph_add_temp(g, &d, &t));
  const sg_access a = sg_access_temp(t, SG_ACCESS_READ_WRITE);
  const sg_access want = on_temp(t, 0, 0, SG_ACCESS_READ_WRITE);
  EXPECT_EQ(a.ptr, nullptr);
  EXPECT_EQ(a.temp.opaque, want.temp.opaque);
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(a.bytes, 0u);
  EXPECT_EQ(a.mode, SG_ACCESS_READ_WRITE);
  EXPECT_EQ(a.flags, 0u);
  sg_node n = add_empty(g, "n");
  SG_ASSERT_OK(sg_graph_declare_access(g, n, &a, 1));
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_access_count(g, &count));
  EXPECT_EQ(count, 1u);
}

TEST(Access, ReadAfterWriteWriteAfterReadWriteAfterWrite) {
  sgtest::Graph g;
  static char x[64];
  sg_node a = add_empty(g, "a"), b = add_empty(g, "b"), c = add_empty(g, "c");
  sg_access w = on(x, 64, SG_ACCESS_WRITE), r = on(x + 16, 8, SG_ACCESS_READ);
  SG_ASSERT_OK(sg_graph_declare_access(g, a, &w, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, b, &r, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, c, &w, 1));
  SG_ASSERT_OK(sg_graph_validate(g));
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_edge_count(g, &count));
  EXPECT_EQ(count, 0u);  // explicit edges only
  SG_ASSERT_OK(sg_graph_inferred_edge_count(g, &count));
  EXPECT_EQ(count, 3u);  // a->b (RAW), b->c (WAR), a->c (WAW)
  Dot d = dot_edges(g);
  EXPECT_TRUE(d.solid.empty());
  EXPECT_EQ(d.dashed, (std::set<Edge>{{0, 1}, {1, 2}, {0, 2}}));
  // An explicit edge that duplicates an inferred one is drawn solid.
  SG_ASSERT_OK(sg_graph_add_edge(g, a, b));
  d = dot_edges(g);
  EXPECT_EQ(d.solid, (std::set<Edge>{{0, 1}}));
  EXPECT_EQ(d.dashed, (std::set<Edge>{{1, 2}, {0, 2}}));
}

TEST(Access, DisjointRangesAndReadsAreNotOrdered) {
  sgtest::Graph g;
  static char x[64];
  sg_node a = add_empty(g), b = add_empty(g), c = add_empty(g), e = add_empty(g);
  sg_access lo = on(x, 32, SG_ACCESS_WRITE), hi = on(x + 32, 32, SG_ACCESS_WRITE);
  sg_access r1 = on(x, 8, SG_ACCESS_READ);
  SG_ASSERT_OK(sg_graph_declare_access(g, a, &lo, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, b, &hi, 1));  // touching, not overlapping
  SG_ASSERT_OK(sg_graph_declare_access(g, c, &r1, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, e, &r1, 1));
  Dot d = dot_edges(g);
  EXPECT_EQ(d.dashed, (std::set<Edge>{{0, 2}, {0, 3}}));
}

TEST(Access, CommutativeWritesRunTogether) {
  sgtest::Graph g;
  static int acc[16];
  sg_node init = add_empty(g), c1 = add_empty(g), c2 = add_empty(g), rd = add_empty(g);
  sg_access w = on(acc, sizeof acc, SG_ACCESS_WRITE);
  sg_access add = on(acc, sizeof acc, SG_ACCESS_READ_WRITE, SG_ACCESS_COMMUTATIVE);
  sg_access r = on(acc, sizeof acc, SG_ACCESS_READ);
  SG_ASSERT_OK(sg_graph_declare_access(g, init, &w, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, c1, &add, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, c2, &add, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, rd, &r, 1));
  Dot d = dot_edges(g);
  EXPECT_EQ(d.dashed, (std::set<Edge>{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}}));
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 0, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.width, 2u);  // c1 and c2
  sg_plan_destroy(plan);
}

TEST(Access, DeclarationsAreChecked) {
  sgtest::Graph g, other;
  static char x[64];
  sg_node a = add_empty(g, "a");
  sg_temp t{}, foreign{};
  sg_temp_desc td{};
  td.bytes = 100;
  td.name = "scratch";
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t));
  SG_ASSERT_OK(sg_graph_add_temp(other, &td, &foreign));
  sg_access bad = on(x, 8, SG_ACCESS_READ, SG_ACCESS_COMMUTATIVE);
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "commutative read"), nullptr) << sg_last_error();
  bad = on(x, 8, (sg_access_mode)0);
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_INVALID_ARGUMENT);
  bad = on(nullptr, 8, SG_ACCESS_READ);
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_INVALID_ARGUMENT);
  bad = on((void *)~(uintptr_t)3, 8, SG_ACCESS_READ);  // wraps
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_INVALID_ARGUMENT);
  bad = on_temp(t, 90, 20, SG_ACCESS_WRITE);
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "outside temporary"), nullptr) << sg_last_error();
  bad = on_temp(foreign, 0, 0, SG_ACCESS_WRITE);
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_FOREIGN_NODE);
  bad = on_temp(sg_temp{a.opaque}, 0, 0, SG_ACCESS_WRITE);  // a node handle
  EXPECT_EQ(sg_graph_declare_access(g, a, &bad, 1), SG_ERR_INVALID_ARGUMENT);
  // All or nothing: a bad access after good ones declares none.
  sg_access two[2] = {on(x, 8, SG_ACCESS_WRITE), on(nullptr, 8, SG_ACCESS_READ)};
  EXPECT_EQ(sg_graph_declare_access(g, a, two, 2), SG_ERR_INVALID_ARGUMENT);
  size_t count = 99;
  SG_ASSERT_OK(sg_graph_access_count(g, &count));
  EXPECT_EQ(count, 0u);
  sg_access whole = on_temp(t, 10, 0, SG_ACCESS_WRITE);  // bytes 0: to the end
  SG_ASSERT_OK(sg_graph_declare_access(g, a, &whole, 1));
  SG_ASSERT_OK(sg_graph_temp_count(g, &count));
  EXPECT_EQ(count, 1u);
  td.alignment = 3;
  EXPECT_EQ(sg_graph_add_temp(g, &td, &t), SG_ERR_INVALID_ARGUMENT);
  td.alignment = 0;
  td.bytes = 0;
  EXPECT_EQ(sg_graph_add_temp(g, &td, &t), SG_ERR_INVALID_ARGUMENT);
}

TEST(Access, ANodeMixingCommutativeAndPlainAccessIsRefused) {
  sgtest::Graph g;
  static char x[64];
  sg_node a = add_empty(g, "mixer");
  sg_access both[2] = {on(x, 32, SG_ACCESS_WRITE, SG_ACCESS_COMMUTATIVE),
                       on(x + 16, 32, SG_ACCESS_READ)};
  SG_ASSERT_OK(sg_graph_declare_access(g, a, both, 2));
  EXPECT_EQ(sg_graph_validate(g), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "'mixer'"), nullptr) << sg_last_error();
  EXPECT_NE(std::strstr(sg_last_error(), "commutative"), nullptr) << sg_last_error();
  sg_exec *e = nullptr;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
}

TEST(Access, ExplicitEdgesAgainstCreationOrderNameTheMemory) {
  sgtest::Graph g;
  static char x[64];
  sg_node a = add_empty(g, "producer"), b = add_empty(g, "consumer");
  sg_access w = on(x, 64, SG_ACCESS_WRITE), r = on(x + 8, 8, SG_ACCESS_READ);
  SG_ASSERT_OK(sg_graph_declare_access(g, a, &w, 1));
  SG_ASSERT_OK(sg_graph_declare_access(g, b, &r, 1));
  SG_ASSERT_OK(sg_graph_add_edge(g, b, a));
  EXPECT_EQ(sg_graph_validate(g), SG_ERR_CYCLE);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("'producer'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'consumer'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("declared accesses"), std::string::npos) << msg;
  char range[64];
  std::snprintf(range, sizeof range, "%#llx", (unsigned long long)(uintptr_t)(x + 8));
  EXPECT_NE(msg.find(range), std::string::npos) << msg;
}

void twin_noop(const sg_kernel_launch *, void *const *) {}

TEST(Access, BindingsAreChecked) {
  sgtest::Graph g;
  sg_temp t{};
  sg_temp_desc td{};
  td.bytes = 256;
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t));
  void *p = nullptr;
  int small = 0;
  void *args[2] = {&p, &small};
  size_t sizes[2] = {sizeof p, sizeof small};
  sg_kernel_desc k{};
  k.grid = k.block = sg_dim3{1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = twin_noop;
  k.name = "k";
  sg_node kn{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, &kn));
  sg_node e = add_empty(g);
  EXPECT_EQ(sg_graph_bind_temp(g, kn, 1, t, 0), SG_ERR_INVALID_ARGUMENT);  // not pointer-sized
  EXPECT_EQ(sg_graph_bind_temp(g, kn, 2, t, 0), SG_ERR_INVALID_ARGUMENT);  // no such argument
  EXPECT_EQ(sg_graph_bind_temp(g, e, 0, t, 0), SG_ERR_INVALID_ARGUMENT);   // not a kernel
  EXPECT_EQ(sg_graph_bind_temp(g, kn, 0, t, 256), SG_ERR_INVALID_ARGUMENT);  // past the end
  SG_ASSERT_OK(sg_graph_bind_temp(g, kn, 0, t, 0));
  EXPECT_EQ(sg_graph_validate(g), SG_ERR_INVALID_ARGUMENT);  // no declared access
  EXPECT_NE(std::strstr(sg_last_error(), "declares no access"), nullptr) << sg_last_error();
  sg_access w = on_temp(t, 0, 0, SG_ACCESS_WRITE);
  SG_ASSERT_OK(sg_graph_declare_access(g, kn, &w, 1));
  SG_ASSERT_OK(sg_graph_validate(g));
}

// Random graphs with random explicit edges and random declared accesses
// (partial ranges of a few buffers and temporaries, every mode, some
// commutative writes): the order the library infers, with the explicit
// edges, has the same reachability as every conflicting pair of nodes
// ordered by creation, computed here pair by pair.
TEST(Access, InferredOrderEqualsAllPairsReference) {
  uint32_t base = std::random_device{}();
  std::printf("Access.InferredOrderEqualsAllPairsReference: seeds from %u\n", base);
  static char buf[3][64];
  for (uint32_t i = 0; i < 400; i++) {
    uint32_t seed = base + i;
    std::mt19937 rng(seed);
    sgtest::Graph g;
    std::vector<sg_temp> temps(1 + rng() % 3);
    for (auto &t : temps) {
      sg_temp_desc td{};
      td.bytes = 64;
      SG_ASSERT_OK(sg_graph_add_temp(g, &td, &t));
    }
    struct Acc {
      uint32_t node, space, lo, hi;
      bool write, commute;
    };
    std::vector<Acc> all;
    std::set<Edge> explicit_edges;
    uint32_t n = 2 + rng() % 30;
    std::vector<sg_node> nodes;
    for (uint32_t v = 0; v < n; v++) {
      std::vector<sg_node> deps;
      for (uint32_t u = 0; u < v; u++)
        if (rng() % 12 == 0) {
          deps.push_back(nodes[u]);
          explicit_edges.insert({u, v});
        }
      sg_node node{};
      SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, deps.data(), deps.size(), &node));
      nodes.push_back(node);
      uint32_t k = rng() % 4;
      std::vector<sg_access> decl;
      bool commute_space[6] = {};
      for (int s = 0; s < 6; s++) commute_space[s] = rng() % 5 == 0;
      for (uint32_t j = 0; j < k; j++) {
        uint32_t space = rng() % (3 + temps.size());
        uint32_t lo = rng() % 64, hi = lo + 1 + rng() % (64 - lo);
        bool commute = commute_space[space];
        int m = commute ? (rng() % 2 ? SG_ACCESS_WRITE : SG_ACCESS_READ_WRITE) : 1 + rng() % 3;
        sg_access a = space < 3 ? on(buf[space] + lo, hi - lo, (sg_access_mode)m)
                                : on_temp(temps[space - 3], lo, hi - lo, (sg_access_mode)m);
        if (commute) a.flags = SG_ACCESS_COMMUTATIVE;
        decl.push_back(a);
        all.push_back({v, space, lo, hi, (m & SG_ACCESS_WRITE) != 0, commute});
      }
      SG_ASSERT_OK(sg_graph_declare_access(g, node, decl.data(), decl.size()));
    }
    ASSERT_EQ(sg_graph_validate(g), SG_OK) << "seed " << seed << ": " << sg_last_error();
    std::set<Edge> ref = explicit_edges;
    for (auto &a : all)
      for (auto &b : all)
        if (a.node < b.node && a.space == b.space && a.lo < b.hi && b.lo < a.hi &&
            (a.write || b.write) && !(a.commute && b.commute))
          ref.insert({a.node, b.node});
    Dot d = dot_edges(g);
    ASSERT_EQ(d.solid, explicit_edges) << "seed " << seed;
    std::set<Edge> got = d.solid;
    got.insert(d.dashed.begin(), d.dashed.end());
    for (auto &e : d.dashed) ASSERT_EQ(explicit_edges.count(e), 0u) << "seed " << seed;
    ASSERT_EQ(closure(n, got), closure(n, ref)) << "seed " << seed;
  }
}

}  // namespace

namespace {

// A caller compiled against a newer sg_access (a field this library does
// not know, left zero) declares through the element size it passes.
TEST(Access, NewerAccessLayoutsAreReadElementByElement) {
  sgtest::Graph g;
  static char x[64];
  sg_node a{}, b{};
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nullptr, 0, &b));
  struct Newer {
    sg_access known;
    uint64_t extra;
  } v[2] = {};
  v[0].known.ptr = x;
  v[0].known.bytes = 64;
  v[0].known.mode = SG_ACCESS_WRITE;
  v[1].known = v[0].known;
  v[1].known.mode = SG_ACCESS_READ;
  SG_ASSERT_OK(sg_graph_declare_access_sized(g, a, &v[0].known, 1, sizeof(Newer)));
  SG_ASSERT_OK(sg_graph_declare_access_sized(g, b, &v[1].known, 1, sizeof(Newer)));
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_inferred_edge_count(g, &count));
  EXPECT_EQ(count, 1u);
  v[0].extra = 1;  // a field this library cannot honour
  EXPECT_EQ(sg_graph_declare_access_sized(g, a, &v[0].known, 2, sizeof(Newer)),
            SG_ERR_UNSUPPORTED);
  EXPECT_EQ(sg_graph_declare_access_sized(g, a, &v[0].known, 1, 8), SG_ERR_INVALID_ARGUMENT);
  SG_ASSERT_OK(sg_graph_access_count(g, &count));
  EXPECT_EQ(count, 2u);
}

}  // namespace
