#include "core/memory/memory_budget.h"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>

#include "core/common/exceptions.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_ledger.h"
#include "core/memory/size_class.h"

namespace onemodel {
namespace {

TEST(MemoryBudget, ChargesUpToTheLimitAndRefunds) {
  MemoryBudget budget("test limit", 1000);
  budget.Charge(600);
  budget.Charge(400);
  EXPECT_EQ(budget.used(), 1000);
  EXPECT_THROW(budget.Charge(1), MemoryLimitException);
  EXPECT_EQ(budget.used(), 1000);  // a refused charge takes nothing
  budget.Refund(400);
  budget.Charge(1);
  EXPECT_EQ(budget.used(), 601);
}

TEST(MemoryBudget, MessageNamesTheLimitAndItsValue) {
  MemoryBudget budget("session memory limit", int64_t{64} << 20);
  budget.Charge(int64_t{60} << 20);
  try {
    budget.Charge(int64_t{8} << 20);
    FAIL() << "expected MemoryLimitException";
  } catch (const MemoryLimitException& e) {
    EXPECT_STREQ(e.what(),
                 "session memory limit of 64 MiB reached: 60 MiB in use, 8 MiB more requested; "
                 "release tensors or reset the arena first");
  }
}

TEST(MemoryBudget, ParentRefusalLeavesTheChildUncharged) {
  MemoryBudget server("server memory ceiling", 1000);
  MemoryBudget a("session memory limit", 800, &server);
  MemoryBudget b("session memory limit", 800, &server);
  a.Charge(700);
  try {
    b.Charge(400);
    FAIL() << "expected MemoryLimitException";
  } catch (const MemoryLimitException& e) {
    EXPECT_NE(std::string(e.what()).find("server memory ceiling of 1000 B"), std::string::npos);
  }
  EXPECT_EQ(b.used(), 0);
  EXPECT_EQ(server.used(), 700);
  a.Refund(700);
  EXPECT_EQ(server.used(), 0);
}

TEST(MemoryBudget, FormatsSizes) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1024), "1 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 30), "3 GiB");
}

TEST(MemoryBudget, LedgerChargesClassSizesAndRefundsOnReleaseAndReclaim) {
  BufferPool pool;
  MemoryBudget budget("session memory limit", 4096);
  BufferLedger ledger(pool, &budget);
  Buffer* a = ledger.Allocate(1000);
  EXPECT_EQ(budget.used(), SizeClassBytes(1000));
  Buffer* b = ledger.Allocate(1000);
  EXPECT_EQ(budget.used(), 2 * SizeClassBytes(1000));
  const int64_t rented_before = pool.Stats().rented_buffers;
  EXPECT_THROW(ledger.Allocate(3000), MemoryLimitException);
  EXPECT_EQ(pool.Stats().rented_buffers, rented_before);  // nothing rented
  ledger.Release(a);
  EXPECT_EQ(budget.used(), SizeClassBytes(1000));
  (void)b;
  ledger.ReclaimAll();
  EXPECT_EQ(budget.used(), 0);
}

TEST(MemoryBudget, ArenaChargesChunksOnceAndRefundsAtDestruction) {
  BufferPool pool;
  MemoryBudget budget("session memory limit", int64_t{3} << 20);
  {
    Arena arena(pool, int64_t{1} << 20, &budget);
    arena.Allocate(1000);
    EXPECT_EQ(budget.used(), SizeClassBytes(int64_t{1} << 20));
    arena.Reset();
    arena.Allocate(1000);  // the held chunk: no new charge
    EXPECT_EQ(budget.used(), SizeClassBytes(int64_t{1} << 20));
    EXPECT_THROW(arena.Allocate(int64_t{5} << 20), MemoryLimitException);
    EXPECT_EQ(budget.used(), SizeClassBytes(int64_t{1} << 20));
    arena.Allocate(1000);  // still usable after a refusal
  }
  EXPECT_EQ(budget.used(), 0);
}

TEST(MemoryBudget, ArenaClearGivesEveryChunkBackAndStaysUsable) {
  BufferPool pool;
  MemoryBudget budget("session memory limit", int64_t{8} << 20);
  Arena arena(pool, int64_t{1} << 20, &budget);
  Buffer* b = arena.Allocate(int64_t{3} << 20);  // a chunk of its own
  arena.Allocate(100);
  const uint64_t generation = b->generation();
  arena.Clear();
  EXPECT_NE(b->generation(), generation) << "everything allocated is stale";
  EXPECT_EQ(arena.Stats().chunks, 0);
  EXPECT_EQ(pool.Stats().rented_bytes, 0);
  EXPECT_EQ(budget.used(), 0);
  arena.Allocate(100);
  EXPECT_EQ(arena.Stats().chunks, 1);
}

TEST(MemoryBudget, AReclaimerRunsOnceWhenALimitRefusesThenTheChargeIsTriedAgain) {
  MemoryBudget session("session memory limit", 800);
  int64_t spare = 300;  // what the holder keeps but does not need
  int calls = 0;
  session.SetReclaimer([&] {
    ++calls;
    if (spare == 0) return false;
    session.Refund(std::exchange(spare, 0));
    return true;
  });
  session.Charge(300);  // the spare
  session.Charge(400);
  EXPECT_EQ(calls, 0) << "a charge that fits reclaims nothing";
  session.Charge(300);  // 1000 > 800: the spare goes, then it fits
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(session.used(), 700);
  EXPECT_THROW(session.Charge(200), MemoryLimitException) << "nothing more to reclaim";
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(session.used(), 700);
}

TEST(MemoryBudget, AParentRefusalAlsoRunsTheChildsReclaimer) {
  MemoryBudget server("server memory ceiling", 1000);
  MemoryBudget session("session memory limit", 1000, &server);
  MemoryBudget other("session memory limit", 1000, &server);
  session.Charge(600);
  other.Charge(300);
  session.SetReclaimer([&] {
    session.Refund(500);
    return true;
  });
  session.Charge(200);  // 1100 > the server's 1000: 500 reclaimed, then it fits
  EXPECT_EQ(session.used(), 300);
  EXPECT_EQ(server.used(), 600);
}

TEST(MemoryBudget, ChargeWithoutReclaimRefusesWithoutRunningTheReclaimer) {
  MemoryBudget session("session memory limit", 800);
  int calls = 0;
  session.SetReclaimer([&] {
    ++calls;
    session.Refund(500);
    return true;
  });
  session.Charge(600);
  EXPECT_THROW(session.ChargeWithoutReclaim(300), MemoryLimitException);
  EXPECT_EQ(calls, 0) << "another thread must not trim the holder's arena";
  EXPECT_EQ(session.used(), 600);
  session.ChargeWithoutReclaim(200);
  EXPECT_EQ(session.used(), 800);
}

TEST(MemoryBudget, AnArenaTrimmedByItsOwnChargeStaysConsistent) {
  BufferPool pool;
  MemoryBudget budget("session memory limit", 3 * SizeClassBytes(4096));
  Arena arena(pool, /*chunk_bytes=*/4096, &budget);
  budget.SetReclaimer([&] { return arena.Trim(0) > 0; });
  for (int i = 0; i < 3; ++i) arena.Allocate(3000);
  arena.Reset();
  // A chunk of its own would pass the limit: the three free chunks go, then it fits.
  Buffer* big = arena.Allocate(8000);
  std::memset(big->data(), 3, 8000);
  EXPECT_EQ(arena.Stats().chunks, 1);
  EXPECT_EQ(budget.used(), SizeClassBytes(8000 + kCanaryBytes));
  Buffer* small = arena.Allocate(3000);  // in a new chunk after the big one
  EXPECT_EQ(arena.Stats().chunks, 2);
  EXPECT_EQ(big->data()[7999], std::byte{3});
  (void)small;
  arena.Reset();
  EXPECT_THROW(
      {
        arena.Allocate(100);
        arena.Allocate(5 * 4096);  // cannot fit even with the other chunk trimmed
      },
      MemoryLimitException);
  arena.Allocate(100);  // still usable
}

}  // namespace
}  // namespace onemodel
