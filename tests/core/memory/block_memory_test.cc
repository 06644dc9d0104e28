#include "core/memory/block_memory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/memory/buffer_pool.h"

namespace onemodel {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The VmFlags line of the /proc/self/smaps mapping that contains p ("" if none).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= Address(p) && Address(p) < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(BlockMemoryTest, SmallBlocksAreCacheLineAlignedLargeOnesHugePageAligned) {
  for (int64_t size : {int64_t{64}, int64_t{4096}, int64_t{1} << 20, kHugePageBytes - 64}) {
    void* p = AllocateBlockMemory(size);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Address(p) % kBufferAlignment, 0u) << size;
    std::free(p);
  }
  for (int64_t size : {kHugePageBytes, 5 * kHugePageBytes / 2, int64_t{80} << 20}) {
    void* p = AllocateBlockMemory(size);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Address(p) % kHugePageBytes, 0u) << size;
    std::free(p);
  }
}

TEST(BlockMemoryTest, LargeBlocksAreAdvisedForHugePages) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  void* large = AllocateBlockMemory(int64_t{16} << 20);
  void* small = AllocateBlockMemory(4096);
  ASSERT_NE(large, nullptr);
  ASSERT_NE(small, nullptr);
  // "hg": the mapping carries MADV_HUGEPAGE (proc(5)).
  EXPECT_NE(VmFlagsOf(large).find(" hg"), std::string::npos) << VmFlagsOf(large);
  EXPECT_EQ(VmFlagsOf(small).find(" hg"), std::string::npos) << VmFlagsOf(small);
  std::free(large);
  std::free(small);
}

TEST(BlockMemoryTest, ThePoolRentsLargeBuffersFromHugePageBlocks) {
  BufferPool pool;
  Buffer* b = pool.Rent(int64_t{64} << 20);
  EXPECT_EQ(Address(b->data()) % kHugePageBytes, 0u);
  pool.Release(b);
}

}  // namespace
}  // namespace onemodel
