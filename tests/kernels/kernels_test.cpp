// The layer and signal kernels of streamgraph/kernels.h on random inputs,
// against the double-precision references of kernel_refs.h. Built twice:
// kernels_ref_host_test runs the host twins through the host backend (CI);
// kernels_ref_gpu_test (KT_GPU) runs the CUDA kernels in streams mode and in
// graph mode, built explicitly and by capture (label gpu; skips without a
// device). Every failure names the seed (SG_TEST_SEED replays it) and shape.
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "kernel_harness.h"
#include "kernel_refs.h"

namespace {

using kt::Buf;

class Kernels : public ::testing::TestWithParam<kt::Way> {
 protected:
  void SetUp() override {
    if (GetParam().backend == SG_BACKEND_CUDA && sg_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device";
  }
  const kt::Way &way() const { return GetParam(); }
  // A fresh generator for one case: the run's seed mixed with the case's
  // number, so each case can be replayed alone.
  std::mt19937 rng(uint32_t case_no) { return std::mt19937(kt::run_seed() * 1000003u + case_no); }
};

std::vector<float> normal(std::mt19937 &rng, size_t n, float mean, float sd) {
  std::normal_distribution<float> d(mean, sd);
  std::vector<float> v(n);
  for (auto &x : v) x = d(rng);
  return v;
}

std::vector<sg_complex_f32> complex_normal(std::mt19937 &rng, size_t n) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<sg_complex_f32> v(n);
  for (auto &x : v) x = {d(rng), d(rng)};
  return v;
}

struct RowsCols {
  size_t rows, cols;
};
// Small, odd, wider than a block; on the GPU also more rows than the grid
// cap (4096) and more elements than one wave of the capped grid (4096 x
// 256), which only the device's grid-stride loops care about (the sizes
// that exercise them would only slow the sanitizer builds down here).
#ifdef KT_GPU
#define KT_LARGE(...) __VA_ARGS__
#define KT_GPU_OR_HOST(gpu, host) gpu
#else
#define KT_GPU_OR_HOST(gpu, host) host
#define KT_LARGE(...)
#endif
const RowsCols kShapes[] = {{1, 1}, {3, 17}, {64, 1000}, {2, 5000} KT_LARGE(, {4200, 3}, {1100, 1024})};

TEST_P(Kernels, BiasActivation) {
  uint32_t case_no = 0;
  for (sg_activation act : {SG_ACTIVATION_NONE, SG_ACTIVATION_RELU, SG_ACTIVATION_GELU})
    for (const RowsCols &s : kShapes)
      for (int variant = 0; variant < 3; variant++) {  // bias; no bias; bias, in place
        case_no++;
        SCOPED_TRACE(kt::seed_note(case_no) + ", act " + std::to_string(act) + ", rows " +
                     std::to_string(s.rows) + ", cols " + std::to_string(s.cols) + ", variant " +
                     std::to_string(variant));
        auto r = rng(case_no);
        auto x = normal(r, s.rows * s.cols, 0.0f, 3.0f);
        auto bias = normal(r, s.cols, 0.5f, 1.0f);
        Buf<float> dx(way(), x), db(way(), bias), dy(way(), x.size());
        dy.poison();
        float *out = variant == 2 ? dx.get() : dy.get();
        sg_kernel_call call;
        sg_kernels_bias_act_f32(&call, out, dx.get(), variant == 1 ? nullptr : db.get(), s.rows,
                                s.cols, act);
        ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
        auto want = kt::bias_act_ref(x, variant == 1 ? nullptr : &bias, s.rows, s.cols, act);
        // erff is within a few ulp; 1 + erf(v) cancels for very negative v,
        // where the result is tiny: hence the absolute term.
        ASSERT_TRUE(kt::near_all(variant == 2 ? dx.read() : dy.read(), want, 4e-6, 1e-6));
      }
}

TEST_P(Kernels, SoftmaxRows) {
  uint32_t case_no = 100;
  for (const RowsCols &s : kShapes)
    for (float spread : {1.0f, 40.0f}) {  // 40: exp would overflow without the max
      case_no++;
      SCOPED_TRACE(kt::seed_note(case_no) + ", rows " + std::to_string(s.rows) + ", cols " +
                   std::to_string(s.cols) + ", spread " + std::to_string(spread));
      auto r = rng(case_no);
      auto x = normal(r, s.rows * s.cols, 5.0f, spread);
      Buf<float> dx(way(), x), dy(way(), x.size());
      dy.poison();
      sg_kernel_call call;
      sg_kernels_softmax_rows_f32(&call, dy.get(), dx.get(), s.rows, s.cols);
      ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
      ASSERT_TRUE(kt::near_all(dy.read(), kt::softmax_ref(x, s.rows, s.cols), 1e-4, 1e-9));
      // In place as well.
      sg_kernels_softmax_rows_f32(&call, dx.get(), dx.get(), s.rows, s.cols);
      ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
      ASSERT_TRUE(kt::near_all(dx.read(), kt::softmax_ref(x, s.rows, s.cols), 1e-4, 1e-9));
    }
}

TEST_P(Kernels, LayerNorm) {
  uint32_t case_no = 200;
  for (const RowsCols &s : kShapes)
    for (int affine = 0; affine < 2; affine++) {
      case_no++;
      SCOPED_TRACE(kt::seed_note(case_no) + ", rows " + std::to_string(s.rows) + ", cols " +
                   std::to_string(s.cols) + ", affine " + std::to_string(affine));
      auto r = rng(case_no);
      auto x = normal(r, s.rows * s.cols, 10.0f, 2.0f);  // off-centre: the mean matters
      auto gamma = normal(r, s.cols, 1.0f, 0.5f), beta = normal(r, s.cols, 0.0f, 1.0f);
      Buf<float> dx(way(), x), dg(way(), gamma), dbeta(way(), beta), dy(way(), x.size());
      dy.poison();
      const float eps = 1e-5f;
      sg_kernel_call call;
      sg_kernels_layer_norm_f32(&call, dy.get(), dx.get(), affine ? dg.get() : nullptr,
                                affine ? dbeta.get() : nullptr, s.rows, s.cols, eps);
      ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
      auto want = kt::layer_norm_ref(x, affine ? gamma.data() : nullptr,
                                     affine ? beta.data() : nullptr, s.rows, s.cols, eps);
      // Inputs near 10 carry float rounding of about 1e-6 each; over a few
      // thousand of them the mean and variance drift by about 1e-5.
      ASSERT_TRUE(kt::near_all(dy.read(), want, 1e-4, 2e-4));
    }
}

TEST_P(Kernels, ComplexMultiplyFilterBank) {
  struct Shape {
    size_t len, rows, filters;
  } shapes[] = {{1, 1, 1}, {17, 3, 1}, {1024, 5, 4}, {4097, 2, 3} KT_LARGE(, {8192, 130, 1})};
  uint32_t case_no = 300;
  for (const Shape &s : shapes)
    for (int in_place = 0; in_place < (s.filters == 1 ? 2 : 1); in_place++) {
      case_no++;
      SCOPED_TRACE(kt::seed_note(case_no) + ", len " + std::to_string(s.len) + ", rows " +
                   std::to_string(s.rows) + ", filters " + std::to_string(s.filters) +
                   (in_place ? ", in place" : ""));
      auto r = rng(case_no);
      auto a = complex_normal(r, s.len * s.rows), b = complex_normal(r, s.len * s.filters);
      const float scale = 1.0f / float(s.len) + 0.25f;
      Buf<sg_complex_f32> da(way(), a), dbank(way(), b), dout(way(), s.len * s.rows * s.filters);
      dout.poison();
      sg_complex_f32 *out = in_place ? da.get() : dout.get();
      sg_kernel_call call;
      sg_kernels_cmul_c32(&call, out, da.get(), dbank.get(), s.len, s.rows, s.filters, scale);
      ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
      auto got_c = in_place ? da.read() : dout.read();
      std::vector<float> got(2 * got_c.size());
      std::memcpy(got.data(), got_c.data(), got.size() * sizeof(float));
      // |a| |b| is about 2 here: 1e-6 absolute is a few ulp of the terms.
      ASSERT_TRUE(kt::near_all(got, kt::cmul_ref(a, b, s.len, s.rows, s.filters, scale), 1e-6,
                               1e-6));
    }
}

TEST_P(Kernels, OverlapSaveAssembly) {
  struct Shape {
    size_t history, block_len, hop, blocks;
  } shapes[] = {{0, 8, 8, 3}, {3, 16, 13, 5}, {255, 1024, 769, 7}, {0, 10, 4, 6}, {1, 2, 1, 1}};
  uint32_t case_no = 400;
  for (const Shape &s : shapes) {
    case_no++;
    SCOPED_TRACE(kt::seed_note(case_no) + ", history " + std::to_string(s.history) +
                 ", block_len " + std::to_string(s.block_len) + ", hop " +
                 std::to_string(s.hop) + ", blocks " + std::to_string(s.blocks));
    auto r = rng(case_no);
    // The stream as one array: history, then the chunk.
    size_t stream_len = (s.blocks - 1) * s.hop + s.block_len;
    auto stream = complex_normal(r, stream_len);
    std::vector<sg_complex_f32> hist(stream.begin(), stream.begin() + s.history);
    std::vector<sg_complex_f32> chunk(stream.begin() + s.history, stream.end());
    Buf<sg_complex_f32> dh(way(), hist), dc(way(), chunk), dout(way(), s.block_len * s.blocks);
    dout.poison();
    sg_kernel_call call;
    sg_kernels_ols_assemble_c32(&call, dout.get(), dh.get(), dc.get(), s.history, s.block_len,
                                s.hop, s.blocks);
    ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
    std::vector<sg_complex_f32> want;
    for (size_t b = 0; b < s.blocks; b++)
      for (size_t j = 0; j < s.block_len; j++) want.push_back(stream[b * s.hop + j]);
    ASSERT_TRUE(kt::equal_all(dout.read(), want));
  }
}

TEST_P(Kernels, OverlapSaveDiscardAndDecimate) {
  struct Shape {
    size_t block_len, discard, blocks, factor;
  } shapes[] = {{8, 0, 3, 1}, {16, 3, 5, 1}, {1024, 256, 7, 4}, {64, 15, 9, 7}, {8192, 1024, 40, 32}};
  uint32_t case_no = 500;
  for (const Shape &s : shapes) {
    case_no++;
    SCOPED_TRACE(kt::seed_note(case_no) + ", block_len " + std::to_string(s.block_len) +
                 ", discard " + std::to_string(s.discard) + ", blocks " +
                 std::to_string(s.blocks) + ", factor " + std::to_string(s.factor));
    auto r = rng(case_no);
    auto blocks = complex_normal(r, s.block_len * s.blocks);
    size_t per_block = (s.block_len - s.discard) / s.factor;
    Buf<sg_complex_f32> din(way(), blocks), dout(way(), per_block * s.blocks);
    dout.poison();
    sg_kernel_call call;
    sg_kernels_ols_discard_c32(&call, dout.get(), din.get(), s.block_len, s.discard, s.blocks,
                               s.factor);
    ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
    // The kept samples of all blocks, end to end, then every factor-th.
    std::vector<sg_complex_f32> kept, want;
    for (size_t b = 0; b < s.blocks; b++)
      for (size_t j = s.discard; j < s.block_len; j++) kept.push_back(blocks[b * s.block_len + j]);
    for (size_t k = 0; k < kept.size(); k += s.factor) want.push_back(kept[k]);
    ASSERT_TRUE(kt::equal_all(dout.read(), want));
  }
}

TEST_P(Kernels, Decimate) {
  struct Shape {
    size_t n_out, factor;
  } shapes[] = {{1, 1}, {1000, 3}, {70000, 16} KT_LARGE(, {1100000, 1})};
  uint32_t case_no = 600;
  for (const Shape &s : shapes) {
    case_no++;
    SCOPED_TRACE(kt::seed_note(case_no) + ", n_out " + std::to_string(s.n_out) + ", factor " +
                 std::to_string(s.factor));
    auto r = rng(case_no);
    auto in = complex_normal(r, (s.n_out - 1) * s.factor + 1);
    Buf<sg_complex_f32> din(way(), in), dout(way(), s.n_out);
    dout.poison();
    sg_kernel_call call;
    sg_kernels_decimate_c32(&call, dout.get(), din.get(), s.n_out, s.factor);
    ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
    std::vector<sg_complex_f32> want;
    for (size_t k = 0; k < s.n_out; k++) want.push_back(in[k * s.factor]);
    ASSERT_TRUE(kt::equal_all(dout.read(), want));
  }
}

TEST_P(Kernels, PowerDb) {
  uint32_t case_no = 700;
  for (size_t n : {size_t(1), size_t(1000), size_t(KT_GPU_OR_HOST(1100000, 70000))}) {
    case_no++;
    SCOPED_TRACE(kt::seed_note(case_no) + ", n " + std::to_string(n));
    auto r = rng(case_no);
    auto in = complex_normal(r, n);
    // Zeros, tiny values (p below FLT_MIN) and a wide range of magnitudes.
    std::uniform_real_distribution<float> exponent(-25.0f, 10.0f);
    for (size_t i = 0; i < n; i++) {
      float m = std::pow(10.0f, exponent(r));
      in[i].re *= m;
      in[i].im *= m;
      if (i % 97 == 5) in[i] = {0.0f, 0.0f};
    }
    Buf<sg_complex_f32> din(way(), in);
    Buf<float> dout(way(), n);
    dout.poison();
    sg_kernel_call call;
    sg_kernels_power_db_c32(&call, dout.get(), din.get(), n);
    ASSERT_NO_FATAL_FAILURE(kt::run(way(), call));
    std::vector<double> want(n);
    for (size_t i = 0; i < n; i++) want[i] = kt::power_db_ref(in[i]);
    ASSERT_TRUE(kt::near_all(dout.read(), want, 1e-6, 1e-4));
  }
}

#ifdef KT_GPU
INSTANTIATE_TEST_SUITE_P(Cuda, Kernels, ::testing::ValuesIn(kt::cuda_ways()), kt::way_name);
#else
INSTANTIATE_TEST_SUITE_P(Host, Kernels, ::testing::ValuesIn(kt::host_ways()), kt::way_name);

// The launch shapes the GPU relies on: row kernels one 256-thread block per
// row (their reductions assume it), capped at 4096 blocks; elementwise
// kernels enough 256-thread blocks to cover the elements, same cap.
TEST(KernelShapes, RowAndElementKernels) {
  sg_kernel_call call;
  float f = 0;
  sg_kernels_softmax_rows_f32(&call, &f, &f, 10, 5000);
  EXPECT_EQ(call.desc.block.x, 256u);
  EXPECT_EQ(call.desc.grid.x, 10u);
  sg_kernels_layer_norm_f32(&call, &f, &f, nullptr, nullptr, 100000, 3, 1e-5f);
  EXPECT_EQ(call.desc.grid.x, 4096u);
  EXPECT_EQ(call.desc.arg_count, 7u);
  sg_kernels_bias_act_f32(&call, &f, &f, nullptr, 3, 1000, SG_ACTIVATION_GELU);
  EXPECT_EQ(call.desc.grid.x, 12u);  // 3000 elements
  EXPECT_EQ(call.desc.arg_count, 6u);
  sg_complex_f32 c{};
  sg_kernels_ols_discard_c32(&call, &c, &c, 1024, 256, 10, 4);
  EXPECT_EQ(call.desc.grid.x, 8u);  // 10 x 192 kept samples
  sg_kernels_cmul_c32(&call, &c, &c, &c, 0, 5, 1, 1.0f);
  EXPECT_EQ(call.desc.grid.x, 1u) << "nothing to do is still a valid launch";
  EXPECT_EQ(call.desc.block.x, 1u);
}
#endif

}  // namespace
