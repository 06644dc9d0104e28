#include "core/memory/buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/common/exceptions.h"

namespace onemodel {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(BufferPoolTest, RentGivesAlignedBufferOfTheRequestedLengthAtVersionZero) {
  BufferPool pool;
  for (int64_t n : {0, 1, 63, 64, 65, 300, 4096, 100000}) {
    Buffer* b = pool.Rent(n);
    EXPECT_TRUE(Aligned(b->data())) << n;
    EXPECT_EQ(b->length(), n);
    EXPECT_GE(b->capacity(), n + kCanaryBytes);
    EXPECT_EQ(b->capacity(), SizeClassBytes(n + kCanaryBytes));
    EXPECT_EQ(b->version(), 0u);
    EXPECT_EQ(b->owner(), &pool);
    pool.Release(b);
  }
}

TEST(BufferPoolTest, ZeroingClearsRecycledMemory) {
  BufferPool pool;
  Buffer* b = pool.Rent(1000);
  std::memset(b->data(), 0x5A, 1000);
  pool.Release(b);
  Buffer* z = pool.Rent(1000, /*zero=*/true);
  EXPECT_EQ(z->data(), b->data()) << "the same class should reuse the idle block";
  EXPECT_TRUE(std::all_of(z->data(), z->data() + 1000, [](std::byte x) { return x == std::byte{0}; }));
  pool.Release(z);
}

TEST(BufferPoolTest, SameClassReusesTheIdleBlockAndCountsAHit) {
  BufferPool pool;
  Buffer* a = pool.Rent(5000);
  std::byte* block = a->data();
  pool.Release(a);
  Buffer* b = pool.Rent(4900);  // same class (5120)
  EXPECT_EQ(b->data(), block);
  const PoolStats s = pool.Stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 1);
  pool.Release(b);
}

TEST(BufferPoolTest, DifferentClassesDoNotShareBlocks) {
  BufferPool pool;
  Buffer* a = pool.Rent(5000);
  pool.Release(a);
  Buffer* b = pool.Rent(9000);
  EXPECT_EQ(pool.Stats().misses, 2);
  EXPECT_EQ(pool.Stats().hits, 0);
  pool.Release(b);
}

TEST(BufferPoolTest, ReleaseIncreasesTheGeneration) {
  BufferPool pool;
  Buffer* b = pool.Rent(100);
  const uint64_t g = b->generation();
  pool.Release(b);
  EXPECT_EQ(b->generation(), g + 1);
  Buffer* again = pool.Rent(100);
  EXPECT_EQ(again, b) << "the header travels with its block";
  EXPECT_EQ(again->generation(), g + 1) << "renting never resets the generation";
  pool.Release(again);
}

TEST(BufferPoolTest, ReleasingTwiceThrows) {
  BufferPool pool;
  Buffer* b = pool.Rent(100);
  pool.Release(b);
  EXPECT_THROW(pool.Release(b), StaleTensorException);
}

TEST(BufferPoolTest, LengthOutsideTheLimitThrowsBeforeAllocating) {
  BufferPool pool;
  EXPECT_THROW(pool.Rent(-1), TensorShapeException);
  EXPECT_THROW(pool.Rent(int64_t{1} << 31), TensorShapeException);
  EXPECT_EQ(pool.Stats().misses, 0);
}

TEST(BufferPoolTest, IdleCapFreesWhatWouldExceedIt) {
  const int64_t cls = SizeClassBytes(600 + kCanaryBytes);
  BufferPool pool(/*max_idle_bytes=*/cls + cls / 2);  // room for one idle block of this class
  Buffer* a = pool.Rent(600);
  Buffer* b = pool.Rent(600);
  pool.Release(a);
  pool.Release(b);
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.idle_bytes, cls);
  EXPECT_EQ(s.frees_over_cap, 1);
  EXPECT_LE(s.idle_bytes, s.max_idle_bytes);
  ASSERT_EQ(s.classes.size(), 1u);
  EXPECT_EQ(s.classes[0].idle_buffers, 1);
}

TEST(BufferPoolTest, ZeroCapKeepsNothingIdle) {
  BufferPool pool(0);
  for (int i = 0; i < 10; ++i) pool.Release(pool.Rent(4096));
  const PoolStats s = pool.Stats();
  EXPECT_EQ(s.idle_bytes, 0);
  EXPECT_EQ(s.frees_over_cap, 10);
  EXPECT_EQ(s.misses, 10);
}

TEST(BufferPoolTest, NegativeCapIsRejected) { EXPECT_THROW(BufferPool(-1), TensorException); }

TEST(BufferPoolTest, DefaultCapIsTwoGiB) {
  BufferPool pool;
  EXPECT_EQ(pool.max_idle_bytes(), int64_t{2} << 30);
}

TEST(BufferPoolTest, StatsTrackRentedRequestedRoundedAndPeak) {
  BufferPool pool;
  Buffer* a = pool.Rent(100);
  Buffer* b = pool.Rent(1000);
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.rented_buffers, 2);
  EXPECT_EQ(s.rented_requested_bytes, 1100);
  const int64_t rounded = SizeClassBytes(100 + kCanaryBytes) + SizeClassBytes(1000 + kCanaryBytes);
  EXPECT_EQ(s.rented_bytes, rounded);
  EXPECT_EQ(s.peak_rented_bytes, rounded);
  pool.Release(a);
  s = pool.Stats();
  EXPECT_EQ(s.rented_buffers, 1);
  EXPECT_EQ(s.rented_requested_bytes, 1000);
  EXPECT_EQ(s.peak_rented_bytes, rounded) << "the peak stays";
  EXPECT_EQ(s.idle_bytes, SizeClassBytes(100 + kCanaryBytes));
  ASSERT_EQ(s.classes.size(), 2u);
  EXPECT_EQ(s.classes[0].size_bytes, SizeClassBytes(100 + kCanaryBytes));
  EXPECT_EQ(s.classes[0].rented_buffers, 0);
  EXPECT_EQ(s.classes[0].idle_buffers, 1);
  EXPECT_EQ(s.classes[1].rented_buffers, 1);
  pool.Release(b);
}

TEST(BufferPoolTest, TrimFreesIdleBlocksOnly) {
  BufferPool pool;
  Buffer* kept = pool.Rent(300);
  pool.Release(pool.Rent(5000));
  pool.Trim();
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.idle_bytes, 0);
  EXPECT_EQ(s.rented_buffers, 1);
  std::memset(kept->data(), 1, 300);  // still usable
  pool.Release(kept);
}

TEST(BufferPoolTest, IdleCountsStayExactAcrossTrimInAClassWithRentedBuffers) {
  BufferPool pool;
  const int64_t cls = SizeClassBytes(1000 + kCanaryBytes);
  Buffer* a = pool.Rent(1000);
  Buffer* b = pool.Rent(1000);
  Buffer* c = pool.Rent(1000);
  pool.Release(b);
  pool.Release(c);
  PoolStats s = pool.Stats();
  ASSERT_EQ(s.classes.size(), 1u);
  EXPECT_EQ(s.classes[0].rented_buffers, 1);
  EXPECT_EQ(s.classes[0].idle_buffers, 2);
  EXPECT_EQ(s.idle_bytes, 2 * cls);
  pool.Trim();
  s = pool.Stats();
  EXPECT_EQ(s.classes[0].rented_buffers, 1);
  EXPECT_EQ(s.classes[0].idle_buffers, 0) << "the rented buffer's block is not idle";
  EXPECT_EQ(s.idle_bytes, 0);
  pool.Release(a);
  s = pool.Stats();
  EXPECT_EQ(s.classes[0].idle_buffers, 1);
  EXPECT_EQ(s.idle_bytes, cls);
  EXPECT_EQ(s.rented_bytes, 0);
  pool.Release(pool.Rent(1000));
  s = pool.Stats();
  EXPECT_EQ(s.hits, 1) << "a's block, kept idle after the trim";
  EXPECT_EQ(s.misses, 3);
}

TEST(BufferPoolTest, HeadersHaveDistinctStableIds) {
  BufferPool pool;
  std::vector<Buffer*> held;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 600; ++i) {  // spans several header slabs
    held.push_back(pool.Rent(64));
    ids.push_back(held.back()->id());
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  for (Buffer* b : held) pool.Release(b);
}

TEST(BufferPoolTest, ManyThreadsRentAndReleaseConsistently) {
  BufferPool pool(/*max_idle_bytes=*/int64_t{4} << 20);
  constexpr int kThreads = 4;
  constexpr int kRounds = 4000;
  std::vector<std::thread> threads;
  std::atomic<int> corrupted{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::uniform_int_distribution<int> size(0, 70000);
      std::vector<Buffer*> mine;
      for (int i = 0; i < kRounds; ++i) {
        Buffer* b = pool.Rent(size(rng));
        std::memset(b->data(), t + 1, static_cast<size_t>(b->length()));
        mine.push_back(b);
        if (mine.size() > 8 || (rng() & 1)) {
          Buffer* r = mine.front();
          mine.erase(mine.begin());
          for (int64_t k = 0; k < r->length(); ++k) {
            if (r->data()[k] != std::byte(t + 1)) {
              corrupted.fetch_add(1);
              break;
            }
          }
          pool.Release(r);
        }
      }
      for (Buffer* r : mine) pool.Release(r);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupted.load(), 0) << "a block was handed to two renters at once";
  const PoolStats s = pool.Stats();
  EXPECT_EQ(s.rented_buffers, 0);
  EXPECT_EQ(s.rented_bytes, 0);
  EXPECT_EQ(s.rented_requested_bytes, 0);
  EXPECT_LE(s.idle_bytes, s.max_idle_bytes);
  EXPECT_EQ(s.hits + s.misses, int64_t{kThreads} * kRounds);
}

// Rent and Release are inline (the steady state) with the checks, CHECKED's canary and
// freeing over the cap out of line: a recycled header comes back fresh, and the statistics
// stay exact through both paths.
TEST(BufferPoolTest, ARecycledHeaderComesBackFreshAndTheStatisticsStayExact) {
  BufferPool pool(/*max_idle_bytes=*/SizeClassBytes(4096 + kCanaryBytes));
  Buffer* a = pool.Rent(4000);
  a->BumpVersion();
  const uint64_t generation = a->generation();
  pool.Release(a);
  EXPECT_EQ(a->generation(), generation + 1);
  EXPECT_EQ(a->owner(), nullptr);
  Buffer* b = pool.Rent(3900);  // the same class: a hit
  ASSERT_EQ(b, a);
  EXPECT_EQ(b->version(), 0u);
  EXPECT_EQ(b->owner(), &pool);
  EXPECT_EQ(b->length(), 3900);
  Buffer* c = pool.Rent(4096);  // a miss
  pool.Release(b);              // kept idle: at the cap
  pool.Release(c);              // over the cap: freed
  EXPECT_THROW(pool.Release(c), StaleTensorException);
  const PoolStats s = pool.Stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.frees_over_cap, 1);
  EXPECT_EQ(s.rented_buffers, 0);
  EXPECT_EQ(s.rented_bytes, 0);
  EXPECT_EQ(s.rented_requested_bytes, 0);
  // b's class (4000 bytes and the canary) is idle; the peak held b's and c's classes.
  EXPECT_EQ(s.idle_bytes, SizeClassBytes(4000 + kCanaryBytes));
  EXPECT_EQ(s.peak_rented_bytes,
            SizeClassBytes(4000 + kCanaryBytes) + SizeClassBytes(4096 + kCanaryBytes));
}

}  // namespace
}  // namespace onemodel
