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

TEST(BufferLedgerTest, ReleaseIfOwnedReleasesOnlyItsOwnLiveBuffers) {
  BufferPool pool;
  BufferLedger one(pool), two(pool);
  Buffer* a = one.Allocate(100);
  Buffer* b = one.Allocate(200);
  // Owned and live: released, and every handle to it is stale.
  const uint64_t ga = a->generation();
  EXPECT_TRUE(one.ReleaseIfOwned(a, ga));
  EXPECT_EQ(a->generation(), ga + 1);
  EXPECT_EQ(one.rented_buffers(), 1);
  EXPECT_EQ(one.rented_bytes(), 200);
  EXPECT_EQ(pool.Stats().rented_buffers, 1);
  // Already released: untouched, no throw (unlike Release).
  EXPECT_FALSE(one.ReleaseIfOwned(a, ga));
  EXPECT_FALSE(one.ReleaseIfOwned(a, a->generation()));
  // Another ledger's: untouched, still rented by its owner.
  EXPECT_FALSE(two.ReleaseIfOwned(b, b->generation()));
  EXPECT_EQ(b->owner(), &one);
  EXPECT_EQ(one.rented_buffers(), 1);
  // A header rented again since: a stale handle's generation does not free the new tenant.
  Buffer* again = one.Allocate(100);
  ASSERT_EQ(again, a) << "the pool reuses the header of the same size class first";
  EXPECT_FALSE(one.ReleaseIfOwned(again, ga));
  EXPECT_EQ(one.rented_buffers(), 2);
  // The pool's own buffers and null are not the ledger's either.
  Buffer* direct = pool.Rent(64);
  EXPECT_FALSE(one.ReleaseIfOwned(direct, direct->generation()));
  EXPECT_EQ(direct->owner(), &pool);
  pool.Release(direct);
  EXPECT_FALSE(one.ReleaseIfOwned(nullptr, 0));
  EXPECT_EQ(one.ReclaimAll(), 2);
}

}  // namespace
}  // namespace onemodel
