// sg_exec_set_stream_fn on the host backend: an executable's own descriptor
// for a stream-function node (how each pipeline instance gets its own
// library handle or plan), who releases what and when, refusals that leave
// the caller owning its data, and allocation faults.
#include <atomic>
#include <vector>

#include "sg_test_util.h"

namespace {

// A stream function's data: the host twin writes `value` to `*out`; the
// release counts itself.
struct Data {
  int value = 0;
  int *out = nullptr;
  std::atomic<int> released{0};
};

int write_value(void *p) {
  Data *d = static_cast<Data *>(p);
  *d->out = d->value;
  return 0;
}
void release_data(void *p) { static_cast<Data *>(p)->released.fetch_add(1); }

sg_stream_fn_desc desc_for(Data *d, const char *name = "fn") {
  return sg_stream_fn_desc{nullptr, d, release_data, write_value, name};
}

TEST(StreamFnSet, EachExecutableRunsItsOwnDescriptor) {
  int out_a = 0, out_b = 0;
  Data tmpl, mine;
  tmpl.value = 1;
  tmpl.out = &out_a;
  mine.value = 2;
  mine.out = &out_b;
  sg_graph *g = nullptr;
  SG_ASSERT_OK(sg_graph_create(&g));
  sg_stream_fn_desc d = desc_for(&tmpl);
  sg_node node;
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, &node));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec a, b;
  SG_ASSERT_OK(sg_exec_create(g, &o, &a.e));
  SG_ASSERT_OK(sg_exec_create(g, &o, &b.e));
  sg_stream_fn_desc dm = desc_for(&mine, nullptr);  // no name: the node keeps "fn"
  SG_ASSERT_OK(sg_exec_set_stream_fn(b, node, &dm));
  EXPECT_EQ(tmpl.released.load(), 0) << "the graph and exec a still hold the template";

  SG_ASSERT_OK(sg_exec_launch(a, nullptr));
  SG_ASSERT_OK(sg_exec_launch(b, nullptr));
  SG_ASSERT_OK(sg_exec_wait(a));
  SG_ASSERT_OK(sg_exec_wait(b));
  EXPECT_EQ(out_a, 1);
  EXPECT_EQ(out_b, 2);
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(b, &st));
  EXPECT_EQ(st.param_updates, 1u);
  EXPECT_EQ(st.rebuilds, 0u);

  SG_ASSERT_OK(sg_graph_destroy(g));
  EXPECT_EQ(tmpl.released.load(), 0) << "exec a still holds the template";
  SG_ASSERT_OK(sg_exec_destroy(a.e));
  a.e = nullptr;
  EXPECT_EQ(tmpl.released.load(), 1);
  EXPECT_EQ(mine.released.load(), 0);
  SG_ASSERT_OK(sg_exec_destroy(b.e));
  b.e = nullptr;
  EXPECT_EQ(mine.released.load(), 1);
  EXPECT_EQ(tmpl.released.load(), 1);
}

TEST(StreamFnSet, ReplacingReleasesTheReplacedWhenNothingElseHoldsIt) {
  int out = 0;
  Data first, second;
  first.out = second.out = &out;
  second.value = 7;
  sgtest::Graph g;
  sg_stream_fn_desc d = desc_for(&first);
  sg_node node;
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, &node));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_graph_destroy(g.g));
  g.g = nullptr;
  sg_stream_fn_desc d2 = desc_for(&second);
  SG_ASSERT_OK(sg_exec_set_stream_fn(e, node, &d2));
  EXPECT_EQ(first.released.load(), 1) << "the executable held the last reference";
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(out, 7);
}

TEST(StreamFnSet, RefusedDescriptorsStayTheCallers) {
  int out = 0;
  Data tmpl, mine;
  tmpl.out = mine.out = &out;
  sgtest::Graph g;
  sg_stream_fn_desc d = desc_for(&tmpl);
  sg_node fn_node, copy_node;
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, &fn_node));
  int src = 0, dst = 0;
  sg_copy_desc c = {&dst, &src, sizeof src, SG_COPY_HOST_TO_HOST, "copy"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &copy_node));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));

  sg_stream_fn_desc dm = desc_for(&mine);
  EXPECT_EQ(sg_exec_set_stream_fn(e, copy_node, &dm), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("not a stream-fn node"), std::string::npos)
      << sg_last_error();
  EXPECT_EQ(sg_exec_set_stream_fn(e, fn_node, nullptr), SG_ERR_INVALID_ARGUMENT);
  sg_stream_fn_desc empty = {nullptr, &mine, release_data, nullptr, "empty"};
  EXPECT_EQ(sg_exec_set_stream_fn(e, fn_node, &empty), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_set_stream_fn(nullptr, fn_node, &dm), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mine.released.load(), 0) << "a refused descriptor is never released";

  // A host-backend executable refuses a node it could not run (no host twin).
  sg_stream_fn_desc no_twin = {[](void *, void *) { return 0; }, &mine, release_data, nullptr,
                               "gpu only"};
  EXPECT_NE(sg_exec_set_stream_fn(e, fn_node, &no_twin), SG_OK);
  EXPECT_EQ(mine.released.load(), 0);
  // The executable still runs its template.
  tmpl.value = 5;
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(out, 5);
}

// Batch i runs on instance i % depth, which setup gave its own data.
struct PipeState {
  sg_node node;
  std::vector<Data *> per_instance;
  std::vector<int> outputs;
};

int setup(sg_pipeline_instance *inst, void *user) {
  auto *ps = static_cast<PipeState *>(user);
  Data *d = new Data;
  d->value = 100 + static_cast<int>(inst->index);
  d->out = &ps->outputs[0];  // rebound per batch below, by the host twin's data
  ps->per_instance[inst->index] = d;
  sg_stream_fn_desc desc = desc_for(d);
  return sg_exec_set_stream_fn(inst->exec, ps->node, &desc) == SG_OK ? 0 : 1;
}

// The batch tells the instance's data where to write.
int bind(sg_pipeline_instance *inst, uint64_t batch, void *, void *user) {
  auto *ps = static_cast<PipeState *>(user);
  ps->per_instance[inst->index]->out = &ps->outputs[batch];
  return 0;
}

TEST(StreamFnSet, PipelineInstancesEachGetTheirOwn) {
  for (unsigned depth : {1u, 3u}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    PipeState ps;
    ps.per_instance.assign(depth, nullptr);
    ps.outputs.assign(12, -1);
    Data tmpl;
    tmpl.value = -2;
    tmpl.out = &ps.outputs[0];
    sgtest::Graph g;
    sg_stream_fn_desc d = desc_for(&tmpl);
    SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, &ps.node));
    sg_pipeline_options o;
    sg_pipeline_options_init(&o);
    o.depth = depth;
    o.exec = sgtest::host_options();
    o.setup = setup;
    o.bind = bind;
    o.user_data = &ps;
    sg_pipeline *p = nullptr;
    SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
    SG_ASSERT_OK(sg_graph_destroy(g.g));
    g.g = nullptr;
    EXPECT_EQ(tmpl.released.load(), 1) << "every instance replaced the template";
    for (int b = 0; b < 12; b++) SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
    SG_ASSERT_OK(sg_pipeline_drain(p));
    for (int b = 0; b < 12; b++) EXPECT_EQ(ps.outputs[b], 100 + b % int(depth)) << "batch " << b;
    SG_ASSERT_OK(sg_pipeline_destroy(p));
    for (Data *x : ps.per_instance) {
      EXPECT_EQ(x->released.load(), 1);
      delete x;
    }
  }
}

// Every allocation sg_exec_set_stream_fn makes, failed in turn: an error
// status, the caller still owns its data, nothing leaks, and the executable
// keeps running its old descriptor.
TEST(StreamFnSet, AllocationFaults) {
  int out = 0;
  Data tmpl, mine;
  tmpl.out = mine.out = &out;
  tmpl.value = 3;
  mine.value = 4;
  sgtest::Graph g;
  sg_stream_fn_desc d = desc_for(&tmpl);
  sg_node node;
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, &node));
  sg_exec_options o = sgtest::host_options();
  unsigned long n = 1;
  for (;; n++) {
    ASSERT_LT(n, 1000u) << "the faults never stop";
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    long before = sg_live_allocations();
    sg_stream_fn_desc dm = desc_for(&mine, "a name to copy");
    sg_fault_arm(SG_FAULT_ALL, n);
    sg_status st = sg_exec_set_stream_fn(e, node, &dm);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    if (!fired) {
      SG_ASSERT_OK(st);
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(out, 4);
      break;
    }
    EXPECT_NE(st, SG_OK) << "fault " << n;
    EXPECT_EQ(mine.released.load(), 0) << "fault " << n;
    EXPECT_EQ(sg_live_allocations(), before) << "fault " << n;
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(out, 3) << "fault " << n;
  }
  EXPECT_GT(n, 1u) << "no allocation was ever failed";
  EXPECT_EQ(mine.released.load(), 1);
}

}  // namespace
