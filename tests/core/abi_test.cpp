// The ABI of structs crossing the API (docs/abi.md): a program passes the
// size its compiler gave each struct (the headers' inline functions do), so
// a struct of a newer layout (fields appended) or of the first layout works
// with this library. Simulated here with structs one field longer than
// this library's, calling the exported <name>_sized entry points directly.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "sg_test_util.h"

namespace {

// A struct as a newer header might lay it out: this library's, then one
// more field.
template <class T>
struct Newer {
  T known;
  uint64_t added;
};

int nothing(void *) { return 0; }

TEST(Abi, NewerInputStructsWithTheirNewFieldsUnsetAreAccepted) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  static char a[64], b[64];
  Newer<sg_copy_desc> c{{b, a, sizeof a, SG_COPY_HOST_TO_HOST, "copy"}, 0};
  sg_node n;
  SG_ASSERT_OK(sg_graph_add_copy_sized(g, &c.known, sizeof c, nullptr, 0, &n));
  const char *name = nullptr;
  SG_ASSERT_OK(sg_graph_node_name(g, n, &name));
  EXPECT_STREQ(name, "copy");

  // A field this library does not know, set: refused, saying why.
  c.added = 1;
  EXPECT_EQ(sg_graph_add_copy_sized(g, &c.known, sizeof c, nullptr, 0, nullptr),
            SG_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(sg_last_error()).find("newer streamgraph"), std::string::npos)
      << sg_last_error();
  EXPECT_NE(std::string(sg_last_error()).find("sg_graph_add_copy"), std::string::npos);

  // Smaller than any layout ever published: refused.
  EXPECT_EQ(sg_graph_add_copy_sized(g, &c.known, offsetof(sg_copy_desc, name), nullptr, 0,
                                    nullptr),
            SG_ERR_INVALID_ARGUMENT);
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 1u);

  Newer<sg_host_desc> h{{nothing, nullptr, "h"}, 0};
  SG_ASSERT_OK(sg_graph_add_host_sized(g, &h.known, sizeof h, &n, 1, nullptr));
  // The checks after the layout's are the function's own (n is a copy node).
  EXPECT_EQ(sg_graph_set_host_sized(g, n, &h.known, sizeof h), SG_ERR_INVALID_ARGUMENT);

  Newer<sg_exec_options> o{};
  sg_exec_options_init_sized(&o.known, sizeof o);
  EXPECT_EQ(o.added, 0u) << "an options struct's unknown tail is zeroed by init";
  o.known.backend = SG_BACKEND_HOST;
  o.known.trace = 1;
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create_sized(g, &o.known, sizeof o, &e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);

  // Outputs: a newer struct gets this library's fields and zero beyond.
  Newer<sg_exec_stats> st;
  std::memset(&st, 0xA5, sizeof st);
  SG_ASSERT_OK(sg_exec_get_stats_sized(e, &st.known, sizeof st));
  EXPECT_EQ(st.known.launches, 1u);
  EXPECT_EQ(st.added, 0u);
  EXPECT_EQ(sg_exec_get_stats_sized(e, &st.known, 4), SG_ERR_INVALID_ARGUMENT);

  // Arrays: records at the caller's stride.
  std::vector<Newer<sg_trace_record>> rec(3);
  std::memset(rec.data(), 0xA5, rec.size() * sizeof rec[0]);
  size_t n_rec = 0;
  SG_ASSERT_OK(sg_exec_get_trace_sized(e, &rec[0].known, sizeof rec[0], rec.size(), &n_rec));
  EXPECT_EQ(n_rec, 2u);
  for (size_t i = 0; i < n_rec; i++) {
    EXPECT_EQ(rec[i].known.launch, 1u) << i;
    EXPECT_LE(rec[i].known.start_ns, rec[i].known.end_ns) << i;
    EXPECT_EQ(rec[i].added, 0u) << i;
  }
  EXPECT_EQ(rec[2].added, 0xA5A5A5A5A5A5A5A5u) << "past the records: untouched";
  SG_ASSERT_OK(sg_exec_destroy(e));
}

TEST(Abi, PipelineBatchesAndBindsOfANewerLayout) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  static uint32_t src[2][16], dst[16];
  sg_copy_desc c = {dst, src[0], sizeof dst, SG_COPY_HOST_TO_HOST, "copy"};
  sg_node n;
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &n));
  Newer<sg_pipeline_options> po{};
  sg_pipeline_options_init_sized(&po.known, sizeof po);
  EXPECT_EQ(po.known.depth, 3u);
  po.known.depth = 1;
  po.known.exec.backend = SG_BACKEND_HOST;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create_sized(g, &po.known, sizeof po, &p));
  for (int b = 0; b < 2; b++) {
    for (int i = 0; i < 16; i++) src[b][i] = uint32_t(b * 100 + i);
    Newer<sg_pipeline_bind> bind{sg_bind_copy_src(n, src[b]), 0};
    Newer<sg_pipeline_batch> batch{{&bind.known, 1, nullptr}, 0};
    SG_ASSERT_OK(sg_pipeline_submit_sized(p, &batch.known, sizeof batch, sizeof bind, nullptr));
    SG_ASSERT_OK(sg_pipeline_drain(p));
    EXPECT_EQ(std::memcmp(dst, src[b], sizeof dst), 0) << "batch " << b;
    bind.added = 7;  // a field of a newer bind, set
    EXPECT_EQ(sg_pipeline_submit_sized(p, &batch.known, sizeof batch, sizeof bind, nullptr),
              SG_ERR_UNSUPPORTED);
  }
  Newer<sg_pipeline_stats> st;
  std::memset(&st, 0xA5, sizeof st);
  SG_ASSERT_OK(sg_pipeline_get_stats_sized(p, &st.known, sizeof st));
  EXPECT_EQ(st.known.submitted, 2u);
  EXPECT_EQ(st.added, 0u);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// The layouts of a program compiled before sg_exec_options.trace_every:
// sg_exec_options ended at trace_launches, and sg_pipeline_options (which
// embeds it) had every field after `exec` that much earlier. Both are read
// as they were (trace_every 0: every launch traced) and init fills them at
// their old offsets.
struct ExecOptionsV1 {
  sg_backend backend;
  sg_exec_mode mode;
  sg_graph_build build;
  unsigned max_streams;
  int device;
  sg_staging_options staging;
  int trace;
  unsigned trace_launches;
};
struct PipelineOptionsV1 {
  unsigned depth;
  ExecOptionsV1 exec;
  sg_pipeline_setup_fn setup;
  sg_pipeline_teardown_fn teardown;
  sg_pipeline_bind_fn bind;
  sg_pipeline_complete_fn on_complete;
  void *user_data;
  const int *devices;
  unsigned device_count;
  unsigned queue;
};

TEST(Abi, OptionsOfTheLayoutBeforeTraceEvery) {
  sgtest::LeakCheck leaks;
  static_assert(sizeof(ExecOptionsV1) < sizeof(sg_exec_options), "sg_exec_options grew");
  static_assert(sizeof(PipelineOptionsV1) < sizeof(sg_pipeline_options), "and the pipeline's");
  sgtest::Graph g;
  static uint32_t src[2][16], dst[16];
  sg_copy_desc c = {dst, src[0], sizeof dst, SG_COPY_HOST_TO_HOST, "copy"};
  sg_node n;
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &n));

  ExecOptionsV1 eo;
  std::memset(&eo, 0xA5, sizeof eo);
  sg_exec_options_init_sized(reinterpret_cast<sg_exec_options *>(&eo), sizeof eo);
  EXPECT_EQ(eo.trace, 0);
  EXPECT_EQ(eo.trace_launches, 0u);
  eo.backend = SG_BACKEND_HOST;
  eo.trace = 1;
  sg_exec *e = nullptr;
  SG_ASSERT_OK(
      sg_exec_create_sized(g, reinterpret_cast<const sg_exec_options *>(&eo), sizeof eo, &e));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_trace_record r;
  size_t count = 0;
  for (uint64_t l = 1; l <= 3; l++) SG_EXPECT_OK(sg_exec_get_launch_trace(e, l, &r, 1, &count));
  SG_ASSERT_OK(sg_exec_destroy(e));

  PipelineOptionsV1 po;
  std::memset(&po, 0xA5, sizeof po);
  sg_pipeline_options_init_sized(reinterpret_cast<sg_pipeline_options *>(&po), sizeof po);
  EXPECT_EQ(po.depth, 3u);
  EXPECT_EQ(po.queue, 2u) << "the last field, at its old offset";
  EXPECT_EQ(po.exec.trace_launches, 0u);
  EXPECT_EQ(po.setup, nullptr);
  EXPECT_EQ(po.devices, nullptr);
  EXPECT_EQ(po.device_count, 0u);
  po.depth = 1;
  po.queue = 1;
  po.exec.backend = SG_BACKEND_HOST;
  po.exec.trace = 1;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create_sized(g, reinterpret_cast<const sg_pipeline_options *>(&po),
                                        sizeof po, &p));
  for (int b = 0; b < 2; b++) {
    for (int i = 0; i < 16; i++) src[b][i] = uint32_t(b * 100 + i);
    sg_pipeline_bind bind = sg_bind_copy_src(n, src[b]);
    sg_pipeline_batch batch = {&bind, 1, nullptr};
    SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
    SG_ASSERT_OK(sg_pipeline_drain(p));
    EXPECT_EQ(std::memcmp(dst, src[b], sizeof dst), 0) << "batch " << b;
  }
  sg_pipeline_stats st;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &st));
  EXPECT_EQ(st.submitted, 2u);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  // Below the first layout: refused.
  EXPECT_EQ(sg_pipeline_create_sized(g, reinterpret_cast<const sg_pipeline_options *>(&po),
                                     offsetof(PipelineOptionsV1, user_data), &p),
            SG_ERR_INVALID_ARGUMENT);
}

}  // namespace
