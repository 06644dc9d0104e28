// CHECKED builds (spec 6): 0xFF fill of new and returned memory, 64 canary bytes after every
// buffer's length, verified on release and on arena reset. These tests skip themselves in
// builds without ONEMODEL_CHECKED; the `checked` preset runs them.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/exceptions.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_ledger.h"
#include "core/memory/buffer_pool.h"

namespace onemodel {
namespace {

bool AllBytes(const std::byte* p, int64_t n, std::byte v) {
  return std::all_of(p, p + n, [v](std::byte x) { return x == v; });
}

class CheckedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kChecked) GTEST_SKIP() << "needs a build with ONEMODEL_CHECKED (the checked preset)";
  }
};

// A pool must outlive its arenas; CHECKED builds stop at the pool's end when one does not.
TEST_F(CheckedTest, DestroyingAPoolThatAnArenaStillUsesAborts) {
  EXPECT_DEATH(
      {
        auto* pool = new BufferPool;
        auto* arena = new Arena(*pool);
        arena->Allocate(64);
        delete pool;
      },
      "BufferPool destroyed while 1 arena\\(s\\) still use it");
}

TEST_F(CheckedTest, FreshPoolMemoryReadsAs0xFF) {
  BufferPool pool;
  Buffer* b = pool.Rent(1000);
  EXPECT_TRUE(AllBytes(b->data(), 1000, std::byte{0xFF}));
  EXPECT_TRUE(AllBytes(b->data() + 1000, kCanaryBytes, std::byte{0xA5}));
  pool.Release(b);
}

TEST_F(CheckedTest, ReturnedPoolMemoryIsRefilledWith0xFF) {
  BufferPool pool;
  Buffer* b = pool.Rent(1000);
  std::byte* block = b->data();
  std::fill(block, block + 1000, std::byte{0});
  pool.Release(b);  // stays idle in the pool, so reading it is still legal here
  EXPECT_TRUE(AllBytes(block, 1000, std::byte{0xFF}));
}

TEST_F(CheckedTest, ZeroedRentIsZeroNotPoisoned) {
  BufferPool pool;
  Buffer* b = pool.Rent(100, /*zero=*/true);
  EXPECT_TRUE(AllBytes(b->data(), 100, std::byte{0}));
  pool.Release(b);
}

TEST_F(CheckedTest, OneByteOverrunIsCaughtAtPoolRelease) {
  BufferPool pool;
  Buffer* b = pool.Rent(100);
  b->data()[100] = std::byte{0};  // one byte past the end
  EXPECT_THROW(pool.Release(b), BufferOverrunException);
  EXPECT_EQ(pool.Stats().rented_buffers, 0) << "the buffer is released all the same";
}

TEST_F(CheckedTest, IntactBufferReleasesQuietly) {
  BufferPool pool;
  Buffer* b = pool.Rent(100);
  std::fill(b->data(), b->data() + 100, std::byte{1});
  EXPECT_NO_THROW(pool.Release(b));
}

TEST_F(CheckedTest, FreshArenaMemoryReadsAs0xFF) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* b = arena.Allocate(300);
  EXPECT_TRUE(AllBytes(b->data(), 300, std::byte{0xFF}));
}

TEST_F(CheckedTest, OneByteOverrunIsCaughtAtArenaReset) {
  BufferPool pool;
  Arena arena(pool);
  arena.Allocate(10);
  Buffer* b = arena.Allocate(100);
  b->data()[100] = std::byte{7};
  EXPECT_THROW(arena.Reset(), BufferOverrunException);
  EXPECT_EQ(arena.Stats().used_bytes, 0) << "the reset completed";
  EXPECT_NO_THROW(arena.Reset());
}

TEST_F(CheckedTest, OneByteOverrunIsCaughtAtArenaRelease) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* b = arena.Allocate(64);
  b->data()[64] = std::byte{7};
  EXPECT_THROW(arena.Release(b), BufferOverrunException);
}

TEST_F(CheckedTest, ArenaResetPoisonsReclaimedMemory) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* b = arena.Allocate(100, /*zero=*/true);
  std::byte* p = b->data();
  arena.Reset();
  EXPECT_TRUE(AllBytes(p, 100, std::byte{0xFF}));
}

TEST_F(CheckedTest, LedgerReclaimReportsAnOverrunAfterReturningEverything) {
  BufferPool pool;
  BufferLedger ledger(pool);
  Buffer* b = ledger.Allocate(10);
  ledger.Allocate(10);
  b->data()[10] = std::byte{0};
  EXPECT_THROW(ledger.ReclaimAll(), BufferOverrunException);
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
  EXPECT_EQ(ledger.leaked(), 2);
}

}  // namespace
}  // namespace onemodel
