// The public plan API on real graphs: summary, per-node and per-stream
// inspection, DOT, ownership, error paths and fault injection.
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "plan_check.h"
#include "sg_test_util.h"

#include "plan_internal_shim.h"

extern "C" {
#include "exec/exec.h"  // sg__default_max_streams
}

namespace {

// Owns a plan made by sg_plan_create.
struct Plan {
  sg_plan *p = nullptr;
  ~Plan() {
    if (p) sg_plan_destroy(p);
  }
  operator sg_plan *() const { return p; }
};

// A diamond a -> {b, c} -> d plus an independent node e, named.
struct Diamond {
  sgtest::Graph g;
  sg_node a{}, b{}, c{}, d{}, e{};
  Diamond() {
    SG_EXPECT_OK(sg_graph_add_empty(g, "a", nullptr, 0, &a));
    SG_EXPECT_OK(sg_graph_add_empty(g, "b", &a, 1, &b));
    SG_EXPECT_OK(sg_graph_add_empty(g, "c", &a, 1, &c));
    sg_node bc[] = {b, c};
    SG_EXPECT_OK(sg_graph_add_empty(g, "d", bc, 2, &d));
    SG_EXPECT_OK(sg_graph_add_empty(g, "say \"e\"\\", nullptr, 0, &e));
    SG_EXPECT_OK(sg_graph_add_edge(g, a, d));  // transitive: no event for it
  }
};

TEST(PlanApi, SummaryNodesAndStreams) {
  sgtest::LeakCheck leaks;
  Diamond dm;
  Plan plan;
  SG_ASSERT_OK(sg_plan_create(dm.g, UINT_MAX, &plan.p));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.node_count, 5u);
  EXPECT_EQ(sum.edge_count, 5u);
  EXPECT_EQ(sum.reduced_edge_count, 4u);
  EXPECT_EQ(sum.stream_count, 3u);
  EXPECT_EQ(sum.width, 3u);
  EXPECT_TRUE(sum.width_exact);
  EXPECT_EQ(sum.event_count, 2u);
  EXPECT_EQ(sum.wait_count, 2u);
  EXPECT_EQ(sum.critical_path_nodes, 3u);
  EXPECT_EQ(sum.plan_critical_path_nodes, 3u);
  EXPECT_EQ(sum.chain_count, 3u);
  EXPECT_EQ(sum.max_streams, UINT_MAX);

  // node infos agree with the streams' lists
  size_t seen = 0;
  for (unsigned k = 0; k < sum.stream_count; k++) {
    size_t count = 0;
    SG_ASSERT_OK(sg_plan_get_stream(plan, k, nullptr, 0, &count));
    std::vector<sg_node> nodes(count);
    SG_ASSERT_OK(sg_plan_get_stream(plan, k, nodes.data(), nodes.size(), &count));
    for (size_t i = 0; i < count; i++) {
      sg_plan_node_info info;
      SG_ASSERT_OK(sg_plan_get_node(plan, nodes[i], &info));
      EXPECT_EQ(info.stream, k);
      EXPECT_EQ(info.position, i);
      seen++;
    }
  }
  EXPECT_EQ(seen, 5u);
  sg_plan_node_info a, d;
  SG_ASSERT_OK(sg_plan_get_node(plan, dm.a, &a));
  SG_ASSERT_OK(sg_plan_get_node(plan, dm.d, &d));
  EXPECT_EQ(a.records_event, 1);
  EXPECT_EQ(a.wait_count, 0u);
  EXPECT_EQ(d.wait_count, 1u);
  EXPECT_LT(a.order, d.order);
  // a partial fill still reports the full length
  size_t count = 0;
  sg_node one;
  SG_ASSERT_OK(sg_plan_get_stream(plan, a.stream, &one, 1, &count));
  EXPECT_GE(count, 1u);
}

TEST(PlanApi, PlanOutlivesItsGraph) {
  sgtest::LeakCheck leaks;
  Plan plan;
  sg_node a, d;
  {
    Diamond dm;
    a = dm.a;
    d = dm.d;
    SG_ASSERT_OK(sg_plan_create(dm.g, 0, &plan.p));
  }
  sg_plan_node_info info;
  SG_EXPECT_OK(sg_plan_get_node(plan, d, &info));
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  EXPECT_NE(std::strstr(dot, "label=\"a\\n"), nullptr) << dot;
  sg_free(dot);
  (void)a;
}

TEST(PlanApi, Dot) {
  sgtest::LeakCheck leaks;
  Diamond dm;
  Plan plan;
  SG_ASSERT_OK(sg_plan_create(dm.g, 0, &plan.p));
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  std::string text(dot);
  sg_free(dot);
  EXPECT_EQ(text.rfind("digraph plan {", 0), 0u);
  EXPECT_NE(text.find("subgraph cluster_s0"), std::string::npos);
  EXPECT_NE(text.find("subgraph cluster_s2"), std::string::npos);
  EXPECT_EQ(text.find("subgraph cluster_s3"), std::string::npos);
  EXPECT_NE(text.find("empty #0"), std::string::npos) << text;
  // two event edges, dashed and labelled; the shortcut a -> d is not drawn
  size_t dashed = 0;
  for (size_t at = 0; (at = text.find("style=dashed", at)) != std::string::npos; at++) dashed++;
  EXPECT_EQ(dashed, 2u) << text;
  EXPECT_NE(text.find("label=\"e0\""), std::string::npos);
  EXPECT_EQ(text.find("n0 -> n3"), std::string::npos) << text;
  // quotes and backslashes in names are escaped
  EXPECT_NE(text.find("say \\\"e\\\"\\\\"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(PlanApi, MergedStreamsShowStreamOrderInDot) {
  sgtest::Graph g;
  sg_node root;
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nullptr, 0, &root));
  for (int i = 0; i < 6; i++) SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, &root, 1, nullptr));
  Plan plan;
  SG_ASSERT_OK(sg_plan_create(g, 2, &plan.p));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.stream_count, 2u);
  EXPECT_EQ(sum.chain_count, 6u);
  EXPECT_EQ(sum.plan_critical_path_nodes, 4u);  // root + three leaves per stream
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  EXPECT_NE(std::strstr(dot, "style=dotted"), nullptr) << dot;
  EXPECT_NE(std::strstr(dot, "label=\"#1\\n"), nullptr) << dot;  // unnamed nodes by index
  sg_free(dot);
}

TEST(PlanApi, EmptyGraph) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  Plan plan;
  SG_ASSERT_OK(sg_plan_create(g, 0, &plan.p));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.node_count, 0u);
  EXPECT_EQ(sum.stream_count, 0u);
  EXPECT_EQ(sum.max_streams, sg__default_max_streams());
  size_t count;
  EXPECT_EQ(sg_plan_get_stream(plan, 0, nullptr, 0, &count), SG_ERR_INVALID_ARGUMENT);
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  sg_free(dot);
}

TEST(PlanApi, ErrorPaths) {
  sgtest::LeakCheck leaks;
  Diamond dm;
  sg_plan *p = nullptr;
  EXPECT_EQ(sg_plan_create(dm.g, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_create(nullptr, 0, &p), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(sg_plan_create(reinterpret_cast<sg_graph *>(&p), 0, &p), SG_ERR_INVALID_HANDLE);

  SG_ASSERT_OK(sg_plan_create(dm.g, 0, &p));
  sg_plan_summary sum;
  sg_plan_node_info info;
  size_t count;
  EXPECT_EQ(sg_plan_get_summary(nullptr, &sum), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_summary(p, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_node(p, dm.a, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_node(p, sg_node{}, &info), SG_ERR_INVALID_ARGUMENT);
  sgtest::Graph other;
  sg_node foreign;
  SG_ASSERT_OK(sg_graph_add_empty(other, "x", nullptr, 0, &foreign));
  EXPECT_EQ(sg_plan_get_node(p, foreign, &info), SG_ERR_FOREIGN_NODE);
  // a node added to the graph after planning is not in the plan
  sg_node late;
  SG_ASSERT_OK(sg_graph_add_empty(dm.g, "late", nullptr, 0, &late));
  EXPECT_EQ(sg_plan_get_node(p, late, &info), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "sg_plan_get_node"), nullptr) << sg_last_error();
  EXPECT_EQ(sg_plan_get_stream(p, 0, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_stream(p, 0, nullptr, 3, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_stream(p, 99, nullptr, 0, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_to_dot(p, nullptr), SG_ERR_INVALID_ARGUMENT);
  char *dot = reinterpret_cast<char *>(&count);
  EXPECT_EQ(sg_plan_to_dot(nullptr, &dot), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dot, nullptr);
  // a graph is not a plan
  EXPECT_EQ(sg_plan_get_summary(reinterpret_cast<sg_plan *>(dm.g.g), &sum),
            SG_ERR_INVALID_HANDLE);

  SG_ASSERT_OK(sg_plan_destroy(p));
  // destroyed: every entry point refuses it without touching it
  EXPECT_EQ(sg_plan_destroy(p), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_plan_get_summary(p, &sum), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_plan_get_node(p, dm.a, &info), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_plan_get_stream(p, 0, nullptr, 0, &count), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_plan_to_dot(p, &dot), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_plan_destroy(nullptr), SG_ERR_INVALID_ARGUMENT);
  sg_free(nullptr);
}

TEST(PlanApi, CycleIsNamed) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_node x, y, z;
  SG_ASSERT_OK(sg_graph_add_empty(g, "x", nullptr, 0, &x));
  SG_ASSERT_OK(sg_graph_add_empty(g, "y", &x, 1, &y));
  SG_ASSERT_OK(sg_graph_add_empty(g, "z", &y, 1, &z));
  SG_ASSERT_OK(sg_graph_add_edge(g, z, x));
  sg_plan *p = reinterpret_cast<sg_plan *>(&x);
  EXPECT_EQ(sg_plan_create(g, 0, &p), SG_ERR_CYCLE);
  EXPECT_EQ(p, nullptr);
  std::string msg = sg_last_error();
  EXPECT_EQ(msg.rfind("sg_plan_create", 0), 0u) << msg;
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'z'"), std::string::npos) << msg;
}

TEST(PlanApi, PlanOwnedByAnExecutableIsRefused) {
  sgtest::LeakCheck leaks;
  Diamond dm;
  // the route the executables take (sg__plan_build with owned_by_exec)
  sg_plan *owned = nullptr;
  SG_ASSERT_OK(plantest_build_owned(dm.g, &owned));
  EXPECT_EQ(sg_plan_destroy(owned), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "executable"), nullptr) << sg_last_error();
  sg_plan_summary sum;
  SG_EXPECT_OK(sg_plan_get_summary(owned, &sum));  // still alive and inspectable
  EXPECT_EQ(plantest_schedule_nodes(owned), 5u);
  plantest_free(owned);
  EXPECT_EQ(sg_plan_get_summary(owned, &sum), SG_ERR_INVALID_HANDLE);
  plantest_free(nullptr);
  EXPECT_EQ(plantest_schedule_nodes(nullptr), UINT32_MAX);
}

TEST(PlanApi, ExecutablePlanThroughThePublicApi) {
  sgtest::LeakCheck leaks;
  Diamond dm;
  sgtest::Exec exec;
  sg_exec_options o = sgtest::host_options(2);
  sg_status st = sg_exec_create(dm.g, &o, &exec.e);
  if (st == SG_ERR_BACKEND_UNAVAILABLE || st == SG_ERR_UNSUPPORTED) GTEST_SKIP() << sg_last_error();
  SG_ASSERT_OK(st);
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(exec, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.max_streams, 2u);
  EXPECT_EQ(sum.stream_count, 2u);
  EXPECT_EQ(sg_plan_destroy(const_cast<sg_plan *>(plan)), SG_ERR_INVALID_ARGUMENT);
}

// Fails each allocation of sg_plan_create and sg_plan_to_dot in turn.
// A deferred plan (an executable whose CUDA graph is built node by node)
// plans its streams and events when first inspected, and then answers
// exactly as a plan made in full; the graph may be gone by then.
TEST(PlanApi, DeferredPlanCompletesOnFirstInspection) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 20; round++) {
    sgtest::Graph g;
    std::vector<sg_node> nodes;
    uint32_t n = 5 + rng() % 60;
    for (uint32_t v = 0; v < n; v++) {
      std::vector<sg_node> deps;
      for (uint32_t k = 0, want = rng() % 4; k < want && v; k++) deps.push_back(nodes[rng() % v]);
      sg_node x{};
      SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, deps.data(), deps.size(), &x));
      nodes.push_back(x);
    }
    unsigned limit = 1 + rng() % 6;
    sg_plan *lazy = nullptr;
    Plan reference;
    SG_ASSERT_OK(sg_plan_create(g, limit, &reference.p));
    SG_ASSERT_OK(plantest_build_deferred(g, limit, &lazy));
    EXPECT_EQ(plantest_streams_planned(lazy), 0);
    sg_graph_destroy(g.g);
    g.g = nullptr;
    sg_plan_summary a, b;
    SG_ASSERT_OK(sg_plan_get_summary(reference, &a));
    SG_ASSERT_OK(sg_plan_get_summary(lazy, &b));
    EXPECT_EQ(plantest_streams_planned(lazy), 1);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << "round " << round;
    for (uint32_t v = 0; v < n; v++) {
      sg_plan_node_info x, y;
      SG_ASSERT_OK(sg_plan_get_node(reference, nodes[v], &x));
      SG_ASSERT_OK(sg_plan_get_node(lazy, nodes[v], &y));
      EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0) << "round " << round << " node " << v;
    }
    char *dot_a = nullptr, *dot_b = nullptr;
    SG_ASSERT_OK(sg_plan_to_dot(reference, &dot_a));
    SG_ASSERT_OK(sg_plan_to_dot(lazy, &dot_b));
    EXPECT_STREQ(dot_a, dot_b);
    sg_free(dot_a);
    sg_free(dot_b);
    plantest_free(lazy);
  }
}

// Completing a deferred plan when an allocation fails: the accessor says
// so, the plan stays deferred and usable, nothing leaks; a later call
// completes it.
TEST(PlanApi, DeferredPlanCompletionFaults) {
  Diamond dm;
  for (unsigned long nth = 1;; nth++) {
    ASSERT_LT(nth, 1000u);
    sg_plan *lazy = nullptr;
    SG_ASSERT_OK(plantest_build_deferred(dm.g, 2, &lazy));
    long live = sg_live_allocations();
    sg_plan_summary sum;
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = sg_plan_get_summary(lazy, &sum);
    bool fired = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    if (!fired) {
      SG_ASSERT_OK(st);
      EXPECT_EQ(sum.stream_count, 2u);
      plantest_free(lazy);
      break;
    }
    ASSERT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << nth;
    EXPECT_EQ(std::string(sg_last_error()).rfind("sg_plan_get_summary: ", 0), 0u) << sg_last_error();
    EXPECT_EQ(plantest_streams_planned(lazy), 0);
    ASSERT_EQ(sg_live_allocations(), live) << "leak after failing allocation " << nth;
    SG_ASSERT_OK(sg_plan_get_summary(lazy, &sum));
    EXPECT_EQ(sum.stream_count, 2u);
    plantest_free(lazy);
  }
}

TEST(PlanApi, FaultInjection) {
  Diamond dm;
  long live = sg_live_allocations();
  for (unsigned long nth = 1;; nth++) {
    ASSERT_LT(nth, 1000u);
    sg_plan *p = nullptr;
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = sg_plan_create(dm.g, 2, &p);
    bool fired = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    if (!fired) {
      SG_ASSERT_OK(st);
      SG_ASSERT_OK(sg_plan_destroy(p));
      break;
    }
    ASSERT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << nth << ": " << sg_last_error();
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(std::string(sg_last_error()).rfind("sg_plan_create: ", 0), 0u) << sg_last_error();
    ASSERT_EQ(sg_live_allocations(), live) << "leak after failing allocation " << nth;
  }
  Plan plan;
  SG_ASSERT_OK(sg_plan_create(dm.g, 2, &plan.p));
  live = sg_live_allocations();
  for (unsigned long nth = 1;; nth++) {
    ASSERT_LT(nth, 1000u);
    char *dot = nullptr;
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = sg_plan_to_dot(plan, &dot);
    bool fired = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    if (!fired) {
      SG_ASSERT_OK(st);
      sg_free(dot);
      break;
    }
    ASSERT_EQ(st, SG_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(dot, nullptr);
    ASSERT_EQ(sg_live_allocations(), live);
  }
}

}  // namespace
