// Shared pieces of the pipeline tests: the template graph a pipeline runs
// (upload -> work kernel -> optional check -> download), per-instance device
// buffers made in setup, per-batch host buffers (pageable or pinned), a
// serial CPU reference, and a recorder of completions.
#ifndef SG_PIPELINE_FIXTURE_H
#define SG_PIPELINE_FIXTURE_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace pipetest {

constexpr uint32_t kPoison = 0xdeadbeefu;

// What a batch's "check" host node sees; failing makes it return 5.
struct Check {
  std::atomic<int> calls{0};
  bool fail = false;
};

inline int check_fn(void *p) {
  auto *c = static_cast<Check *>(p);
  c->calls++;
  return c->fail ? 5 : 0;
}

inline uint32_t rounds_of(uint64_t batch) { return 1 + static_cast<uint32_t>(batch % 4); }

// out[j] = work(in[j], j, rounds): what the work_u32 kernel computes.
inline void reference(const uint32_t *in, uint32_t *out, size_t n, uint32_t rounds) {
  for (size_t j = 0; j < n; j++) {
    uint32_t v = in[j];
    for (uint32_t r = 0; r < rounds; r++) v = sg_kernels_mix(v, static_cast<uint32_t>(j), r);
    out[j] = v;
  }
}

// Host buffers of one batch: pageable (malloc) or pinned (sg_mem_alloc).
struct HostBuffer {
  uint32_t *p = nullptr;
  bool pinned = false;
  HostBuffer(sg_backend backend, bool pin, size_t n) : pinned(pin) {
    size_t bytes = n * sizeof(uint32_t);
    if (pin) {
      void *v = nullptr;
      EXPECT_EQ(sg_mem_alloc(backend, SG_MEMORY_HOST_PINNED, 0, bytes, &v), SG_OK) << sg_last_error();
      p = static_cast<uint32_t *>(v);
    } else {
      p = static_cast<uint32_t *>(std::malloc(bytes));
    }
  }
  ~HostBuffer() {
    if (pinned) sg_mem_free(p); else std::free(p);
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
};

// The template graph: h2d (in -> dev), k = work_u32(dev, n, rounds),
// optionally a host node "check" after k, d2h (dev -> out). Built with
// placeholder buffers; instances rebind the device side in setup, batches
// the host side and the rounds. The placeholders' host memory is of the kind
// the batches will bind (`pinned`): on the GPU a copy whose host side changes
// kind is carried out differently, which in graph mode means a rebuild.
struct Chain {
  sg_backend backend;
  size_t n;
  sg_graph *g = nullptr;
  sg_node h2d{}, k{}, check{}, d2h{};
  bool has_check;
  void *tmpl_dev = nullptr;
  HostBuffer tmpl_in, tmpl_out;
  Check tmpl_check;

  Chain(sg_backend b, size_t elements, bool with_check, bool pinned = false)
      : backend(b), n(elements), has_check(with_check), tmpl_in(b, pinned, elements),
        tmpl_out(b, pinned, elements) {
    size_t bytes = n * sizeof(uint32_t);
    EXPECT_EQ(sg_graph_create(&g), SG_OK);
    EXPECT_EQ(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, bytes, &tmpl_dev), SG_OK) << sg_last_error();
    sg_copy_desc up = {tmpl_dev, tmpl_in.p, bytes, SG_COPY_HOST_TO_DEVICE, "upload"};
    EXPECT_EQ(sg_graph_add_copy(g, &up, nullptr, 0, &h2d), SG_OK) << sg_last_error();
    sg_kernel_call call;
    sg_kernels_work_u32(&call, static_cast<uint32_t *>(tmpl_dev), n, 1);
    call.desc.name = "work";
    EXPECT_EQ(sg_graph_add_kernel(g, &call.desc, &h2d, 1, &k), SG_OK) << sg_last_error();
    sg_node last = k;
    if (has_check) {
      sg_host_desc h = {check_fn, &tmpl_check, "check"};
      EXPECT_EQ(sg_graph_add_host(g, &h, &k, 1, &check), SG_OK) << sg_last_error();
      last = check;
    }
    sg_copy_desc down = {tmpl_out.p, tmpl_dev, bytes, SG_COPY_DEVICE_TO_HOST, "download"};
    EXPECT_EQ(sg_graph_add_copy(g, &down, &last, 1, &d2h), SG_OK) << sg_last_error();
  }
  ~Chain() {
    if (g) sg_graph_destroy(g);
    sg_mem_free(tmpl_dev);
  }
  Chain(const Chain &) = delete;
  Chain &operator=(const Chain &) = delete;
};

// Per-instance state made by setup, freed by teardown.
struct Instance {
  void *dev = nullptr;
};

struct Counters {
  std::atomic<int> setups{0}, teardowns{0};
  int fail_setup_at = -1; // instance index whose setup fails
};


struct Batch;

// Completions as on_complete saw them, checked for output at report time.
struct Recorder {
  const std::vector<Batch *> *batches = nullptr;
  uint64_t first_batch = 0; // batch indices keep counting across rounds: batches[i] is batch first_batch + i
  std::vector<uint64_t> order;
  std::vector<sg_status> status;
  std::vector<std::string> messages;
  std::vector<std::string> output_errors; // per report: "" when output matched
};

// The user_data of every callback.
struct Ctx {
  Chain *chain = nullptr;
  Counters counters;
  Recorder rec;
};

inline int chain_setup(sg_pipeline_instance *inst, void *user) {
  auto *ctx = static_cast<Ctx *>(user);
  if (static_cast<int>(inst->index) == ctx->counters.fail_setup_at) return 7;
  auto *mine = new Instance;
  size_t bytes = ctx->chain->n * sizeof(uint32_t);
  if (sg_mem_alloc(ctx->chain->backend, SG_MEMORY_DEVICE, 0, bytes, &mine->dev) != SG_OK) {
    delete mine;
    return 1;
  }
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(ctx->chain->h2d, mine->dev),
      sg_bind_kernel_arg(ctx->chain->k, 0, &mine->dev, sizeof mine->dev),
      sg_bind_copy_src(ctx->chain->d2h, mine->dev),
  };
  if (sg_pipeline_instance_bind(inst, binds, 3) != SG_OK) {
    sg_mem_free(mine->dev);
    delete mine;
    return 2;
  }
  inst->data = mine;
  ctx->counters.setups++;
  return 0;
}

inline void chain_teardown(sg_pipeline_instance *inst, void *user) {
  auto *ctx = static_cast<Ctx *>(user);
  auto *mine = static_cast<Instance *>(inst->data);
  sg_mem_free(mine->dev);
  delete mine;
  ctx->counters.teardowns++;
}

// One batch's host side and what it binds.
struct Batch {
  HostBuffer in, out;
  uint32_t rounds;
  Check check;
  std::vector<sg_pipeline_bind> binds;
  Batch(const Chain &c, bool pinned, uint64_t index)
      : in(c.backend, pinned, c.n), out(c.backend, pinned, c.n), rounds(rounds_of(index)) {
    for (size_t j = 0; j < c.n; j++)
      in.p[j] = sg_kernels_mix(static_cast<uint32_t>(j), static_cast<uint32_t>(index), 77u);
    for (size_t j = 0; j < c.n; j++) out.p[j] = kPoison;
    binds.push_back(sg_bind_copy_src(c.h2d, in.p));
    binds.push_back(sg_bind_copy_dst(c.d2h, out.p));
    binds.push_back(sg_bind_kernel_arg(c.k, 2, &rounds, sizeof rounds));
    if (c.has_check) binds.push_back(sg_bind_host_data(c.check, &check));
  }
  sg_pipeline_batch desc(void *user_data = nullptr) const {
    return sg_pipeline_batch{binds.data(), binds.size(), user_data};
  }
  // Empty string when the output equals the serial reference.
  std::string mismatch(size_t n) const {
    std::vector<uint32_t> want(n);
    reference(in.p, want.data(), n, rounds);
    for (size_t j = 0; j < n; j++)
      if (out.p[j] != want[j])
        return "element " + std::to_string(j) + ": got " + std::to_string(out.p[j]) +
               ", want " + std::to_string(want[j]);
    return "";
  }
};

inline void record(uint64_t batch, sg_status st, void *batch_data, void *user) {
  auto *ctx = static_cast<Ctx *>(user);
  Recorder *r = &ctx->rec;
  r->order.push_back(batch);
  r->status.push_back(st);
  r->messages.push_back(st ? sg_last_error() : "");
  std::string err;
  uint64_t slot = batch - r->first_batch;
  Batch *want = r->batches && batch >= r->first_batch && slot < r->batches->size()
                    ? (*r->batches)[slot]
                    : nullptr;
  if (st == SG_OK && want) err = want->mismatch(ctx->chain->n);
  if (batch_data != want) err += " (wrong batch_data)";
  r->output_errors.push_back(err);
}

// Options for a pipeline over `ctx->chain`: setup/teardown per instance,
// completions recorded.
inline sg_pipeline_options chain_options(Ctx *ctx, unsigned depth, sg_exec_mode mode) {
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.exec.backend = ctx->chain->backend;
  o.exec.mode = mode;
  o.setup = chain_setup;
  o.teardown = chain_teardown;
  o.on_complete = record;
  o.user_data = ctx;
  return o;
}

// `count` batches of `chain`, owned here; list[i] is batch i. pinned(i) says
// whether batch i uses pinned host buffers.
struct Batches {
  std::vector<std::unique_ptr<Batch>> owned;
  std::vector<Batch *> list;
  template <class Pinned>
  Batches(Chain &chain, unsigned count, Pinned pinned) {
    for (unsigned i = 0; i < count; i++) {
      owned.emplace_back(new Batch(chain, pinned(i), i));
      list.push_back(owned.back().get());
    }
  }
};

// A gate a host node waits on: holds a batch in flight until released.
using Gate = sgtest::HostGate;
inline int gate_fn(void *p) { return Gate::wait_fn(p); }

}  // namespace pipetest

#endif
