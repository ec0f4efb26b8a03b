// Planned temporaries on the CUDA backend, in streams mode and graph mode
// (explicit and captured): kernels ordered only by declared accesses, whose
// intermediates are temporaries bound to their arguments, give the serial
// CPU reference bitwise over several launches, after an in-place update
// and after a topology change; the arena is device memory that stays put.
#include <algorithm>
#include <cstdio>

#include "gpu_util.h"

extern "C" const void *gtt_kernel_mix_u32(void);
extern "C" uint32_t gtt_mix(uint32_t a, uint32_t b, uint32_t salt);

namespace {

using gputest::DevMem;
using gputest::ModeTest;

constexpr uint32_t kN = 4096;

// One operation: dst = mix(a, b, salt) over kN elements; a slot < 2 is one
// of the two device buffers, else temporary slot - 2.
struct Op {
  uint32_t dst, a, b, salt;
};

std::vector<Op> random_ops(std::mt19937 &rng, uint32_t temps, uint32_t count) {
  std::vector<Op> ops;
  std::vector<bool> written(2 + temps, false);
  written[0] = written[1] = true;
  auto pick = [&]() {
    for (;;) {
      uint32_t s = rng() % (2 + temps);
      if (written[s]) return s;
    }
  };
  for (uint32_t i = 0; i < count; i++) {
    Op op{0, pick(), pick(), (uint32_t)rng()};
    op.dst = i + 1 == count ? 1 : (rng() % 4 ? 2 + rng() % temps : rng() % 2);
    written[op.dst] = true;
    ops.push_back(op);
  }
  return ops;
}

std::vector<uint32_t> reference(const std::vector<Op> &ops, uint32_t temps,
                                const std::vector<uint32_t> &in0,
                                const std::vector<uint32_t> &in1) {
  std::vector<std::vector<uint32_t>> m(2 + temps, std::vector<uint32_t>(kN, 0));
  m[0] = in0;
  m[1] = in1;
  for (auto &op : ops)
    for (uint32_t i = 0; i < kN; i++) m[op.dst][i] = gtt_mix(m[op.a][i], m[op.b][i], op.salt);
  std::vector<uint32_t> out = m[0];
  out.insert(out.end(), m[1].begin(), m[1].end());
  return out;
}

struct Built {
  sgtest::Graph g;
  std::vector<sg_temp> temps;
  std::vector<sg_node> nodes;
};

void add_op(Built &b, const Op &op, void *buf[2], sg_node *out) {
  void *ptr[3];
  const uint32_t slots[3] = {op.dst, op.a, op.b};
  for (int j = 0; j < 3; j++) ptr[j] = slots[j] < 2 ? buf[slots[j]] : nullptr;
  uint32_t n = kN, salt = op.salt;
  void *args[5] = {&ptr[0], &ptr[1], &ptr[2], &n, &salt};
  size_t sizes[5] = {sizeof(void *), sizeof(void *), sizeof(void *), 4, 4};
  sg_kernel_desc k{};
  k.func = gtt_kernel_mix_u32();
  k.grid = sg_dim3{16, 1, 1};
  k.block = sg_dim3{256, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 5;
  SG_ASSERT_OK(sg_graph_add_kernel(b.g, &k, nullptr, 0, out));
  sg_access acc[3];
  for (int j = 0; j < 3; j++) {
    acc[j] = sg_access{};
    acc[j].mode = j == 0 ? SG_ACCESS_WRITE : SG_ACCESS_READ;
    if (slots[j] < 2) {
      acc[j].ptr = buf[slots[j]];
      acc[j].bytes = kN * 4;
    } else {
      acc[j].temp = b.temps[slots[j] - 2];
      SG_ASSERT_OK(sg_graph_bind_temp(b.g, *out, (unsigned)j, acc[j].temp, 0));
    }
  }
  SG_ASSERT_OK(sg_graph_declare_access(b.g, *out, acc, 3));
}

class GpuTemps : public ModeTest {};

TEST_P(GpuTemps, DeclaredGraphsMatchTheSerialReference) {
  uint32_t seed = std::random_device{}();
  std::printf("GpuTemps: seed %u\n", seed);
  std::mt19937 rng(seed);
  const uint32_t temps = 6;
  std::vector<Op> ops = random_ops(rng, temps, 24);
  DevMem d0(kN * 4), d1(kN * 4);
  void *buf[2] = {d0.p, d1.p};
  auto in0 = gputest::random_u32(seed, kN), in1 = gputest::random_u32(seed + 1, kN);
  Built b;
  for (uint32_t t = 0; t < temps; t++) {
    sg_temp_desc td{};
    td.bytes = kN * 4;
    sg_temp h{};
    SG_ASSERT_OK(sg_graph_add_temp(b.g, &td, &h));
    b.temps.push_back(h);
  }
  for (auto &op : ops) {
    sg_node n{};
    add_op(b, op, buf, &n);
    if (HasFatalFailure()) return;
    b.nodes.push_back(n);
  }
  sg_exec_options o = options(4);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(b.g, &o, &e.e));
  sg_exec_memory mem;
  SG_ASSERT_OK(sg_exec_get_memory(e, &mem));
  EXPECT_EQ(mem.dag_order, GetParam().mode == SG_MODE_GRAPH && GetParam().build == SG_BUILD_EXPLICIT);
  EXPECT_LE(mem.arena_bytes, mem.no_reuse_bytes);
  void *t0 = nullptr;
  SG_ASSERT_OK(sg_exec_get_temp(e, b.temps[0], &t0));
  cudaPointerAttributes attr{};
  CUDA_ASSERT(cudaPointerGetAttributes(&attr, t0));
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  auto run = [&](const std::string &what) {
    gputest::write_u32(d0.p, in0);
    gputest::write_u32(d1.p, in1);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    auto got = gputest::read_u32(d0.p, kN), got1 = gputest::read_u32(d1.p, kN);
    got.insert(got.end(), got1.begin(), got1.end());
    ASSERT_EQ(got, reference(ops, temps, in0, in1)) << what << ", seed " << seed;
  };
  for (int i = 0; i < 3; i++) {
    run("launch " + std::to_string(i));
    if (HasFatalFailure()) return;
  }
  // An in-place parameter change keeps the bound addresses.
  uint32_t k = rng() % ops.size();
  ops[k].salt ^= 0x5bd1e995u;
  {
    void *ptr[3];
    const uint32_t slots[3] = {ops[k].dst, ops[k].a, ops[k].b};
    for (int j = 0; j < 3; j++) ptr[j] = slots[j] < 2 ? buf[slots[j]] : nullptr;
    uint32_t n = kN, salt = ops[k].salt;
    void *args[5] = {&ptr[0], &ptr[1], &ptr[2], &n, &salt};
    size_t sizes[5] = {sizeof(void *), sizeof(void *), sizeof(void *), 4, 4};
    sg_kernel_desc kd{};
    kd.func = gtt_kernel_mix_u32();
    kd.grid = sg_dim3{16, 1, 1};
    kd.block = sg_dim3{256, 1, 1};
    kd.args = args;
    kd.arg_sizes = sizes;
    kd.arg_count = 5;
    SG_ASSERT_OK(sg_exec_set_kernel(e, b.nodes[k], &kd));
    SG_ASSERT_OK(sg_graph_set_kernel(b.g, b.nodes[k], &kd));  // for the update below
  }
  run("after sg_exec_set_kernel");
  if (HasFatalFailure()) return;
  void *t0_after = nullptr;
  SG_ASSERT_OK(sg_exec_get_temp(e, b.temps[0], &t0_after));
  EXPECT_EQ(t0, t0_after);
  // A topology change plans the memory again.
  Op extra{1, 0, 2, 99};
  ops.push_back(extra);
  sg_node n{};
  add_op(b, extra, buf, &n);
  SG_ASSERT_OK(sg_exec_update(e, b.g));
  run("after a topology change");
}

// Copies and a memset whose sides are temporaries: host -> temporary,
// fill, kernel, temporary -> host, in every mode.
TEST_P(GpuTemps, CopiesAndMemsetsReachTheArena) {
  std::vector<uint32_t> in = gputest::random_u32(77, kN), out(kN, 0);
  sgtest::Graph g;
  sg_temp a{}, b{};
  sg_temp_desc td{};
  td.bytes = kN * 4;
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &a));
  SG_ASSERT_OK(sg_graph_add_temp(g, &td, &b));
  sg_copy_desc up{nullptr, in.data(), kN * 4, SG_COPY_AUTO, "up"};
  sg_memset_desc fill{nullptr, 11, 4, kN, "fill"};
  sg_copy_desc down{out.data(), nullptr, kN * 4, SG_COPY_AUTO, "down"};
  sg_node n_up{}, n_fill{}, n_mix{}, n_down{};
  SG_ASSERT_OK(sg_graph_add_copy_temp(g, &up, a, 0, sg_temp{}, 0, nullptr, 0, &n_up));
  SG_ASSERT_OK(sg_graph_add_memset_temp(g, &fill, b, 0, nullptr, 0, &n_fill));
  void *null = nullptr;
  uint32_t n = kN, salt = 3;
  void *args[5] = {&null, &null, &null, &n, &salt};
  size_t sizes[5] = {sizeof(void *), sizeof(void *), sizeof(void *), 4, 4};
  sg_kernel_desc k{};
  k.func = gtt_kernel_mix_u32();
  k.grid = sg_dim3{16, 1, 1};
  k.block = sg_dim3{256, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 5;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, &n_mix));
  SG_ASSERT_OK(sg_graph_bind_temp(g, n_mix, 0, b, 0));
  SG_ASSERT_OK(sg_graph_bind_temp(g, n_mix, 1, a, 0));
  SG_ASSERT_OK(sg_graph_bind_temp(g, n_mix, 2, b, 0));
  SG_ASSERT_OK(sg_graph_add_copy_temp(g, &down, sg_temp{}, 0, b, 0, nullptr, 0, &n_down));
  auto decl = [&](sg_node node, std::vector<sg_access> acc) {
    SG_ASSERT_OK(sg_graph_declare_access(g, node, acc.data(), acc.size()));
  };
  sg_access wa{}, wb{}, ra{}, rwb{}, rb{};
  wa.temp = ra.temp = a;
  wb.temp = rwb.temp = rb.temp = b;
  wa.mode = wb.mode = SG_ACCESS_WRITE;
  ra.mode = rb.mode = SG_ACCESS_READ;
  rwb.mode = SG_ACCESS_READ_WRITE;
  decl(n_up, {wa});
  decl(n_fill, {wb});
  decl(n_mix, {ra, rwb});
  decl(n_down, {rb});
  sg_exec_options o = options(4);
  o.staging.policy = SG_STAGING_AUTO;  // pageable sides: the library's own route
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int launch = 0; launch < 2; launch++) {
    std::fill(out.begin(), out.end(), 0);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    for (uint32_t i = 0; i < kN; i++)
      ASSERT_EQ(out[i], gtt_mix(in[i], 11, 3)) << "element " << i << ", launch " << launch;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuTemps, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

}  // namespace
