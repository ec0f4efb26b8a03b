// Memory for backends and pointer classification.
#include <cstring>
#include <string>
#include <vector>

#include "sg_test_util.h"

TEST(Memory, HostBackendMemoryIsClassifiedAsItsKind) {
  void *dev = nullptr, *pinned = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 1000, &dev));
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_HOST_PINNED, 0, 1000, &pinned));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dev) % 256, 0u);
  sg_memory_kind kind;
  SG_ASSERT_OK(sg_mem_kind(dev, &kind));
  EXPECT_EQ(kind, SG_MEMORY_HOST_DEVICE);
  SG_ASSERT_OK(sg_mem_kind(static_cast<char *>(dev) + 999, &kind));
  EXPECT_EQ(kind, SG_MEMORY_HOST_DEVICE) << "interior pointers belong to their allocation";
  SG_ASSERT_OK(sg_mem_kind(pinned, &kind));
  EXPECT_EQ(kind, SG_MEMORY_HOST_PINNED);
  std::vector<char> pageable(100);
  SG_ASSERT_OK(sg_mem_kind(pageable.data(), &kind));
  EXPECT_EQ(kind, SG_MEMORY_HOST_PAGEABLE);
  SG_ASSERT_OK(sg_mem_free(dev));
  SG_ASSERT_OK(sg_mem_free(pinned));
}

TEST(Memory, CopyRoundTrip) {
  void *dev = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 64, &dev));
  char in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = static_cast<char>(i * 7);
  std::memset(out, 0x5a, sizeof out);
  SG_ASSERT_OK(sg_mem_copy(dev, in, 64));
  SG_ASSERT_OK(sg_mem_copy(out, dev, 64));
  EXPECT_EQ(std::memcmp(in, out, 64), 0);
  SG_ASSERT_OK(sg_mem_copy(out, dev, 0));
  EXPECT_EQ(sg_mem_copy(nullptr, dev, 4), SG_ERR_INVALID_ARGUMENT);
  SG_ASSERT_OK(sg_mem_free(dev));
}

TEST(Memory, BadRequests) {
  void *p = reinterpret_cast<void *>(1);
  EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 0, &p), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr) << "out is cleared on failure";
  EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_HOST_PAGEABLE, 0, 8, &p),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_mem_alloc(static_cast<sg_backend>(7), SG_MEMORY_DEVICE, 0, 8, &p),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 8, nullptr), SG_ERR_INVALID_ARGUMENT);
  int local = 0;
  EXPECT_EQ(sg_mem_free(&local), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("not returned by sg_mem_alloc"), std::string::npos);
  SG_EXPECT_OK(sg_mem_free(nullptr));
  sg_memory_kind kind;
  EXPECT_EQ(sg_mem_kind(nullptr, &kind), SG_ERR_INVALID_ARGUMENT);
}

TEST(Memory, FreeingTwiceSaysAlreadyFreed) {
  for (sg_memory_kind k : {SG_MEMORY_DEVICE, SG_MEMORY_HOST_PINNED}) {
    void *p = nullptr;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, k, 0, 128, &p));
    SG_ASSERT_OK(sg_mem_free(p));
    EXPECT_EQ(sg_mem_free(p), SG_ERR_INVALID_ARGUMENT);
    std::string msg = sg_last_error();
    EXPECT_NE(msg.find("sg_mem_free"), std::string::npos) << msg;
    EXPECT_NE(msg.find("already freed"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("not returned by sg_mem_alloc"), std::string::npos) << msg;
    // An address given out again is a live block: freeing it is fine.
    void *q = nullptr;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, k, 0, 128, &q));
    SG_EXPECT_OK(sg_mem_free(q));
  }
}

TEST(Memory, CudaBackendWithoutADeviceIsUnavailable) {
  if (sg_cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  void *p = nullptr;
  EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, 8, &p), SG_ERR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(sg_backend_resolve(SG_BACKEND_AUTO), SG_BACKEND_HOST);
}

TEST(Memory, ManyAllocationsStayClassified) {
  std::vector<void *> blocks;
  for (int i = 0; i < 200; i++) {
    void *p = nullptr;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, i % 2 ? SG_MEMORY_DEVICE : SG_MEMORY_HOST_PINNED, 0,
                              64 + i, &p));
    blocks.push_back(p);
  }
  for (size_t i = 0; i < blocks.size(); i += 3) SG_ASSERT_OK(sg_mem_free(blocks[i]));
  for (size_t i = 0; i < blocks.size(); i++) {
    if (i % 3 == 0) continue;
    sg_memory_kind kind;
    SG_ASSERT_OK(sg_mem_kind(static_cast<char *>(blocks[i]) + 10, &kind));
    EXPECT_EQ(kind, i % 2 ? SG_MEMORY_HOST_DEVICE : SG_MEMORY_HOST_PINNED);
    SG_ASSERT_OK(sg_mem_free(blocks[i]));
  }
}
