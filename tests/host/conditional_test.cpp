// Conditional nodes (streamgraph/conditional.h) on the host backend: the
// builder's refusals one by one, IF/ELSE, WHILE and SWITCH semantics,
// conditions kept or reset between launches, and random DAGs with nested
// conditional nodes and data-dependent loops against a CPU reference that
// interprets the same description serially.
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/cond_device.h"
#include "streamgraph/kernels.h"

namespace {

// ---- a node's work, shared by the library's run and the reference --------

struct Spec {
  enum Op { MIX, DECIDE, STEP } op = MIX;
  uint32_t dst = 0;
  std::vector<uint32_t> in;
  uint32_t salt = 0;
  sg_cond_kind kind = SG_COND_IF;
  unsigned bodies = 1;
  uint32_t counter = 0;     // WHILE: the slot counting iterations left
  uint32_t cond_index = 0;  // the condition it sets (DECIDE, STEP)
  sg_cond cond = {0};
  bool may_skip = false;    // DECIDE of IF/SWITCH: sometimes leaves the condition as it is
  uint32_t *mem = nullptr;  // the library run's memory
  std::atomic<int> *set_failures = nullptr;
};

void compute(const Spec &s, uint32_t *mem, const std::function<void(unsigned)> &set) {
  // The slot's own last value goes in too, so that each launch and each
  // loop iteration computes something new.
  uint32_t v = sg_kernels_mix(s.salt * 0x01000193u, mem[s.dst], s.salt);
  for (uint32_t i : s.in) v = sg_kernels_mix(v, mem[i], s.salt);
  mem[s.dst] = v;
  switch (s.op) {
    case Spec::MIX:
      break;
    case Spec::DECIDE:
      if (s.kind == SG_COND_WHILE) {
        mem[s.counter] = (v >> 3) % 4;  // 0..3 iterations, from the data
        set(mem[s.counter] != 0);
      } else if (s.may_skip && (v >> 7) % 5 == 0) {
        // the condition keeps its value (the default, or the last launch's)
      } else if (s.kind == SG_COND_IF) {
        set((v >> 3) & 1u);
      } else {
        set((v >> 3) % (s.bodies + 1));  // bodies: none when == bodies
      }
      break;
    case Spec::STEP:
      if (mem[s.counter]) mem[s.counter]--;
      set(mem[s.counter] != 0);
      break;
  }
}

void spec_twin(const sg_kernel_launch *, void *const *args) {
  const Spec *s = *static_cast<Spec *const *>(args[0]);
  const sg_cond_ref ref = *static_cast<const sg_cond_ref *>(args[1]);
  compute(*s, s->mem, [&](unsigned x) { sg_cond_set(ref, x); });
}

int spec_host(void *p) {
  const Spec *s = static_cast<const Spec *>(p);
  compute(*s, s->mem, [&](unsigned x) {
    if (sg_cond_set_host(s->cond, x) != SG_OK) s->set_failures->fetch_add(1);
  });
  return 0;
}

// ---- a description of the graph, for the reference -----------------------

struct RGraph;
struct RNode {
  Spec *spec = nullptr;  // an ordinary node
  bool is_cond = false;
  sg_cond_kind kind = SG_COND_IF;
  uint32_t cond_index = 0;
  std::vector<RGraph> bodies;
};
struct RGraph {
  std::vector<RNode> nodes;  // index order is a topological order
};

struct Builder {
  std::mt19937 rng;
  sg_graph *root = nullptr;
  uint32_t slots = 0;
  std::vector<std::unique_ptr<Spec>> specs;
  std::vector<unsigned> defaults, flags;
  std::vector<sg_cond> conds;
  std::atomic<int> set_failures{0};
  unsigned cond_nodes = 0, while_nodes = 0;
  explicit Builder(uint32_t seed) : rng(seed) {}

  Spec *new_spec(Spec::Op op, std::vector<uint32_t> in) {
    specs.emplace_back(new Spec);
    Spec *s = specs.back().get();
    s->op = op;
    s->dst = slots++;
    s->in = std::move(in);
    s->salt = rng();
    s->set_failures = &set_failures;
    return s;
  }

  // Adds `s` to `g` as a kernel (its host twin; bound to its condition
  // when it sets one) or as a host node.
  sg_status add(sg_graph *g, Spec *s, const std::vector<sg_node> &deps, sg_node *out) {
    if (rng() % 3 == 0) {
      sg_host_desc h = {spec_host, s, nullptr};
      return sg_graph_add_host(g, &h, deps.data(), deps.size(), out);
    }
    static const sg_cond_ref placeholder = {0, nullptr};
    Spec *ptr = s;
    void *args[2] = {&ptr, const_cast<sg_cond_ref *>(&placeholder)};
    size_t sizes[2] = {sizeof ptr, sizeof placeholder};
    sg_kernel_desc k = {};
    k.grid = {1, 1, 1};
    k.block = {1, 1, 1};
    k.args = args;
    k.arg_sizes = sizes;
    k.arg_count = 2;
    k.host_twin = spec_twin;
    sg_status st = sg_graph_add_kernel(g, &k, deps.data(), deps.size(), out);
    if (!st && s->op != Spec::MIX) st = sg_graph_kernel_bind_cond(g, *out, 1, s->cond);
    return st;
  }

  static void merge(std::vector<uint32_t> &into, const std::vector<uint32_t> &from) {
    into.insert(into.end(), from.begin(), from.end());
  }

  // Fills `g` (and rg) with random nodes; returns every slot written in it
  // (bodies included). `ctx`: what nodes without predecessors read. A WHILE
  // body (`step` set) ends with a STEP node after all others.
  std::vector<uint32_t> build(sg_graph *g, RGraph &rg, unsigned depth,
                              const std::vector<uint32_t> &ctx, const Spec *loop) {
    const uint32_t n = 1 + rng() % (depth == 0 ? 10u : 4u);
    std::vector<sg_node> handles;
    std::vector<std::vector<uint32_t>> outs;  // per entry: what a successor reads
    std::vector<uint32_t> written;
    for (uint32_t v = 0; v < n; v++) {
      std::vector<uint32_t> preds;
      for (uint32_t u = 0; u < handles.size(); u++)
        if (rng() % 10 < 3) preds.push_back(u);
      std::vector<uint32_t> inputs;
      std::vector<sg_node> deps;
      for (uint32_t p : preds) {
        merge(inputs, outs[p]);
        deps.push_back(handles[p]);
      }
      if (preds.empty()) inputs = ctx;
      if (depth < 3 && rng() % 4 == 0) {
        // A decider, then the conditional node after it.
        const sg_cond_kind kind = static_cast<sg_cond_kind>(rng() % 3);
        const unsigned bodies = kind == SG_COND_IF ? 1 + rng() % 2
                                : kind == SG_COND_WHILE ? 1 : 1 + rng() % 3;
        const unsigned def = rng() % 4, fl = rng() % 2 ? SG_COND_ASSIGN_DEFAULT : 0;
        sg_cond c;
        sg_status st = sg_graph_cond_create(root, def, fl, &c);
        EXPECT_EQ(st, SG_OK) << sg_last_error();
        defaults.push_back(def);
        flags.push_back(fl);
        conds.push_back(c);
        Spec *d = new_spec(Spec::DECIDE, inputs);
        d->kind = kind;
        d->bodies = bodies;
        d->cond = c;
        d->cond_index = static_cast<uint32_t>(conds.size() - 1);
        d->may_skip = kind != SG_COND_WHILE;
        if (kind == SG_COND_WHILE) d->counter = slots++;
        sg_node dn;
        st = add(g, d, deps, &dn);
        EXPECT_EQ(st, SG_OK) << sg_last_error();
        RNode dr;
        dr.spec = d;
        rg.nodes.push_back(std::move(dr));
        handles.push_back(dn);
        outs.push_back({d->dst});
        written.push_back(d->dst);

        sg_cond_node_desc cd = {kind, c, bodies, "cond"};
        std::vector<sg_graph *> body_graphs(bodies);
        sg_node cn;
        st = sg_graph_add_conditional(g, &cd, &dn, 1, &cn, body_graphs.data());
        EXPECT_EQ(st, SG_OK) << sg_last_error();
        RNode cr;
        cr.is_cond = true;
        cr.kind = kind;
        cr.cond_index = d->cond_index;
        cr.bodies.resize(bodies);
        std::vector<uint32_t> body_ctx = inputs, cond_out = {d->dst};
        body_ctx.push_back(d->dst);
        for (unsigned b = 0; b < bodies; b++)
          merge(cond_out, build(body_graphs[b], cr.bodies[b], depth + 1, body_ctx,
                                kind == SG_COND_WHILE ? d : nullptr));
        cond_nodes++;
        while_nodes += kind == SG_COND_WHILE;
        rg.nodes.push_back(std::move(cr));
        handles.push_back(cn);
        merge(written, cond_out);
        outs.push_back(cond_out);
      } else {
        Spec *s = new_spec(Spec::MIX, inputs);
        sg_node h;
        sg_status st = add(g, s, deps, &h);
        EXPECT_EQ(st, SG_OK) << sg_last_error();
        RNode r;
        r.spec = s;
        rg.nodes.push_back(std::move(r));
        handles.push_back(h);
        outs.push_back({s->dst});
        written.push_back(s->dst);
      }
    }
    if (loop) {
      std::vector<uint32_t> inputs;
      for (auto &o : outs) merge(inputs, o);
      Spec *s = new_spec(Spec::STEP, inputs);
      s->kind = SG_COND_WHILE;
      s->counter = loop->counter;
      s->cond = loop->cond;
      s->cond_index = loop->cond_index;
      sg_node h;
      sg_status st = add(g, s, handles, &h);
      EXPECT_EQ(st, SG_OK) << sg_last_error();
      RNode r;
      r.spec = s;
      rg.nodes.push_back(std::move(r));
      written.push_back(s->dst);
    }
    return written;
  }
};

void ref_run(const RGraph &g, uint32_t *mem, std::vector<unsigned> &cond) {
  for (const RNode &n : g.nodes) {
    if (!n.is_cond) {
      compute(*n.spec, mem, [&](unsigned x) { cond[n.spec->cond_index] = x; });
      continue;
    }
    const unsigned bodies = static_cast<unsigned>(n.bodies.size());
    if (n.kind == SG_COND_IF) {
      if (cond[n.cond_index]) ref_run(n.bodies[0], mem, cond);
      else if (bodies == 2) ref_run(n.bodies[1], mem, cond);
    } else if (n.kind == SG_COND_SWITCH) {
      const unsigned c = cond[n.cond_index];
      if (c < bodies) ref_run(n.bodies[c], mem, cond);
    } else {
      while (cond[n.cond_index]) ref_run(n.bodies[0], mem, cond);
    }
  }
}

void run_random_seed(uint32_t seed, unsigned *conds_seen) {
  sgtest::Graph g;
  Builder b(seed);
  b.root = g;
  RGraph rg;
  b.build(g, rg, 0, {}, nullptr);
  std::vector<uint32_t> mem(b.slots, 0), ref(b.slots, 0);
  for (auto &s : b.specs) s->mem = mem.data();
  *conds_seen += b.cond_nodes;
  SG_ASSERT_OK(sg_graph_validate(g));

  sg_exec_options o = sgtest::host_options(seed % 5);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  // The executable owns what it runs: the graph (and its bodies) can go.
  if (seed % 2) {
    sg_graph_destroy(g.g);
    g.g = nullptr;
  }
  std::vector<unsigned> ref_cond = b.defaults;
  for (int launch = 1; launch <= 3; launch++) {
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    ASSERT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }))
        << "seed " << seed << ": launch " << launch << " did not finish";
    SG_ASSERT_OK(sg_exec_wait(e));
    for (size_t i = 0; i < ref_cond.size(); i++)
      if (b.flags[i] & SG_COND_ASSIGN_DEFAULT) ref_cond[i] = b.defaults[i];
    ref_run(rg, ref.data(), ref_cond);
    ASSERT_EQ(mem, ref) << "seed " << seed << ", launch " << launch;
  }
  EXPECT_EQ(b.set_failures.load(), 0) << sg_last_error();
}

TEST(ConditionalRandom, NestedBodiesAndLoopsMatchTheReference) {
  sgtest::LeakCheck leaks;
  const uint32_t base = static_cast<uint32_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  std::printf("ConditionalRandom base seed %u\n", base);
  unsigned conds = 0;
  for (uint32_t i = 0; i < 150; i++) {
    SCOPED_TRACE("seed " + std::to_string(base + i));
    run_random_seed(base + i, &conds);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(conds, 50u) << "too few conditional nodes to mean anything";
}

// ---- semantics, one by one ------------------------------------------------

struct Counter {
  std::atomic<int> runs{0};
  static int bump(void *p) {
    static_cast<Counter *>(p)->runs.fetch_add(1);
    return 0;
  }
};

struct Setter {
  sg_cond cond = {0};
  unsigned value = 0;
  sg_status status = SG_OK;
  static int run(void *p) {
    Setter *s = static_cast<Setter *>(p);
    s->status = sg_cond_set_host(s->cond, s->value);
    return 0;
  }
};

TEST(Conditional, IfElseFollowsAHostNode) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, SG_COND_ASSIGN_DEFAULT, &c));
  Setter set;
  set.cond = c;
  sg_host_desc sh = {Setter::run, &set, "set"};
  sg_node sn, cn;
  SG_ASSERT_OK(sg_graph_add_host(g, &sh, nullptr, 0, &sn));
  sg_cond_node_desc d = {SG_COND_IF, c, 2, "if"};
  sg_graph *bodies[2];
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &sn, 1, &cn, bodies));
  Counter then_c, else_c;
  sg_host_desc th = {Counter::bump, &then_c, "then"}, eh = {Counter::bump, &else_c, "else"};
  SG_ASSERT_OK(sg_graph_add_host(bodies[0], &th, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_host(bodies[1], &eh, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  int want_then = 0, want_else = 0;
  for (int i = 0; i < 20; i++) {
    set.value = rng() % 3;  // 0: else; 1, 2: then
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    SG_ASSERT_OK(set.status);
    (set.value ? want_then : want_else)++;
    ASSERT_EQ(then_c.runs.load(), want_then);
    ASSERT_EQ(else_c.runs.load(), want_else);
  }
}

struct LoopState {
  uint32_t left = 0, done = 0;
};

void loop_twin(const sg_kernel_launch *, void *const *args) {
  LoopState *s = *static_cast<LoopState *const *>(args[0]);
  const sg_cond_ref ref = *static_cast<const sg_cond_ref *>(args[1]);
  s->done++;
  s->left--;
  sg_cond_set(ref, s->left != 0);
}

void init_twin(const sg_kernel_launch *, void *const *args) {
  LoopState *s = *static_cast<LoopState *const *>(args[0]);
  const sg_cond_ref ref = *static_cast<const sg_cond_ref *>(args[1]);
  sg_cond_set(ref, s->left != 0);
}

// A kernel (host twin) computing the stop flag from data: K iterations.
TEST(Conditional, WhileRunsAsLongAsTheKernelSays) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, 0, &c));
  LoopState st;
  LoopState *ptr = &st;
  sg_cond_ref ph = {0, nullptr};
  void *args[2] = {&ptr, &ph};
  size_t sizes[2] = {sizeof ptr, sizeof ph};
  sg_kernel_desc init = {};
  init.grid = init.block = {1, 1, 1};
  init.args = args;
  init.arg_sizes = sizes;
  init.arg_count = 2;
  init.host_twin = init_twin;
  init.name = "init";
  sg_node in, wn;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &init, nullptr, 0, &in));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(g, in, 1, c));
  sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
  sg_graph *body;
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &in, 1, &wn, &body));
  sg_kernel_desc step = init;
  step.host_twin = loop_twin;
  step.name = "step";
  sg_node sn;
  SG_ASSERT_OK(sg_graph_add_kernel(body, &step, nullptr, 0, &sn));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(body, sn, 1, c));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  for (int i = 0; i < 5; i++) {
    const uint32_t k = i == 0 ? 1000 : rng() % 50;  // 0 runs no iteration
    st.left = k;
    st.done = 0;
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    ASSERT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }));
    SG_ASSERT_OK(sg_exec_wait(e));
    ASSERT_EQ(st.done, k);
    ASSERT_EQ(st.left, 0u);
  }
}

TEST(Conditional, SwitchPicksTheBodyOrNone) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, 0, &c));
  Setter set;
  set.cond = c;
  sg_host_desc sh = {Setter::run, &set, "set"};
  sg_node sn;
  SG_ASSERT_OK(sg_graph_add_host(g, &sh, nullptr, 0, &sn));
  sg_cond_node_desc d = {SG_COND_SWITCH, c, 4, "switch"};
  sg_graph *bodies[4];
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &sn, 1, nullptr, bodies));
  Counter counts[4];
  for (int b = 0; b < 4; b++) {
    sg_host_desc h = {Counter::bump, &counts[b], nullptr};
    // Two nodes per body, one after the other.
    sg_node first;
    SG_ASSERT_OK(sg_graph_add_host(bodies[b], &h, nullptr, 0, &first));
    SG_ASSERT_OK(sg_graph_add_host(bodies[b], &h, &first, 1, nullptr));
  }
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  int want[4] = {0, 0, 0, 0};
  for (unsigned v = 0; v < 7; v++) {
    set.value = v;
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    if (v < 4) want[v] += 2;
    for (int b = 0; b < 4; b++) ASSERT_EQ(counts[b].runs.load(), want[b]) << "value " << v;
  }
}

// Without SG_COND_ASSIGN_DEFAULT a condition keeps the last launch's value.
TEST(Conditional, DefaultAppliedOrKept) {
  for (unsigned flags : {0u, SG_COND_ASSIGN_DEFAULT}) {
    sgtest::Graph g;
    sg_cond c;
    SG_ASSERT_OK(sg_graph_cond_create(g, 1, flags, &c));
    unsigned dv = 9, df = 9;
    SG_ASSERT_OK(sg_graph_cond_get(g, c, &dv, &df));
    EXPECT_EQ(dv, 1u);
    EXPECT_EQ(df, flags);
    sg_cond_node_desc d = {SG_COND_IF, c, 1, "if"};
    sg_graph *body;
    SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, &body));
    Setter set;  // the body clears the condition
    set.cond = c;
    set.value = 0;
    sg_host_desc sh = {Setter::run, &set, "clear"};
    SG_ASSERT_OK(sg_graph_add_host(body, &sh, nullptr, 0, nullptr));
    Counter runs;
    sg_host_desc ch = {Counter::bump, &runs, "count"};
    SG_ASSERT_OK(sg_graph_add_host(body, &ch, nullptr, 0, nullptr));
    sg_exec_options o = sgtest::host_options();
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (int i = 0; i < 3; i++) {
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
    }
    EXPECT_EQ(runs.runs.load(), flags ? 3 : 1) << "flags " << flags;
    // A second executable starts from the default again.
    sgtest::Exec e2;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e2.e));
    SG_ASSERT_OK(sg_exec_launch(e2, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e2));
    EXPECT_EQ(runs.runs.load(), flags ? 4 : 2);
  }
}

TEST(Conditional, DotDrawsBodiesAsClusters) {
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, 0, &c));
  sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
  sg_graph *body;
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, &body));
  sg_node a;
  SG_ASSERT_OK(sg_graph_add_empty(body, "inner", nullptr, 0, &a));
  sg_cond_node_desc d2 = {SG_COND_IF, c, 2, "nested"};
  sg_graph *inner[2];
  SG_ASSERT_OK(sg_graph_add_conditional(body, &d2, &a, 1, nullptr, inner));
  SG_ASSERT_OK(sg_graph_add_empty(inner[1], "deep", nullptr, 0, nullptr));
  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(g, &dot));
  std::string s(dot);
  sg_free(dot);
  EXPECT_NE(s.find("subgraph cluster_n0b0_"), std::string::npos) << s;
  EXPECT_NE(s.find("subgraph cluster_n0b0_n1b1_"), std::string::npos) << s;
  EXPECT_NE(s.find("WHILE on condition #0"), std::string::npos) << s;
  EXPECT_NE(s.find("IF/ELSE"), std::string::npos) << s;
  EXPECT_NE(s.find("n0b0_n1b1_n0 [shape"), std::string::npos) << s;
  EXPECT_NE(s.find("n0 -> n0b0_n0 [style=dashed]"), std::string::npos) << s;
}

// The planner sees a conditional node as one node of its graph: a wide body
// adds neither nodes nor width to the plan.
TEST(Conditional, PlannedAsOneNode) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, 0, &c));
  sg_node a, b;
  SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, &a));
  sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
  sg_graph *body;
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &a, 1, &b, &body));
  for (int i = 0; i < 6; i++) SG_ASSERT_OK(sg_graph_add_empty(body, nullptr, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_empty(g, "c", &b, 1, nullptr));
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 8, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.node_count, 3u);
  EXPECT_EQ(sum.width, 1u);
  EXPECT_EQ(sum.stream_count, 1u);
  SG_ASSERT_OK(sg_plan_destroy(plan));
}

// sg_exec_update with a body edited: the executable re-plans and runs the
// new body; sg_exec_set_kernel keeps a kernel's condition argument.
TEST(Conditional, UpdateWithABodyEdited) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 1, SG_COND_ASSIGN_DEFAULT, &c));
  sg_cond_node_desc d = {SG_COND_IF, c, 1, "if"};
  sg_graph *body;
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, &body));
  Counter first, second;
  sg_host_desc h1 = {Counter::bump, &first, "first"}, h2 = {Counter::bump, &second, "second"};
  SG_ASSERT_OK(sg_graph_add_host(body, &h1, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_graph_add_host(body, &h2, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_exec_update(e, g));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st));
  EXPECT_EQ(st.rebuilds, 1u);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(first.runs.load(), 2);
  EXPECT_EQ(second.runs.load(), 1);

  // A top-level kernel bound to the condition, changed through the
  // executable: the new parameters keep the binding.
  sgtest::Graph g2;
  sg_cond c2;
  SG_ASSERT_OK(sg_graph_cond_create(g2, 0, 0, &c2));
  LoopState state;
  LoopState *ptr = &state;
  sg_cond_ref ph = {0, nullptr};
  void *args[2] = {&ptr, &ph};
  size_t sizes[2] = {sizeof ptr, sizeof ph};
  sg_kernel_desc k = {};
  k.grid = k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = init_twin;
  sg_node kn;
  SG_ASSERT_OK(sg_graph_add_kernel(g2, &k, nullptr, 0, &kn));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(g2, kn, 1, c2));
  sg_cond_node_desc d2 = {SG_COND_IF, c2, 1, "if"};
  sg_graph *b2;
  SG_ASSERT_OK(sg_graph_add_conditional(g2, &d2, &kn, 1, nullptr, &b2));
  Counter ran;
  sg_host_desc rh = {Counter::bump, &ran, "ran"};
  SG_ASSERT_OK(sg_graph_add_host(b2, &rh, nullptr, 0, nullptr));
  sgtest::Exec e2;
  SG_ASSERT_OK(sg_exec_create(g2, &o, &e2.e));
  LoopState other;
  other.left = 5;
  ptr = &other;  // the new argument value: a state whose loop has work left
  SG_ASSERT_OK(sg_exec_set_kernel(e2, kn, &k));
  SG_ASSERT_OK(sg_exec_launch(e2, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e2));
  EXPECT_EQ(ran.runs.load(), 1) << "the condition argument was lost by sg_exec_set_kernel";
}

// ---- refusals, one by one -------------------------------------------------

void expect_refused(sg_status st, sg_status want, const std::vector<std::string> &words) {
  EXPECT_EQ(st, want) << sg_status_name(st) << ": " << sg_last_error();
  std::string msg = sg_last_error();
  for (const std::string &w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

// A node inside a body (two deep here) is changed by sg_exec_set_kernel
// like a top-level node: the next launch runs it with the new arguments,
// and the kernel keeps its condition argument. (tests/host/
// conditional_set_test.cpp covers this at random, with every node kind.)
TEST(Conditional, ExecSetOnADeepBodyNodeAppliesToTheNextLaunch) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 1, SG_COND_ASSIGN_DEFAULT, &c));
  sg_cond_node_desc outer = {SG_COND_IF, c, 1, "outer"}, inner = {SG_COND_IF, c, 2, "inner"};
  sg_graph *ob, *ib[2];
  LoopState st;
  LoopState *ptr = &st;
  sg_cond_ref ph = {0, nullptr};
  void *args[2] = {&ptr, &ph};
  size_t sizes[2] = {sizeof ptr, sizeof ph};
  sg_kernel_desc k = {};
  k.grid = k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = loop_twin;
  sg_node deep, top;
  k.name = "top";
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, &top));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(g, top, 1, c));
  SG_ASSERT_OK(sg_graph_add_conditional(g, &outer, &top, 1, nullptr, &ob));
  SG_ASSERT_OK(sg_graph_add_conditional(ob, &inner, nullptr, 0, nullptr, ib));
  k.name = "deep";
  SG_ASSERT_OK(sg_graph_add_kernel(ib[0], &k, nullptr, 0, &deep));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(ib[0], deep, 1, c));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  LoopState other;
  other.left = 3;
  ptr = &other;
  k.name = nullptr; /* the node keeps its name */
  SG_ASSERT_OK(sg_exec_set_kernel(e, deep, &k));
  st.left = 2;  // top runs on st (its value was captured before ptr changed)
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(st.done, 1u);
  EXPECT_EQ(other.done, 1u) << "the body node did not run on its new argument";
  EXPECT_EQ(other.left, 2u);
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.rebuilds, 0u);
  EXPECT_EQ(stats.param_updates, 1u);
}

TEST(ConditionalRefusals, Builder) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g, other;
  sg_cond c, foreign;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, 0, &c));
  SG_ASSERT_OK(sg_graph_cond_create(other, 0, 0, &foreign));
  sg_cond refused;
  expect_refused(sg_graph_cond_create(g, 0, 2, &refused), SG_ERR_INVALID_ARGUMENT,
                 {"sg_graph_cond_create", "flags"});
  EXPECT_EQ(refused.opaque, 0u);
  expect_refused(sg_graph_cond_create(g, 0, 0, nullptr), SG_ERR_INVALID_ARGUMENT, {"out"});
  sg_graph *bodies[2];
  sg_cond_node_desc d = {SG_COND_IF, c, 3, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_INVALID_ARGUMENT, {"sg_graph_add_conditional", "IF node has 1 body"});
  d = {SG_COND_WHILE, c, 2, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_INVALID_ARGUMENT, {"WHILE node has 1 body"});
  d = {SG_COND_SWITCH, c, 0, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_INVALID_ARGUMENT, {"SWITCH node has 1 to"});
  d = {static_cast<sg_cond_kind>(7), c, 1, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_INVALID_ARGUMENT, {"kind 7"});
  d = {SG_COND_IF, sg_cond{0}, 1, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_INVALID_ARGUMENT, {"zero handle"});
  d = {SG_COND_IF, foreign, 1, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_FOREIGN_NODE, {"another top-level graph"});
  d = {SG_COND_IF, c, 1, "x"};
  expect_refused(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, nullptr),
                 SG_ERR_INVALID_ARGUMENT, {"bodies is NULL"});
  size_t count = 9;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 0u) << "a refused node entered the graph";

  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies));
  expect_refused(sg_graph_destroy(bodies[0]), SG_ERR_INVALID_ARGUMENT, {"body", "owns it"});
  sg_cond in_body;
  expect_refused(sg_graph_cond_create(bodies[0], 0, 0, &in_body), SG_ERR_INVALID_ARGUMENT,
                 {"top-level graph"});
  // Nesting stops at SG_MAX_COND_DEPTH.
  sg_graph *at = bodies[0];
  for (unsigned depth = 1; depth < SG_MAX_COND_DEPTH; depth++)
    SG_ASSERT_OK(sg_graph_add_conditional(at, &d, nullptr, 0, nullptr, &at));
  expect_refused(sg_graph_add_conditional(at, &d, nullptr, 0, nullptr, bodies),
                 SG_ERR_INVALID_ARGUMENT, {"SG_MAX_COND_DEPTH"});
  SG_ASSERT_OK(sg_graph_validate(g));
}

TEST(ConditionalRefusals, KernelBinding) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g, other;
  sg_cond c, foreign;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, 0, &c));
  SG_ASSERT_OK(sg_graph_cond_create(other, 0, 0, &foreign));
  int x = 0;
  sg_cond_ref ref = {0, nullptr};
  void *args[2] = {&x, &ref};
  size_t sizes[2] = {sizeof x, sizeof ref};
  sg_kernel_desc k = {};
  k.grid = k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = init_twin;
  k.name = "k";
  sg_node kn, en;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, &kn));
  SG_ASSERT_OK(sg_graph_add_empty(g, "e", nullptr, 0, &en));
  expect_refused(sg_graph_kernel_bind_cond(g, en, 0, c), SG_ERR_INVALID_ARGUMENT,
                 {"'e' (#1)", "not a kernel"});
  expect_refused(sg_graph_kernel_bind_cond(g, kn, 2, c), SG_ERR_INVALID_KERNEL_ARGS,
                 {"'k' (#0)", "index 2"});
  expect_refused(sg_graph_kernel_bind_cond(g, kn, 0, c), SG_ERR_INVALID_KERNEL_ARGS,
                 {"'k' (#0)", "sg_cond_ref"});
  expect_refused(sg_graph_kernel_bind_cond(g, kn, 1, foreign), SG_ERR_FOREIGN_NODE,
                 {"another top-level graph"});
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(g, kn, 1, c));
  expect_refused(sg_cond_set_host(c, 1), SG_ERR_INVALID_ARGUMENT, {"sg_cond_set_host", "host node"});
}

TEST(ConditionalRefusals, BodiesAreCheckedLikeGraphs) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 1, 0, &c));
  sg_cond_node_desc d = {SG_COND_SWITCH, c, 2, "sw"};
  sg_graph *bodies[2];
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, bodies));
  sg_node a, b;
  SG_ASSERT_OK(sg_graph_add_empty(bodies[1], "a", nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_empty(bodies[1], "b", &a, 1, &b));
  SG_ASSERT_OK(sg_graph_validate(g));
  SG_ASSERT_OK(sg_graph_add_edge(bodies[1], b, a));
  expect_refused(sg_graph_validate(g), SG_ERR_CYCLE,
                 {"sg_graph_validate", "body 1 of SWITCH node 'sw' (#0)", "'a' (#0)"});
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  expect_refused(sg_exec_create(g, &o, &e), SG_ERR_CYCLE, {"body 1 of SWITCH node 'sw'"});
  EXPECT_EQ(e, nullptr);
  sg_plan *plan = nullptr;
  expect_refused(sg_plan_create(g, 4, &plan), SG_ERR_CYCLE, {"body 1 of SWITCH"});

  // Temporaries belong to the top-level plan: a body cannot have its own.
  sgtest::Graph gt;
  sg_cond ct;
  SG_ASSERT_OK(sg_graph_cond_create(gt, 1, 0, &ct));
  sg_cond_node_desc dt = {SG_COND_IF, ct, 1, "if"};
  sg_graph *bt;
  SG_ASSERT_OK(sg_graph_add_conditional(gt, &dt, nullptr, 0, nullptr, &bt));
  sg_temp_desc td = {256, 0, "scratch"};
  sg_temp temp;
  SG_ASSERT_OK(sg_graph_add_temp(bt, &td, &temp));
  expect_refused(sg_graph_validate(gt), SG_ERR_UNSUPPORTED,
                 {"body 0 of IF node 'if' (#0)", "temporaries"});

  // A kernel without a host twin deep in a body is named with its path.
  sgtest::Graph g2;
  sg_cond c2;
  SG_ASSERT_OK(sg_graph_cond_create(g2, 1, 0, &c2));
  sg_cond_node_desc w = {SG_COND_WHILE, c2, 1, "outer"};
  sg_graph *ob, *ib;
  SG_ASSERT_OK(sg_graph_add_empty(g2, nullptr, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_conditional(g2, &w, nullptr, 0, nullptr, &ob));
  sg_cond_node_desc i = {SG_COND_IF, c2, 1, "inner"};
  SG_ASSERT_OK(sg_graph_add_conditional(ob, &i, nullptr, 0, nullptr, &ib));
  int dummy = 0;
  void *args[1] = {&dummy};
  size_t sizes[1] = {sizeof dummy};
  sg_kernel_desc k = {};
  k.func = &dummy;
  k.grid = k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 1;
  k.name = "twinless";
  SG_ASSERT_OK(sg_graph_add_kernel(ib, &k, nullptr, 0, nullptr));
  expect_refused(sg_exec_create(g2, &o, &e), SG_ERR_NO_HOST_TWIN,
                 {"body 0 of WHILE node 'outer' (#1)", "body 0 of IF node 'inner' (#0)",
                  "'twinless' (#0)"});
}

// A node failing inside a loop fails the launch, names its path, and ends
// the loop (no hang).
int fail_fn(void *) { return 7; }

TEST(Conditional, FailureInsideALoopEndsIt) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 1, 0, &c));
  sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "forever"};
  sg_graph *body;
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, &body));
  sg_host_desc h = {fail_fn, nullptr, "bad"};
  SG_ASSERT_OK(sg_graph_add_host(body, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  ASSERT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }));
  sg_status st = sg_exec_wait(e);
  expect_refused(st, SG_ERR_CALLBACK, {"body 0 of WHILE node 'forever' (#0)", "'bad' (#0)",
                                       "returned 7"});
}

}  // namespace

// ---- fault injection ------------------------------------------------------

namespace {

// Builds nested conditional nodes, draws, plans, runs twice and tears
// down; the first failing status (after cleaning up), or SG_OK.
sg_status fault_scenario(LoopState *state) {
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  sg_cond c{};
  sg_node init{}, loop{}, step{}, iff{};
  sg_graph *body = nullptr, *inner[2] = {nullptr, nullptr};
  LoopState *ptr = state;
  sg_cond_ref ph = {0, nullptr};
  void *args[2] = {&ptr, &ph};
  size_t sizes[2] = {sizeof ptr, sizeof ph};
  sg_kernel_desc k = {};
  k.grid = k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = init_twin;
  k.name = "init";
  sg_cond_node_desc w = {SG_COND_WHILE, {0}, 1, "loop"};
  sg_cond_node_desc i = {SG_COND_IF, {0}, 2, "if"};
  char *dot = nullptr;
  sg_exec_options o = sgtest::host_options(2);
  state->left = 3;
  sg_status st = sg_graph_create(&g);
  if (!st) st = sg_graph_cond_create(g, 0, SG_COND_ASSIGN_DEFAULT, &c);
  w.cond = i.cond = c;
  if (!st) st = sg_graph_add_kernel(g, &k, nullptr, 0, &init);
  if (!st) st = sg_graph_kernel_bind_cond(g, init, 1, c);
  if (!st) st = sg_graph_add_conditional(g, &w, &init, 1, &loop, &body);
  if (!st) st = sg_graph_add_conditional(body, &i, nullptr, 0, &iff, inner);
  k.host_twin = loop_twin;
  k.name = "step";
  if (!st) st = sg_graph_add_kernel(body, &k, &iff, 1, &step);
  if (!st) st = sg_graph_kernel_bind_cond(body, step, 1, c);
  if (!st) st = sg_graph_add_empty(inner[1], "else", nullptr, 0, nullptr);
  if (!st) st = sg_graph_to_dot(g, &dot);
  sg_free(dot);
  if (!st) st = sg_graph_validate(g);
  if (!st) st = sg_exec_create(g, &o, &e);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_wait(e);
  if (e) sg_exec_destroy(e);
  if (g) sg_graph_destroy(g);
  return st;
}

TEST(ConditionalFaults, EveryFailureComesBackAsAStatus) {
  LoopState state;
  fault_scenario(&state); // the host pool and other once-made state exist from here
  const long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    sg_fault_arm(SG_FAULT_ALLOC | SG_FAULT_SYSTEM, nth);
    sg_status st = fault_scenario(&state);
    const int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    const std::string site = sg_fault_site();
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth << " at " << site;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_EQ(state.left, 0u);
      EXPECT_GT(failures, 10);
      return;
    }
    failures++;
    EXPECT_NE(st, SG_OK) << "fault " << nth << " at " << site << " was swallowed";
    EXPECT_STRNE(sg_last_error(), "") << "fault " << nth << " at " << site;
  }
  FAIL() << "the scenario never ran to completion";
}

}  // namespace
