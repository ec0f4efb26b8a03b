// Every validation case of the graph builder: its own status, and a message
// that says what was wrong and where.
#include <string>
#include <vector>

#include "sg_test_util.h"

namespace {

int noop(void *) { return 0; }
void twin(const sg_kernel_launch *, void *const *) {}

class Validation : public ::testing::Test {
 protected:
  void SetUp() override {
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 4096, &dev));
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 4096, &dev2));
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_HOST_PINNED, 0, 4096, &pinned));
  }
  void TearDown() override {
    sg_mem_free(dev);
    sg_mem_free(dev2);
    sg_mem_free(pinned);
  }
  // Expects `st` and a message containing every fragment.
  static void expect(sg_status st, sg_status want, std::initializer_list<const char *> fragments) {
    EXPECT_EQ(st, want) << sg_status_name(st) << ": " << sg_last_error();
    std::string msg = sg_last_error();
    for (const char *f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
  sg_kernel_desc kernel(const char *name = "k") {
    sg_kernel_desc k = {};
    k.host_twin = twin;
    k.grid = {1, 1, 1};
    k.block = {32, 1, 1};
    k.name = name;
    return k;
  }
  sgtest::Graph g;
  void *dev = nullptr, *dev2 = nullptr, *pinned = nullptr;
  std::vector<char> pageable = std::vector<char>(4096);
};

TEST_F(Validation, NullHandlesAndPointers) {
  sg_copy_desc c = {dev, pageable.data(), 16, SG_COPY_AUTO, "c"};
  expect(sg_graph_add_copy(nullptr, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"sg_graph_add_copy", "graph is NULL"});
  expect(sg_graph_add_copy(g, nullptr, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"descriptor is NULL"});
  c.dst = nullptr;
  expect(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"'c'", "dst is NULL"});
  c.dst = dev;
  c.src = nullptr;
  expect(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"src is NULL"});
  sg_host_desc h = {nullptr, nullptr, "h"};
  expect(sg_graph_add_host(g, &h, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"'h'", "fn is NULL"});
  sg_memset_desc m = {nullptr, 0, 1, 4, "m"};
  expect(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"dst is NULL"});
  expect(sg_graph_add_empty(g, "e", nullptr, 2, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"dep_count is 2 but deps is NULL"});
  sg_stream_fn_desc s = {};
  s.name = "s";
  expect(sg_graph_add_stream_fn(g, &s, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"neither fn nor host_twin"});
  size_t count;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 0u) << "refused nodes never enter the graph";
}

TEST_F(Validation, ZeroSizes) {
  sg_copy_desc c = {dev, pageable.data(), 0, SG_COPY_AUTO, "c"};
  expect(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"bytes is 0"});
  sg_memset_desc m = {dev, 0, 1, 0, "m"};
  expect(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"count is 0"});
}

TEST_F(Validation, CopyDirectionMustMatchThePointers) {
  char *host = pageable.data();
  struct Case {
    void *dst;
    const void *src;
    sg_copy_kind kind;
    const char *fragment;
  } cases[] = {
      {host, host + 2048, SG_COPY_HOST_TO_DEVICE, "destination"},
      {dev, dev2, SG_COPY_HOST_TO_DEVICE, "source"},
      {host, host + 2048, SG_COPY_DEVICE_TO_HOST, "source"},
      {dev, dev2, SG_COPY_DEVICE_TO_HOST, "destination"},
      {dev, host, SG_COPY_DEVICE_TO_DEVICE, "source"},
      {host, dev, SG_COPY_DEVICE_TO_DEVICE, "destination"},
      {dev, host, SG_COPY_HOST_TO_HOST, "destination"},
      {pinned, dev, SG_COPY_HOST_TO_HOST, "source"},
  };
  for (const Case &k : cases) {
    sg_copy_desc c = {k.dst, k.src, 16, k.kind, "bad"};
    expect(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_COPY,
           {"'bad'", k.fragment});
  }
  // The same pointers in the right direction are fine, and AUTO infers it.
  sg_copy_desc ok[] = {{dev, host, 16, SG_COPY_HOST_TO_DEVICE, nullptr},
                       {host, dev, 16, SG_COPY_DEVICE_TO_HOST, nullptr},
                       {dev, dev2, 16, SG_COPY_DEVICE_TO_DEVICE, nullptr},
                       {pinned, host, 16, SG_COPY_HOST_TO_HOST, nullptr},
                       {dev, pinned, 16, SG_COPY_AUTO, nullptr}};
  for (auto &c : ok) SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
}

TEST_F(Validation, OverlappingCopyIsRefused) {
  char *host = pageable.data();
  sg_copy_desc c = {host + 8, host, 16, SG_COPY_HOST_TO_HOST, "overlap"};
  expect(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_COPY, {"overlap"});
  sg_copy_desc k = {pageable.data() + 100, pageable.data(), 16, (sg_copy_kind)9, "kind"};
  expect(sg_graph_add_copy(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"copy kind 9"});
}

TEST_F(Validation, KernelLaunchShapes) {
  struct Case {
    sg_dim3 grid, block;
    size_t shared;
    const char *fragment;
  } cases[] = {
      {{0, 1, 1}, {32, 1, 1}, 0, "grid (0,1,1) has a zero dimension"},
      {{1, 0, 1}, {32, 1, 1}, 0, "zero dimension"},
      {{1, 1, 1}, {0, 1, 1}, 0, "block (0,1,1) has a zero dimension"},
      {{1, 1, 1}, {32, 1, 0}, 0, "zero dimension"},
      {{1, 1, 1}, {1025, 1, 1}, 0, "1025 threads"},
      {{1, 1, 1}, {32, 32, 2}, 0, "2048 threads"},
      {{1, 1, 1}, {1, 1, 65}, 0, "block.z"},
      {{1, 65536, 1}, {32, 1, 1}, 0, "grid (1,65536,1) too large"},
      {{1, 1, 65536}, {32, 1, 1}, 0, "too large"},
      {{0x80000000u, 1, 1}, {32, 1, 1}, 0, "too large"},
      {{1, 1, 1}, {32, 1, 1}, SG_MAX_SHARED_BYTES + 1, "dynamic shared memory"},
  };
  for (const Case &c : cases) {
    sg_kernel_desc k = kernel("shape");
    k.grid = c.grid;
    k.block = c.block;
    k.shared_bytes = c.shared;
    expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_LAUNCH,
           {"'shape'", c.fragment});
  }
  sg_kernel_desc edge = kernel("edge");
  edge.grid = {0x7fffffffu, 65535, 65535};
  edge.block = {1024, 1, 1};
  edge.shared_bytes = SG_MAX_SHARED_BYTES;
  SG_EXPECT_OK(sg_graph_add_kernel(g, &edge, nullptr, 0, nullptr));
}

TEST_F(Validation, KernelArguments) {
  std::vector<uint64_t> values(SG_MAX_KERNEL_ARGS + 1, 7);
  std::vector<void *> ptrs;
  for (auto &v : values) ptrs.push_back(&v);
  std::vector<size_t> sizes(values.size(), sizeof(uint64_t));
  sg_kernel_desc k = kernel("args");
  k.args = ptrs.data();
  k.arg_sizes = sizes.data();
  k.arg_count = SG_MAX_KERNEL_ARGS + 1;
  expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_KERNEL_ARGS,
         {"'args'", "65 arguments; at most 64"});
  k.arg_count = SG_MAX_KERNEL_ARGS;
  SG_EXPECT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));

  std::vector<char> big(SG_MAX_KERNEL_ARG_BYTES + 1);
  void *big_ptr = big.data();
  size_t big_size = big.size();
  k.args = &big_ptr;
  k.arg_sizes = &big_size;
  k.arg_count = 1;
  expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_KERNEL_ARGS,
         {"more than 4096 bytes", "argument 0 is 4097 bytes"});
  void *two[] = {big.data(), big.data()};
  size_t halves[] = {3000, 3000};
  k.args = two;
  k.arg_sizes = halves;
  k.arg_count = 2;
  expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_KERNEL_ARGS,
         {"argument 1 is 3000 bytes"});
  size_t zero = 0;
  k.arg_sizes = &zero;
  k.arg_count = 1;
  expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_KERNEL_ARGS,
         {"argument 0 has size 0"});
  k.args = nullptr;
  expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"args or arg_sizes is NULL"});
  void *null_arg = nullptr;
  size_t eight = 8;
  k.args = &null_arg;
  k.arg_sizes = &eight;
  expect(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"args[0] is NULL"});
  sg_kernel_desc none = kernel("none");
  none.host_twin = nullptr;
  expect(sg_graph_add_kernel(g, &none, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"neither func nor host_twin"});
}

TEST_F(Validation, KernelArgumentsAreCapturedByValue) {
  static uint64_t seen = 0;
  uint64_t value = 41;
  void *ptr = &value;
  size_t size = sizeof value;
  sg_kernel_desc k = kernel("capture");
  k.host_twin = [](const sg_kernel_launch *, void *const *args) { seen = *(uint64_t *)args[0]; };
  k.args = &ptr;
  k.arg_sizes = &size;
  k.arg_count = 1;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));
  value = 99;  // changing the caller's storage afterwards changes nothing
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(seen, 41u);
}

TEST_F(Validation, MemsetParameters) {
  sg_memset_desc m = {dev, 0, 3, 4, "m"};
  expect(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"element_size 3"});
  m.element_size = 1;
  m.value = 256;
  expect(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"value 0x100 does not fit in 1 byte"});
  m.element_size = 2;
  m.value = 0x10000;
  expect(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"does not fit"});
  m.element_size = 4;
  m.value = 0xffffffffu;
  m.dst = static_cast<char *>(dev) + 2;
  expect(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"not aligned to element_size 4"});
  m.dst = dev;
  SG_EXPECT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
}

TEST_F(Validation, OverlongNameIsRefused) {
  std::string name(SG_MAX_NAME_BYTES + 1, 'n');
  sg_host_desc h = {noop, nullptr, name.c_str()};
  expect(sg_graph_add_host(g, &h, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT,
         {"name longer than 255 bytes"});
  name.pop_back();
  h.name = name.c_str();
  SG_EXPECT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
}

TEST_F(Validation, NodeFromAnotherGraph) {
  sgtest::Graph other;
  sg_host_desc h = {noop, nullptr, "theirs"};
  sg_node theirs{}, mine{};
  SG_ASSERT_OK(sg_graph_add_host(other, &h, nullptr, 0, &theirs));
  h.name = "mine";
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &mine));
  expect(sg_graph_add_host(g, &h, &theirs, 1, nullptr), SG_ERR_FOREIGN_NODE,
         {"deps[0]", "another graph"});
  expect(sg_graph_add_edge(g, theirs, mine), SG_ERR_FOREIGN_NODE, {"from", "another graph"});
  expect(sg_graph_add_edge(g, mine, theirs), SG_ERR_FOREIGN_NODE, {"to", "another graph"});
  expect(sg_graph_set_host(g, theirs, &h), SG_ERR_FOREIGN_NODE, {"another graph"});
  sg_node fake = mine;
  fake.opaque += 5;  // same graph, an index that does not exist
  expect(sg_graph_add_edge(g, mine, fake), SG_ERR_INVALID_ARGUMENT, {"out of range"});
}

TEST_F(Validation, SelfEdge) {
  sg_host_desc h = {noop, nullptr, "loop"};
  sg_node a{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &a));
  expect(sg_graph_add_edge(g, a, a), SG_ERR_SELF_EDGE, {"'loop' (#0) to itself"});
}

TEST_F(Validation, CycleIsReportedWithItsNodes) {
  sg_host_desc h = {noop, nullptr, nullptr};
  sg_node n[5];
  const char *names[] = {"start", "alpha", "beta", "gamma", "tail"};
  for (int i = 0; i < 5; i++) {
    h.name = names[i];
    SG_ASSERT_OK(sg_graph_add_host(g, &h, i ? &n[i - 1] : nullptr, i ? 1 : 0, &n[i]));
  }
  SG_ASSERT_OK(sg_graph_add_edge(g, n[3], n[1]));  // alpha -> beta -> gamma -> alpha
  expect(sg_graph_validate(g), SG_ERR_CYCLE,
         {"sg_graph_validate", "cycle of 3 nodes", "'alpha' (#1)", "'beta' (#2)", "'gamma' (#3)"});
  std::string msg = sg_last_error();
  EXPECT_EQ(msg.find("start"), std::string::npos) << "only the cycle's nodes: " << msg;
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  expect(sg_exec_create(g, &o, &e), SG_ERR_CYCLE, {"sg_exec_create", "'beta' (#2)"});
  EXPECT_EQ(e, nullptr);
}

TEST_F(Validation, CycleWithUnnamedNodes) {
  sg_node a{}, b{};
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, &a, 1, &b));
  SG_ASSERT_OK(sg_graph_add_edge(g, b, a));
  expect(sg_graph_validate(g), SG_ERR_CYCLE, {"#0 -> #1 -> #0"});
}

}  // namespace
