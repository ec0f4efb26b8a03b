// Bad arguments to pipelines: each is refused with the right status and a
// message that names what was wrong, and leaves the pipeline usable.
#include <memory>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;
using pipetest::Ctx;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

#define EXPECT_FAILS(expr, status, part)                                               \
  do {                                                                                 \
    EXPECT_EQ((expr), (status)) << sg_last_error();                                    \
    EXPECT_TRUE(contains(sg_last_error(), (part))) << "message: " << sg_last_error(); \
  } while (0)

sg_pipeline_options host_options(unsigned depth = 2) {
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.exec.backend = SG_BACKEND_HOST;
  return o;
}

TEST(PipelineArgs, Create) {
  sgtest::LeakCheck leaks;
  Chain chain(SG_BACKEND_HOST, 16, false);
  sg_pipeline *p = reinterpret_cast<sg_pipeline *>(0x1);
  sg_pipeline_options o = host_options();
  EXPECT_FAILS(sg_pipeline_create(chain.g, &o, nullptr), SG_ERR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_FAILS(sg_pipeline_create(nullptr, &o, &p), SG_ERR_INVALID_ARGUMENT, "graph is NULL");
  EXPECT_EQ(p, nullptr) << "*out is cleared on failure";
  int not_a_graph = 0;
  EXPECT_FAILS(sg_pipeline_create(reinterpret_cast<sg_graph *>(&not_a_graph), &o, &p),
               SG_ERR_INVALID_HANDLE, "graph");
  o.depth = 0;
  EXPECT_FAILS(sg_pipeline_create(chain.g, &o, &p), SG_ERR_INVALID_ARGUMENT, "depth 0");
  o.depth = SG_PIPELINE_MAX_DEPTH + 1;
  EXPECT_FAILS(sg_pipeline_create(chain.g, &o, &p), SG_ERR_INVALID_ARGUMENT, "depth 65");
  o = host_options(3);
  o.exec.mode = static_cast<sg_exec_mode>(7);
  EXPECT_FAILS(sg_pipeline_create(chain.g, &o, &p), SG_ERR_INVALID_ARGUMENT, "instance 0 of 3");
  EXPECT_TRUE(contains(sg_last_error(), "mode 7")) << sg_last_error();
  sg_pipeline_options_init(nullptr); // harmless
}

TEST(PipelineArgs, CreateRefusesWhatAnExecutableRefuses) {
  sgtest::LeakCheck leaks;
  sg_pipeline *p = nullptr;
  sg_pipeline_options o = host_options();
  {
    sgtest::Graph g; // a cycle
    sg_node a, b;
    SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, &a));
    SG_ASSERT_OK(sg_graph_add_empty(g, "b", &a, 1, &b));
    SG_ASSERT_OK(sg_graph_add_edge(g, b, a));
    EXPECT_FAILS(sg_pipeline_create(g, &o, &p), SG_ERR_CYCLE, "instance 0");
  }
  {
    sgtest::Graph g; // a kernel the host backend cannot run
    static int fake_kernel;
    sg_kernel_desc k = {};
    k.func = &fake_kernel;
    k.grid = k.block = sg_dim3{1, 1, 1};
    k.name = "gpu only";
    SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, nullptr));
    EXPECT_FAILS(sg_pipeline_create(g, &o, &p), SG_ERR_NO_HOST_TWIN, "'gpu only'");
  }
  EXPECT_EQ(p, nullptr);
}

TEST(PipelineArgs, SetupFailureTearsDownWhatWasSetUp) {
  sgtest::LeakCheck leaks;
  Chain chain(SG_BACKEND_HOST, 16, false);
  Ctx ctx;
  ctx.chain = &chain;
  ctx.counters.fail_setup_at = 2;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 4, SG_MODE_STREAMS);
  sg_pipeline *p = nullptr;
  EXPECT_FAILS(sg_pipeline_create(chain.g, &o, &p), SG_ERR_CALLBACK, "setup of instance 2 returned 7");
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ctx.counters.setups, 2);
  EXPECT_EQ(ctx.counters.teardowns, 2);
}

TEST(PipelineArgs, Handles) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, "e", nullptr, 0, nullptr));
  sg_pipeline_options o = host_options();
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_FAILS(sg_pipeline_submit(p, nullptr, nullptr), SG_ERR_INVALID_HANDLE, "pipeline");
  EXPECT_FAILS(sg_pipeline_destroy(p), SG_ERR_INVALID_HANDLE, "pipeline");
  EXPECT_FAILS(sg_pipeline_submit(nullptr, nullptr, nullptr), SG_ERR_INVALID_ARGUMENT, "pipeline is NULL");
  EXPECT_FAILS(sg_pipeline_try_submit(nullptr, nullptr, nullptr), SG_ERR_INVALID_ARGUMENT, "pipeline is NULL");
  EXPECT_FAILS(sg_pipeline_poll(nullptr), SG_ERR_INVALID_ARGUMENT, "pipeline is NULL");
  EXPECT_FAILS(sg_pipeline_wait(nullptr, 0), SG_ERR_INVALID_ARGUMENT, "pipeline is NULL");
  EXPECT_FAILS(sg_pipeline_drain(nullptr), SG_ERR_INVALID_ARGUMENT, "pipeline is NULL");
  sg_pipeline_stats s;
  EXPECT_FAILS(sg_pipeline_get_stats(nullptr, &s), SG_ERR_INVALID_ARGUMENT, "pipeline is NULL");
  // Another kind of object is not a pipeline.
  EXPECT_FAILS(sg_pipeline_drain(reinterpret_cast<sg_pipeline *>(g.g)), SG_ERR_INVALID_HANDLE,
               "pipeline");
}

TEST(PipelineArgs, InspectionAndWait) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, "e", nullptr, 0, nullptr));
  sg_pipeline_options o = host_options(2);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  EXPECT_FAILS(sg_pipeline_get_stats(p, nullptr), SG_ERR_INVALID_ARGUMENT, "stats is NULL");
  sg_pipeline_instance inst;
  EXPECT_FAILS(sg_pipeline_get_instance(p, 2, &inst), SG_ERR_INVALID_ARGUMENT, "instance 2");
  EXPECT_FAILS(sg_pipeline_get_instance(p, 0, nullptr), SG_ERR_INVALID_ARGUMENT, "instance is NULL");
  SG_ASSERT_OK(sg_pipeline_get_instance(p, 1, &inst));
  EXPECT_EQ(inst.index, 1u);
  EXPECT_NE(inst.exec, nullptr);
  EXPECT_FAILS(sg_pipeline_wait(p, 0), SG_ERR_INVALID_ARGUMENT, "batch 0 has not been submitted");
  SG_ASSERT_OK(sg_pipeline_drain(p)); // nothing to drain
  SG_ASSERT_OK(sg_pipeline_poll(p));
  SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr)); // a batch without binds
  SG_ASSERT_OK(sg_pipeline_wait(p, 0));
  EXPECT_FAILS(sg_pipeline_instance_bind(nullptr, nullptr, 0), SG_ERR_INVALID_ARGUMENT, "instance is NULL");
  sg_pipeline_instance bogus = {reinterpret_cast<sg_exec *>(g.g), 0, nullptr};
  EXPECT_FAILS(sg_pipeline_instance_bind(&bogus, nullptr, 0), SG_ERR_INVALID_HANDLE, "instance->exec");
  EXPECT_FAILS(sg_pipeline_instance_bind(&inst, nullptr, 1), SG_ERR_INVALID_ARGUMENT, "binds is NULL");
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// Every bad bind is refused before anything is applied, names the batch and
// the bind, and leaves the pipeline running with the same next index.
TEST(PipelineArgs, Binds) {
  sgtest::LeakCheck leaks;
  Chain chain(SG_BACKEND_HOST, 16, false);
  Chain other(SG_BACKEND_HOST, 16, false);
  Ctx ctx;
  ctx.chain = &chain;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 2, SG_MODE_GRAPH);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  sg_pipeline_stats before;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &before));

  Batch ok(chain, false, 0);
  uint32_t rounds = 3;
  uint64_t wide = 3;
  void *dev = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 64, &dev));
  struct Case {
    sg_pipeline_bind bind;
    sg_status status;
    const char *part;
  } cases[] = {
      {{static_cast<sg_pipeline_bind_kind>(0), chain.h2d, ok.in.p, 0, 0}, SG_ERR_INVALID_ARGUMENT, "kind 0"},
      {{static_cast<sg_pipeline_bind_kind>(99), chain.h2d, ok.in.p, 0, 0}, SG_ERR_INVALID_ARGUMENT, "kind 99"},
      {sg_bind_copy_src(sg_node{}, ok.in.p), SG_ERR_INVALID_ARGUMENT, "zero handle"},
      {sg_bind_copy_src(other.h2d, ok.in.p), SG_ERR_FOREIGN_NODE, "another graph"},
      {sg_bind_copy_src(chain.k, ok.in.p), SG_ERR_INVALID_ARGUMENT, "needs a copy node"},
      {sg_bind_kernel_arg(chain.h2d, 2, &rounds, 4), SG_ERR_INVALID_ARGUMENT, "needs a kernel node"},
      {sg_bind_host_data(chain.k, nullptr), SG_ERR_INVALID_ARGUMENT, "needs a host node"},
      {sg_bind_copy_src(chain.h2d, nullptr), SG_ERR_INVALID_ARGUMENT, "ptr is NULL"},
      {sg_bind_kernel_arg(chain.k, 2, nullptr, 4), SG_ERR_INVALID_ARGUMENT, "ptr is NULL"},
      {sg_bind_kernel_arg(chain.k, 3, &rounds, 4), SG_ERR_INVALID_KERNEL_ARGS, "has 3 arguments"},
      {sg_bind_kernel_arg(chain.k, 2, &wide, 8), SG_ERR_INVALID_KERNEL_ARGS, "is 4 bytes"},
      // Checked by the update itself: a device pointer as an upload's source.
      {sg_bind_copy_src(chain.h2d, dev), SG_ERR_INVALID_COPY, "'upload'"},
  };
  for (const Case &c : cases) {
    // A good bind first: it must not be applied when a later one is bad
    // (except for the copy check, which only the update can make).
    sg_pipeline_bind binds[] = {sg_bind_copy_dst(chain.d2h, ok.out.p), c.bind};
    sg_pipeline_batch batch = {binds, 2, nullptr};
    uint64_t index = 77;
    EXPECT_FAILS(sg_pipeline_submit(p, &batch, &index), c.status, c.part);
    EXPECT_TRUE(contains(sg_last_error(), "batch 0, bind 1")) << sg_last_error();
    EXPECT_EQ(index, 77u) << "a refused batch sets no index";
    EXPECT_FAILS(sg_pipeline_try_submit(p, &batch, &index), c.status, c.part);
  }
  sg_pipeline_stats after;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &after));
  // Only the invalid-copy case (submitted twice) applied its good first bind.
  EXPECT_EQ(after.param_updates, before.param_updates + 2);
  EXPECT_EQ(after.submitted, 0u);
  EXPECT_EQ(after.stopped, 0);
  sg_pipeline_batch null_binds = {nullptr, 3, nullptr};
  EXPECT_FAILS(sg_pipeline_submit(p, &null_binds, nullptr), SG_ERR_INVALID_ARGUMENT, "binds is NULL");

  // Still usable, from index 0.
  sg_pipeline_batch good = ok.desc();
  uint64_t index = 77;
  SG_ASSERT_OK(sg_pipeline_submit(p, &good, &index));
  EXPECT_EQ(index, 0u);
  SG_ASSERT_OK(sg_pipeline_drain(p));
  EXPECT_EQ(ok.mismatch(16), "");
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  sg_mem_free(dev);
}

// Binding both pointers of one copy is one update, checked as a whole: a
// host->host copy moved to a new source and destination that overlap the
// old ones is fine.
TEST(PipelineArgs, BindsOfOneNodeAreMerged) {
  sgtest::LeakCheck leaks;
  std::vector<uint32_t> buf(64);
  sgtest::Graph g;
  sg_node c;
  sg_copy_desc d = {buf.data() + 32, buf.data(), 32 * 4, SG_COPY_HOST_TO_HOST, "h2h"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &d, nullptr, 0, &c));
  sg_pipeline_options o = host_options(1);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  for (uint32_t i = 0; i < 64; i++) buf[i] = i;
  // Swap directions: applied one at a time, src = buf+32 with the old dst
  // buf+32 would overlap; merged, it is a valid copy.
  sg_pipeline_bind binds[] = {sg_bind_copy_src(c, buf.data() + 32), sg_bind_copy_dst(c, buf.data())};
  sg_pipeline_batch batch = {binds, 2, nullptr};
  SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
  SG_ASSERT_OK(sg_pipeline_drain(p));
  for (uint32_t i = 0; i < 32; i++) EXPECT_EQ(buf[i], i + 32);
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.param_updates, 1u);
  // A copy's size can be bound too.
  sg_pipeline_bind sized = {SG_BIND_COPY_SRC, c, buf.data() + 40, 8 * 4, 0};
  sg_pipeline_batch b2 = {&sized, 1, nullptr};
  SG_ASSERT_OK(sg_pipeline_submit(p, &b2, nullptr));
  SG_ASSERT_OK(sg_pipeline_drain(p));
  for (uint32_t i = 0; i < 8; i++) EXPECT_EQ(buf[i], i + 40);
  EXPECT_EQ(buf[8], 40u) << "only 8 elements copied";
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// Calling into a pipeline from its own callback is refused (it would
// recurse into the reporting in progress); inspection is allowed.
TEST(PipelineArgs, NoReentryFromCallbacks) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, "e", nullptr, 0, nullptr));
  struct State {
    sg_pipeline *p = nullptr;
    std::vector<sg_status> got;
  } state;
  sg_pipeline_options o = host_options(2);
  o.user_data = &state;
  o.on_complete = [](uint64_t, sg_status, void *, void *u) {
    auto *s = static_cast<State *>(u);
    s->got.push_back(sg_pipeline_submit(s->p, nullptr, nullptr));
    s->got.push_back(sg_pipeline_drain(s->p));
    s->got.push_back(sg_pipeline_destroy(s->p));
    sg_pipeline_stats st;
    s->got.push_back(sg_pipeline_get_stats(s->p, &st));
  };
  o.bind = [](sg_pipeline_instance *, uint64_t, void *, void *u) -> int {
    auto *s = static_cast<State *>(u);
    return sg_pipeline_poll(s->p) == SG_ERR_INVALID_ARGUMENT ? 0 : 1;
  };
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &state.p));
  SG_ASSERT_OK(sg_pipeline_submit(state.p, nullptr, nullptr));
  SG_ASSERT_OK(sg_pipeline_drain(state.p));
  EXPECT_EQ(state.got, (std::vector<sg_status>{SG_ERR_INVALID_ARGUMENT, SG_ERR_INVALID_ARGUMENT,
                                               SG_ERR_INVALID_ARGUMENT, SG_OK}));
  SG_ASSERT_OK(sg_pipeline_destroy(state.p));
}

// With no options at all, a pipeline is made with the defaults.
TEST(PipelineArgs, DefaultOptions) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  // Instances run concurrently: the shared counter must be atomic.
  std::atomic<int> calls{0};
  sg_host_desc h = {[](void *c) { ++*static_cast<std::atomic<int> *>(c); return 0; }, &calls, "count"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, nullptr, &p));
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.depth, 3u);
  for (int i = 0; i < 5; i++) SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
  SG_ASSERT_OK(sg_pipeline_drain(p));
  EXPECT_EQ(calls, 5);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

}  // namespace
