// Building graphs: nodes, edges, names, handles, edits.
#include <cstring>
#include <string>

#include "sg_test_util.h"

namespace {

int noop(void *) { return 0; }

sg_node add_host(sg_graph *g, const char *name, std::initializer_list<sg_node> deps = {}) {
  sg_host_desc d = {noop, nullptr, name};
  sg_node n{};
  EXPECT_EQ(sg_graph_add_host(g, &d, deps.begin(), deps.size(), &n), SG_OK) << sg_last_error();
  return n;
}

}  // namespace

TEST(GraphBuild, NodesAreNumberedInOrderOfCreation) {
  sgtest::Graph g;
  sg_node a = add_host(g, "a");
  sg_node b = add_host(g, "b", {a});
  sg_node c{};
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, &b, 1, &c));
  EXPECT_EQ(sg_node_index(a), 0u);
  EXPECT_EQ(sg_node_index(b), 1u);
  EXPECT_EQ(sg_node_index(c), 2u);
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 3u);
  SG_ASSERT_OK(sg_graph_edge_count(g, &count));
  EXPECT_EQ(count, 2u);
  sg_node again{};
  SG_ASSERT_OK(sg_graph_node_at(g, 1, &again));
  EXPECT_EQ(again.opaque, b.opaque);
  EXPECT_EQ(sg_graph_node_at(g, 3, &again), SG_ERR_INVALID_ARGUMENT);
}

TEST(GraphBuild, NamesAreCopied) {
  sgtest::Graph g;
  char name[] = "first";
  sg_node a = add_host(g, name);
  std::strcpy(name, "xxxxx");
  const char *stored = nullptr;
  SG_ASSERT_OK(sg_graph_node_name(g, a, &stored));
  EXPECT_STREQ(stored, "first");
  sg_node b = add_host(g, nullptr);
  SG_ASSERT_OK(sg_graph_node_name(g, b, &stored));
  EXPECT_EQ(stored, nullptr);
}

TEST(GraphBuild, OutNodeIsOptional) {
  sgtest::Graph g;
  sg_host_desc d = {noop, nullptr, "x"};
  SG_ASSERT_OK(sg_graph_add_host(g, &d, nullptr, 0, nullptr));
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 1u);
}

TEST(GraphBuild, DuplicateEdgesAreStoredOnce) {
  sgtest::Graph g;
  sg_node a = add_host(g, "a");
  sg_node deps[] = {a, a, a};
  sg_node b{};
  sg_host_desc d = {noop, nullptr, "b"};
  SG_ASSERT_OK(sg_graph_add_host(g, &d, deps, 3, &b));
  SG_ASSERT_OK(sg_graph_add_edge(g, a, b));
  SG_ASSERT_OK(sg_graph_add_edge(g, a, b));
  size_t edges = 0;
  SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
  EXPECT_EQ(edges, 1u);
}

// Dependency lists longer than the pairwise check (32) are deduplicated by
// sorting a copy; edges added later between existing nodes still find them.
TEST(GraphBuild, LongDependencyListsWithDuplicatesAreStoredOnce) {
  sgtest::Graph g;
  std::vector<sg_node> sources;
  for (int i = 0; i < 50; i++) sources.push_back(add_host(g, nullptr));
  std::vector<sg_node> deps;
  for (int i = 0; i < 120; i++) deps.push_back(sources[(i * 7) % 50]); // every source, repeated
  sg_node sink{};
  sg_host_desc d = {noop, nullptr, "sink"};
  SG_ASSERT_OK(sg_graph_add_host(g, &d, deps.data(), deps.size(), &sink));
  size_t edges = 0;
  SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
  EXPECT_EQ(edges, 50u);
  for (sg_node s : sources) SG_ASSERT_OK(sg_graph_add_edge(g, s, sink));
  SG_ASSERT_OK(sg_graph_add_edge(g, sources[0], sources[1]));
  SG_ASSERT_OK(sg_graph_add_edge(g, sources[0], sources[1]));
  SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
  EXPECT_EQ(edges, 51u);
  // A node added after the index exists is indexed too.
  sg_node after{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "after", &sink, 1, &after));
  SG_ASSERT_OK(sg_graph_add_edge(g, sink, after));
  SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
  EXPECT_EQ(edges, 52u);
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 0, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.edge_count, 52u);
  EXPECT_EQ(sum.reduced_edge_count, 51u); // sources[0] -> sink is implied via sources[1]
  SG_ASSERT_OK(sg_plan_destroy(plan));
}

// Every allocation of graph building failing in turn (the sort of a long
// dependency list, the index built by the first sg_graph_add_edge, array
// growth): the call fails cleanly, the graph keeps what it had, nothing leaks.
TEST(GraphBuild, EveryAllocationFailureWhileAddingEdges) {
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 1000; nth++) {
    sg_graph *g = nullptr;
    SG_ASSERT_OK(sg_graph_create(&g));
    std::vector<sg_node> nodes;
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = SG_OK;
    for (int i = 0; i < 40 && !st; i++) {
      sg_node n{};
      st = sg_graph_add_empty(g, nullptr, nodes.data(), nodes.size(), &n);
      if (!st) nodes.push_back(n);
    }
    for (size_t i = 0; i + 1 < nodes.size() && !st; i++)
      st = sg_graph_add_edge(g, nodes[i], nodes[i + 1]);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    size_t count = 0, edges = 0;
    SG_ASSERT_OK(sg_graph_node_count(g, &count));
    SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
    EXPECT_EQ(count, nodes.size()) << "fault " << nth;
    EXPECT_EQ(edges, count * (count - 1) / 2) << "fault " << nth; // every earlier node, once
    SG_EXPECT_OK(sg_graph_validate(g));
    SG_ASSERT_OK(sg_graph_destroy(g));
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_GT(failures, 0);
      return;
    }
    failures++;
    EXPECT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "fault " << nth;
  }
  FAIL() << "the scenario never ran to completion";
}

TEST(GraphBuild, ManyNodesAndEdges) {
  sgtest::Graph g;
  std::vector<sg_node> nodes;
  for (int i = 0; i < 5000; i++) {
    sg_node n{};
    SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nodes.empty() ? nullptr : &nodes.back(),
                                    nodes.empty() ? 0 : 1, &n));
    nodes.push_back(n);
  }
  for (int i = 0; i + 7 < 5000; i += 3) SG_ASSERT_OK(sg_graph_add_edge(g, nodes[i], nodes[i + 7]));
  size_t edges = 0;
  SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
  EXPECT_EQ(edges, 4999u + 1665u);
  SG_EXPECT_OK(sg_graph_validate(g));
}

TEST(GraphBuild, DestroyedGraphIsAnInvalidHandle) {
  sg_graph *g = nullptr;
  SG_ASSERT_OK(sg_graph_create(&g));
  add_host(g, "a");
  SG_ASSERT_OK(sg_graph_destroy(g));
  size_t count;
  EXPECT_EQ(sg_graph_node_count(g, &count), SG_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(sg_last_error()).find("not a live handle"), std::string::npos);
  EXPECT_EQ(sg_graph_destroy(g), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_graph_destroy(nullptr), SG_ERR_INVALID_ARGUMENT);
}

TEST(GraphBuild, EditingAParameterKeepsTheTopology) {
  sgtest::Graph g;
  sg_node a = add_host(g, "a");
  sg_node b = add_host(g, "b", {a});
  int value = 0;
  sg_host_desc d = {noop, &value, nullptr};
  SG_ASSERT_OK(sg_graph_set_host(g, b, &d));
  const char *name = nullptr;
  SG_ASSERT_OK(sg_graph_node_name(g, b, &name));
  EXPECT_STREQ(name, "b") << "an edit without a name keeps the old one";
  size_t edges = 0;
  SG_ASSERT_OK(sg_graph_edge_count(g, &edges));
  EXPECT_EQ(edges, 1u);
}

TEST(GraphBuild, EditingWithTheWrongKindIsRefused) {
  sgtest::Graph g;
  sg_node a = add_host(g, "a");
  uint32_t buf[4];
  sg_memset_desc m = {buf, 0, 4, 4, nullptr};
  EXPECT_EQ(sg_graph_set_memset(g, a, &m), SG_ERR_INVALID_ARGUMENT);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("'a' (#0) is a host node, not a memset node"), std::string::npos) << msg;
}

TEST(GraphBuild, ZeroNodeHandleIsRefused) {
  sgtest::Graph g;
  sg_node a = add_host(g, "a");
  sg_node none{};
  EXPECT_EQ(sg_graph_add_edge(g, none, a), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("zero handle"), std::string::npos);
}

TEST(GraphBuild, StreamFunctionReleaseRunsOnceWhenTheLastHolderGoes) {
  static int released = 0;
  released = 0;
  sg_stream_fn_desc d = {};
  d.host_twin = noop;
  d.release = [](void *) { released++; };
  d.name = "sfn";
  sg_graph *g = nullptr;
  SG_ASSERT_OK(sg_graph_create(&g));
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  SG_ASSERT_OK(sg_graph_destroy(g));
  EXPECT_EQ(released, 0) << "the executable still holds the node";
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_EQ(released, 1);
}
