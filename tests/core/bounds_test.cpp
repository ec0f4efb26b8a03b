// Bounds of copies and memsets: a range that runs past the end of a block
// the library knows is refused when the node is added or updated, naming the
// node, the block and both sizes; sizes meet pointers only through checked
// arithmetic (no wrap-around, no object larger than PTRDIFF_MAX).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sg_test_util.h"

extern "C" {
#include "core/checked.h"
#include "staging/stage_run.h"
}

namespace {

using sgtest::Exec;
using sgtest::Graph;

// A block of host-backend "device" memory, freed at the end of the test.
struct Block {
  void *p = nullptr;
  explicit Block(size_t bytes) {
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &p), SG_OK)
        << sg_last_error();
  }
  ~Block() { sg_mem_free(p); }
  char *at(size_t offset) const { return static_cast<char *>(p) + offset; }
};

void expect_message_has(const std::vector<std::string> &parts) {
  std::string msg = sg_last_error();
  for (const std::string &part : parts)
    EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg << "\nlacks: " << part;
}

TEST(Bounds, CopyPastTheEndOfAnAllocBlockIsRefusedNamingNodeBlockAndSizes) {
  Block dev(4096);
  std::vector<char> host(8192);
  Graph g;
  sg_copy_desc c = {dev.p, host.data(), 4097, SG_COPY_AUTO, "upload"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"sg_graph_add_copy", "'upload'", "4097 bytes", "destination",
                      "sg_mem_alloc block of 4096 bytes", "at most 4096"});
  size_t count = 1;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 0u) << "a refused node must not enter the graph";

  // The source side, at an offset: 1024 bytes in, 3072 remain.
  c = {host.data(), dev.at(1024), 3073, SG_COPY_AUTO, "download"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"'download'", "source", "3073 bytes", "1024 bytes into it",
                      "3072 bytes from there", "4096 bytes"});
}

TEST(Bounds, CopiesEndingExactlyAtTheEndAreAccepted) {
  Block dev(4096);
  std::vector<char> host(4096);
  Graph g;
  sg_copy_desc c = {dev.p, host.data(), 4096, SG_COPY_AUTO, "whole"};
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  c = {dev.at(4095), host.data(), 1, SG_COPY_AUTO, "last byte"};
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  sg_memset_desc m = {dev.at(4092), 7, 4, 1, "last word"};
  SG_EXPECT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
}

TEST(Bounds, MemsetPastTheEndIsRefused) {
  Block dev(4096);
  Graph g;
  sg_memset_desc m = {dev.at(16), 0, 4, 1021, "clear"};  // 4084 bytes from 16: 4 too many
  EXPECT_EQ(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"sg_graph_add_memset", "'clear'", "4084 bytes", "4080 bytes from there",
                      "4096 bytes"});
  m.count = 1020;
  SG_EXPECT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
}

TEST(Bounds, MemsetWhoseByteCountOverflowsIsRefused) {
  Block dev(4096);
  Graph g;
  sg_memset_desc m = {dev.p, 0, 4, SIZE_MAX / 2, "huge"};
  EXPECT_EQ(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"'huge'", "more bytes than a size_t holds"});
  m.count = SIZE_MAX / 4 - 1;  // fits a size_t, not an object
  EXPECT_EQ(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"'huge'", "larger than any object"});
}

TEST(Bounds, SizeMaxIsRefusedEvenForPageableMemory) {
  std::vector<char> a(64), b(64);
  Graph g;
  sg_copy_desc c = {a.data(), b.data(), SIZE_MAX, SG_COPY_AUTO, "all of it"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"sg_graph_add_copy", "'all of it'", "larger than any object"});
}

TEST(Bounds, RangesWrappingTheAddressSpaceAreRefused) {
  std::vector<char> a(64);
  Graph g;
  void *top = reinterpret_cast<void *>(UINTPTR_MAX - 15);
  sg_copy_desc c = {top, a.data(), 64, SG_COPY_AUTO, "wraps"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"'wraps'", "destination", "end of the address space"});
  sg_memset_desc m = {top, 0, 1, 64, "wraps too"};
  EXPECT_EQ(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"'wraps too'", "end of the address space"});
}

// Issue 17, defect 2: the overlap test computed dst + bytes as pointers, so a
// device->device copy of SIZE_MAX bytes from a buffer into itself at a higher
// address wrapped and passed.
TEST(CopyBoundsAndPointerArithmetic, SizeMaxSelfCopyAtAHigherAddressIsRefused) {
  Block dev(4096);
  Graph g;
  sg_copy_desc c = {dev.at(256), dev.p, SIZE_MAX, SG_COPY_DEVICE_TO_DEVICE, "self"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"'self'"});
  // Sizes that do fit an object but still overlap are refused as overlaps.
  c.bytes = 512;
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_COPY);
  expect_message_has({"'self'", "overlap"});
  c.bytes = 256;  // [256, 512) from [0, 256): adjacent, no overlap
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
}

TEST(CopyBoundsAndPointerArithmetic, OverlapTestIsExactAtTheEdges) {
  char buf[64];
  EXPECT_FALSE(sg__ranges_overlap(buf, 16, buf + 16, 16));
  EXPECT_FALSE(sg__ranges_overlap(buf + 16, 16, buf, 16));
  EXPECT_TRUE(sg__ranges_overlap(buf, 17, buf + 16, 16));
  EXPECT_TRUE(sg__ranges_overlap(buf + 16, 16, buf, 17));
  EXPECT_TRUE(sg__ranges_overlap(buf, 1, buf, 1));
  uintptr_t end = 0;
  EXPECT_TRUE(sg__range_end(reinterpret_cast<void *>(UINTPTR_MAX - 3), 4, &end));
  EXPECT_FALSE(sg__range_end(reinterpret_cast<void *>(UINTPTR_MAX - 3), 3, &end));
  EXPECT_EQ(end, UINTPTR_MAX);
}

// Issue 17, defect 2 (graph mode with staging): the ring geometry added to
// the byte count, so a near-SIZE_MAX count wrapped into a tiny ring.
TEST(CopyBoundsAndPointerArithmetic, RingGeometryOfHugeCopiesDoesNotWrap) {
  for (size_t bytes : {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 4095, (size_t)PTRDIFF_MAX}) {
    for (size_t chunk : {(size_t)0, (size_t)1, (size_t)4 << 20, SIZE_MAX}) {
      sg__stage_geometry g;
      sg__stage_geometry_make(bytes, chunk, 4, 8, &g);
      SCOPED_TRACE(testing::Message() << "bytes " << bytes << " chunk " << chunk);
      EXPECT_GE(g.chunks, 1u);
      EXPECT_LE(g.chunks, SG__STAGE_MAX_CHUNKS);
      // The chunks cover the copy: chunks * chunk >= bytes, computed exactly.
      unsigned __int128 covered = (unsigned __int128)g.chunks * g.chunk;
      EXPECT_GE(covered, (unsigned __int128)bytes);
      EXPECT_GE(g.stride, g.chunk);
      EXPECT_LE(g.ring, g.chunks);
    }
  }
}

TEST(Bounds, ExecSetCopyAndSetMemsetCheckBoundsAndKeepTheOldParameters) {
  Block dev(4096);
  std::vector<char> host(8192, 1), back(4096, 0);
  Graph g;
  sg_node up, clear;
  sg_copy_desc c = {dev.p, host.data(), 4096, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &up));
  sg_memset_desc m = {dev.p, 0, 1, 16, "clear"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, &up, 1, &clear));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));

  c.bytes = 8192;
  EXPECT_EQ(sg_exec_set_copy(e, up, &c), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"sg_exec_set_copy", "'upload' (#0)", "8192 bytes", "4096 bytes"});
  m.count = 4097;
  EXPECT_EQ(sg_exec_set_memset(e, clear, &m), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"sg_exec_set_memset", "'clear' (#1)", "4097 bytes", "4096 bytes"});
  c.bytes = 4096;
  EXPECT_EQ(sg_graph_set_copy(g, up, &(c.bytes = 4097, c)), SG_ERR_INVALID_ARGUMENT);
  expect_message_has({"sg_graph_set_copy", "'upload' (#0)"});

  // The executable still runs its old, valid parameters.
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_mem_copy(back.data(), dev.p, 4096));
  for (size_t i = 0; i < 4096; i++)
    ASSERT_EQ(back[i], i < 16 ? 0 : 1) << "byte " << i;
}

}  // namespace
