// A stream-function node doing a cuBLAS call, in streams mode (called at
// every launch on the stream it is given) and in graph mode (called once,
// its work captured into a child graph and replayed). The node owns its
// cuBLAS handle and workspace; its `release` frees them when the last graph
// or executable holding the node is gone, never while a graph that embeds
// the workspace can still run.
#include <cublas_v2.h>

#include <atomic>

#include "gpu_util.h"

namespace {

constexpr int kDim = 64;
constexpr size_t kWorkspaceBytes = 32u << 20;  // what cuBLAS asks for on Hopper

struct Gemm {
  cublasHandle_t handle = nullptr;
  void *workspace = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;  // device, kDim x kDim, column-major
  std::atomic<int> calls{0};
  std::atomic<int> *released = nullptr;
};

// C = A * B. cublasSetStream resets the workspace to cuBLAS's own pool, so
// the workspace is set after it, before the GEMM: nothing is allocated
// while the call is captured.
int gemm(void *stream, void *p) {
  Gemm *g = static_cast<Gemm *>(p);
  g->calls.fetch_add(1);
  if (cublasSetStream(g->handle, static_cast<cudaStream_t>(stream)) != CUBLAS_STATUS_SUCCESS)
    return 1;
  if (cublasSetWorkspace(g->handle, g->workspace, kWorkspaceBytes) != CUBLAS_STATUS_SUCCESS)
    return 2;
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t st = cublasSgemm(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, kDim, kDim, kDim, &one,
                                  g->a, kDim, g->b, kDim, &zero, g->c, kDim);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 3;
}

void release_gemm(void *p) {
  Gemm *g = static_cast<Gemm *>(p);
  cublasDestroy(g->handle);
  cudaFree(g->workspace);
  g->released->fetch_add(1);
}

std::vector<float> small_ints(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(kDim * kDim);
  for (auto &x : v) x = static_cast<float>(static_cast<int>(rng() % 9) - 4);
  return v;
}

class Cublas : public gputest::ModeTest {};

TEST_P(Cublas, StreamFunctionNodeRunsAGemm) {
  const size_t bytes = kDim * kDim * sizeof(float);
  gputest::DevMem a(bytes), b(bytes), c(bytes);
  gputest::PinnedMem out(bytes);
  std::atomic<int> released{0};
  Gemm *gm = new Gemm;
  gm->a = a.as<float>();
  gm->b = b.as<float>();
  gm->c = c.as<float>();
  gm->released = &released;
  ASSERT_EQ(cublasCreate(&gm->handle), CUBLAS_STATUS_SUCCESS);
  CUDA_ASSERT(cudaMalloc(&gm->workspace, kWorkspaceBytes));
  // One call outside any capture first, as with any library that sets
  // itself up lazily (loads kernels, sizes caches) on its first call.
  {
    cudaStream_t warm;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&warm, cudaStreamNonBlocking));
    ASSERT_EQ(gemm(warm, gm), 0);
    CUDA_ASSERT(cudaStreamSynchronize(warm));
    CUDA_ASSERT(cudaStreamDestroy(warm));
    gm->calls = 0;
  }
  CUDA_ASSERT(cudaDeviceSynchronize());

  sg_graph *g = nullptr;
  SG_ASSERT_OK(sg_graph_create(&g));
  sg_stream_fn_desc sf = {gemm, gm, release_gemm, nullptr, "sgemm"};
  sg_node n_gemm;
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &sf, nullptr, 0, &n_gemm));
  sg_copy_desc cp = {out.p, c.p, bytes, SG_COPY_AUTO, "result"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_gemm, 1, nullptr));
  sg_exec_options o = options();
  sg_exec *x = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x));
  SG_ASSERT_OK(sg_graph_destroy(g));  // the executable keeps the node alive
  EXPECT_EQ(released.load(), 0);

  for (uint32_t round = 0; round < 3; round++) {
    // Fresh inputs in the same buffers: the captured GEMM reads them anew.
    auto ha = small_ints(10 + round), hb = small_ints(20 + round);
    CUDA_ASSERT(cudaMemcpy(a.p, ha.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(b.p, hb.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaDeviceSynchronize());  // pageable copies may return before their DMA lands
    gputest::poison(c.p, bytes);
    std::memset(out.p, 0xA5, bytes);
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    const float *got = out.as<float>();
    for (int col = 0; col < kDim; col++)
      for (int row = 0; row < kDim; row++) {
        float want = 0;
        for (int k = 0; k < kDim; k++) want += ha[k * kDim + row] * hb[col * kDim + k];
        ASSERT_NEAR(got[col * kDim + row], want, 1e-3f) << "round " << round << " (" << row
                                                         << "," << col << ")";
      }
  }
  EXPECT_EQ(gm->calls.load(), graph_mode() ? 1 : 3);
  EXPECT_EQ(released.load(), 0);
  SG_ASSERT_OK(sg_exec_destroy(x));
  EXPECT_EQ(released.load(), 1) << "release runs once, when the last holder is gone";
  delete gm;
}

INSTANTIATE_TEST_SUITE_P(Cuda, Cublas, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

}  // namespace
