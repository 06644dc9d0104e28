#include "core/memory/buffer_ledger.h"

#include <gtest/gtest.h>

#include "core/common/exceptions.h"

namespace onemodel {
namespace {

TEST(BufferLedgerTest, TracksWhatIsRentedThroughIt) {
  BufferPool pool;
  BufferLedger ledger(pool);
  Buffer* a = ledger.Allocate(100);
  Buffer* b = ledger.Allocate(200);
  EXPECT_EQ(a->owner(), &ledger);
  EXPECT_EQ(ledger.rented_buffers(), 2);
  EXPECT_EQ(ledger.rented_bytes(), 300);
  ledger.Release(a);
  EXPECT_EQ(ledger.rented_buffers(), 1);
  EXPECT_EQ(ledger.rented_bytes(), 200);
  EXPECT_EQ(pool.Stats().rented_buffers, 1);
  ledger.Release(b);
  EXPECT_EQ(ledger.leaked(), 0);
}

TEST(BufferLedgerTest, ReclaimAllReturnsLeakedBuffersAndCountsThem) {
  BufferPool pool;
  BufferLedger ledger(pool);
  Buffer* a = ledger.Allocate(100);
  Buffer* b = ledger.Allocate(5000);
  Buffer* c = ledger.Allocate(7);
  ledger.Release(b);
  const uint64_t ga = a->generation();
  EXPECT_EQ(ledger.ReclaimAll(), 2);
  EXPECT_EQ(ledger.leaked(), 2);
  EXPECT_EQ(ledger.rented_buffers(), 0);
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
  EXPECT_EQ(a->generation(), ga + 1) << "reclaimed buffers are stale";
  EXPECT_NE(c->owner(), &ledger);
  EXPECT_EQ(ledger.ReclaimAll(), 0);
}

TEST(BufferLedgerTest, DestructionReclaimsEverything) {
  BufferPool pool;
  {
    BufferLedger ledger(pool);
    ledger.Allocate(100);
    ledger.Allocate(100);
  }
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
}

TEST(BufferLedgerTest, ReleasingTwiceOrForeignBuffersThrows) {
  BufferPool pool;
  BufferLedger one(pool), two(pool);
  Buffer* a = one.Allocate(10);
  EXPECT_THROW(two.Release(a), StaleTensorException);
  one.Release(a);
  EXPECT_THROW(one.Release(a), StaleTensorException);
  EXPECT_EQ(one.rented_buffers(), 0);
}

}  // namespace
}  // namespace onemodel
