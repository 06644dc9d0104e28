#include "core/memory/arena.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/exceptions.h"
#include "core/memory/buffer_ledger.h"
#include "tests/common/alloc_counter.h"

namespace onemodel {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(ArenaTest, AllocationsAreAlignedAndDisjoint) {
  BufferPool pool;
  Arena arena(pool);
  std::vector<Buffer*> got;
  for (int64_t n : {1, 3, 64, 65, 0, 127, 1000, 7}) got.push_back(arena.Allocate(n));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(Aligned(got[i]->data()));
    EXPECT_EQ(got[i]->version(), 0u);
    if (i + 1 < got.size()) {
      EXPECT_GE(got[i + 1]->data(), got[i]->data() + got[i]->length() + kCanaryBytes);
    }
  }
}

TEST(ArenaTest, ZeroedAllocationIsZero) {
  BufferPool pool;
  Arena arena(pool);
  std::byte* first = arena.Allocate(500)->data();
  std::memset(first, 0x77, 500);
  arena.Reset();
  Buffer* z = arena.Allocate(500, /*zero=*/true);
  ASSERT_EQ(z->data(), first) << "the same memory comes back after a reset";
  for (int i = 0; i < 500; ++i) ASSERT_EQ(z->data()[i], std::byte{0});
}

TEST(ArenaTest, ChunksComeFromThePoolAtTheConfiguredSize) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  arena.Allocate(1000);
  arena.Allocate(1000);
  ArenaStats s = arena.Stats();
  EXPECT_EQ(s.chunks, 1);
  EXPECT_EQ(s.reserved_bytes, 4096);
  arena.Allocate(3000);  // does not fit in what is left
  s = arena.Stats();
  EXPECT_EQ(s.chunks, 2);
  EXPECT_EQ(pool.Stats().rented_buffers, 2);
}

TEST(ArenaTest, BigRequestGetsAChunkOfItsOwn) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  Buffer* big = arena.Allocate(100000);
  EXPECT_TRUE(Aligned(big->data()));
  EXPECT_EQ(big->length(), 100000);
  std::memset(big->data(), 1, 100000);
  const ArenaStats s = arena.Stats();
  EXPECT_EQ(s.chunks, 1);
  EXPECT_GE(s.reserved_bytes, 100000);
}

TEST(ArenaTest, DefaultChunkIsOneMiB) {
  BufferPool pool;
  Arena arena(pool);
  EXPECT_EQ(arena.chunk_bytes(), 1 << 20);
  arena.Allocate(10);
  EXPECT_EQ(arena.Stats().reserved_bytes, 1 << 20);
}

TEST(ArenaTest, InvalidChunkSizeAndLengthsAreRejected) {
  BufferPool pool;
  EXPECT_THROW(Arena(pool, 0), TensorException);
  Arena arena(pool);
  EXPECT_THROW(arena.Allocate(-5), TensorShapeException);
  EXPECT_THROW(arena.Allocate(int64_t{1} << 31), TensorShapeException);
}

TEST(ArenaTest, InvalidLengthsAreRejectedWhenTheFastPathHasRoom) {
  BufferPool pool;
  Arena arena(pool);
  arena.Allocate(10);
  arena.Reset();  // a chunk with room and a spare header: the inline path would take them
  for (int64_t n : {int64_t{-1}, int64_t{-64}, int64_t{1} << 31, INT64_MAX, INT64_MIN}) {
    EXPECT_THROW(arena.Allocate(n), TensorShapeException) << n;
  }
  EXPECT_EQ(arena.Stats().allocations, 1) << "a refused request is no allocation";
  EXPECT_EQ(arena.Stats().used_bytes, 0);
}

TEST(ArenaTest, ResetMakesEveryAllocationStaleAndReusesMemory) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* a = arena.Allocate(100);
  Buffer* b = arena.Allocate(200);
  const uint64_t ga = a->generation(), gb = b->generation();
  std::byte* first = a->data();
  arena.Reset();
  EXPECT_NE(a->generation(), ga);
  EXPECT_NE(b->generation(), gb);
  Buffer* c = arena.Allocate(100);
  EXPECT_EQ(c->data(), first) << "the bump pointer starts over";
  EXPECT_EQ(arena.Stats().resets, 1);
}

TEST(ArenaTest, ReleaseMakesOneAllocationStaleAndTwiceThrows) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* a = arena.Allocate(100);
  Buffer* b = arena.Allocate(100);
  const uint64_t ga = a->generation(), gb = b->generation();
  arena.Release(a);
  EXPECT_EQ(a->generation(), ga + 1);
  EXPECT_EQ(b->generation(), gb);
  EXPECT_THROW(arena.Release(a), StaleTensorException);
  arena.Reset();
  EXPECT_EQ(b->generation(), gb + 1);
}

TEST(ArenaTest, FreeingTheLastAllocationsReturnsTheirMemoryAtOnce) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* a = arena.Allocate(100);
  const int64_t used_a = arena.Stats().used_bytes;
  Buffer* b = arena.Allocate(200);
  std::byte* b_data = b->data();
  const uint64_t gb = b->generation();
  arena.Free(b);
  EXPECT_EQ(b->generation(), gb + 1);
  EXPECT_EQ(arena.Stats().used_bytes, used_a);
  EXPECT_EQ(arena.Allocate(300)->data(), b_data) << "the next allocation reuses b's memory";
  arena.Allocate(10);
  arena.Free(a);  // two live allocations follow it: a only becomes stale
  EXPECT_GT(arena.Stats().used_bytes, used_a);
  EXPECT_THROW(arena.Free(a), StaleTensorException);
}

TEST(ArenaTest, FreeIfOwnedFreesOnlyItsOwnLiveAllocations) {
  BufferPool pool;
  Arena arena(pool), other(pool);
  BufferLedger ledger(pool);
  Buffer* a = arena.Allocate(100);
  const int64_t before_a = 0;  // nothing was allocated before a
  const uint64_t ga = a->generation();
  Buffer* foreign = other.Allocate(100);
  const uint64_t gf = foreign->generation();
  Buffer* rented = ledger.Allocate(100);
  // Another arena's, a ledger's, null: untouched.
  EXPECT_FALSE(arena.FreeIfOwned(foreign, gf));
  EXPECT_FALSE(arena.FreeIfOwned(rented, rented->generation()));
  EXPECT_FALSE(arena.FreeIfOwned(nullptr, 0));
  EXPECT_EQ(foreign->generation(), gf);
  EXPECT_EQ(ledger.rented_buffers(), 1);
  // Owned and live: freed like Free() (the last allocation: its memory comes back at once).
  EXPECT_TRUE(arena.FreeIfOwned(a, ga));
  EXPECT_EQ(a->generation(), ga + 1);
  EXPECT_EQ(arena.Stats().used_bytes, before_a);
  // Already released, or reset: untouched, no throw (unlike Free).
  EXPECT_FALSE(arena.FreeIfOwned(a, ga));
  Buffer* b = arena.Allocate(100);
  const uint64_t gb = b->generation();
  arena.Reset();
  EXPECT_FALSE(arena.FreeIfOwned(b, gb));
}

TEST(ArenaTest, FreeRewindsOverEarlierReleasesWithinTheCurrentChunk) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  Buffer* a = arena.Allocate(1000);
  const int64_t used_a = arena.Stats().used_bytes;
  Buffer* b = arena.Allocate(1000);
  Buffer* c = arena.Allocate(1000);
  arena.Release(b);
  arena.Free(c);
  EXPECT_EQ(arena.Stats().used_bytes, used_a) << "b and c both went back";
  Buffer* d = arena.Allocate(3500);  // a new chunk
  arena.Release(a);
  arena.Free(d);
  EXPECT_EQ(arena.Stats().used_bytes, used_a) << "a sits in an earlier chunk: kept to Reset()";
  EXPECT_EQ(arena.Stats().chunks, 2);
  arena.Reset();
  EXPECT_EQ(arena.Stats().used_bytes, 0);
}

TEST(ArenaTest, StatsTrackUsedPeakAndResets) {
  BufferPool pool;
  Arena arena(pool);
  arena.Allocate(100);
  arena.Allocate(1);
  ArenaStats s = arena.Stats();
  const int64_t used = ((100 + kCanaryBytes + 63) / 64 + (1 + kCanaryBytes + 63) / 64) * 64;
  EXPECT_EQ(s.used_bytes, used);
  EXPECT_EQ(s.allocations, 2);
  arena.Reset();
  arena.Allocate(1);
  s = arena.Stats();
  EXPECT_EQ(s.used_bytes, (1 + kCanaryBytes + 63) / 64 * 64);
  EXPECT_EQ(s.peak_used_bytes, used);
  EXPECT_EQ(s.resets, 1);
}

TEST(ArenaTest, StatsStayExactAcrossChunksAndRewinds) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  const int64_t slice = (3000 + kCanaryBytes + 63) / 64 * 64;
  arena.Allocate(3000);
  Buffer* second = arena.Allocate(3000);  // the next chunk: the first one's tail stays unused
  ArenaStats s = arena.Stats();
  EXPECT_EQ(s.chunks, 2);
  EXPECT_EQ(s.used_bytes, 2 * slice) << "the skipped tail of the first chunk is not used";
  arena.Free(second);
  s = arena.Stats();
  EXPECT_EQ(s.used_bytes, slice);
  EXPECT_EQ(s.peak_used_bytes, 2 * slice);
  EXPECT_EQ(s.allocations, 2) << "a freed allocation still counts";
  arena.Allocate(3000);
  arena.Allocate(3000);  // a third chunk
  s = arena.Stats();
  EXPECT_EQ(s.used_bytes, 3 * slice);
  EXPECT_EQ(s.allocations, 4);
  arena.Reset();
  s = arena.Stats();
  EXPECT_EQ(s.used_bytes, 0);
  EXPECT_EQ(s.peak_used_bytes, 3 * slice);
  EXPECT_EQ(s.allocations, 4);
}

// One "run": a fixed allocation sequence with small, chunk-sized and oversized requests.
void OneRun(Arena& arena) {
  for (int i = 0; i < 300; ++i) arena.Allocate(64 + 32 * (i % 7));
  arena.Allocate(3 << 20);  // larger than a chunk
  for (int i = 0; i < 50; ++i) arena.Allocate(40000);
  arena.Allocate(0);
}

TEST(ArenaTest, AWarmRunAllocatesNothing) {
  BufferPool pool;
  Arena arena(pool);
  OneRun(arena);  // warm-up
  arena.Reset();
  const ArenaStats before = arena.Stats();
  const PoolStats pool_before = pool.Stats();
  const int64_t heap_before = testing::HeapAllocations();
  for (int run = 0; run < 5; ++run) {
    OneRun(arena);
    arena.Reset();
  }
  const int64_t heap_after = testing::HeapAllocations();
  const ArenaStats after = arena.Stats();
  const PoolStats pool_after = pool.Stats();
  EXPECT_EQ(heap_after, heap_before) << "operator new was called during warm runs";
  EXPECT_EQ(pool_after.misses, pool_before.misses) << "the pool allocated native memory";
  EXPECT_EQ(pool_after.hits, pool_before.hits) << "the arena rented chunks again";
  EXPECT_EQ(after.growth_events, before.growth_events);
  EXPECT_EQ(after.chunks, before.chunks);
}

TEST(ArenaTest, AllocationCounterSeesHeapAllocations) {
  // Guards the test above: the hook really counts.
  const int64_t before = testing::HeapAllocations();
  std::vector<int>* volatile v = new std::vector<int>(1000);  // volatile: not elided
  delete v;
  EXPECT_GE(testing::HeapAllocations(), before + 2);
}

TEST(ArenaTest, DestructionReturnsChunksToThePool) {
  BufferPool pool;
  Buffer* kept;
  {
    Arena arena(pool);
    kept = arena.Allocate(10);
    arena.Allocate(5 << 20);
    EXPECT_EQ(pool.Stats().rented_buffers, 2);
  }
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
  EXPECT_EQ(kept->owner(), nullptr);
}

// Three chunks of 4096 bytes, each filled by one allocation of 3000 bytes.
void FillThreeChunks(Arena& arena) {
  for (int i = 0; i < 3; ++i) arena.Allocate(3000);
  ASSERT_EQ(arena.Stats().chunks, 3);
}

TEST(ArenaTest, TrimAfterResetGivesChunksBackLastFirstDownToWhatIsKept) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  FillThreeChunks(arena);
  arena.Reset();
  EXPECT_EQ(arena.Trim(9000), 4096) << "down to at most 9000 bytes: one chunk goes";
  EXPECT_EQ(arena.Stats().chunks, 2);
  EXPECT_EQ(arena.Trim(5000), 4096);
  EXPECT_EQ(arena.Trim(4096), 0) << "already within what is kept";
  EXPECT_EQ(pool.Stats().rented_buffers, 1);
  EXPECT_EQ(arena.Trim(0), 4096);
  EXPECT_EQ(arena.Stats().chunks, 0);
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
  Buffer* b = arena.Allocate(100);  // usable again: rents a chunk
  std::memset(b->data(), 1, 100);
  EXPECT_EQ(arena.Stats().chunks, 1);
}

TEST(ArenaTest, TrimNeverTakesAChunkThatHoldsLiveTensors) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  FillThreeChunks(arena);
  arena.Reset();
  Buffer* a = arena.Allocate(3000);  // chunk 0
  Buffer* b = arena.Allocate(3000);  // chunk 1: the cursor's
  std::memset(a->data(), 7, 3000);
  std::memset(b->data(), 8, 3000);
  EXPECT_EQ(arena.Trim(0), 4096) << "only the third chunk is free";
  EXPECT_EQ(arena.Stats().chunks, 2);
  EXPECT_EQ(a->data()[2999], std::byte{7});
  EXPECT_EQ(b->data()[0], std::byte{8});
  Buffer* c = arena.Allocate(3000);  // rents again where the free chunk was
  EXPECT_EQ(arena.Stats().chunks, 3);
  EXPECT_EQ(a->version(), 0u);
  (void)c;
}

TEST(ArenaTest, WithoutTrimAWarmArenaKeepsItsChunks) {
  BufferPool pool;
  Arena arena(pool, /*chunk_bytes=*/4096);
  FillThreeChunks(arena);
  const int64_t growth = arena.Stats().growth_events;
  arena.Reset();
  FillThreeChunks(arena);
  EXPECT_EQ(arena.Stats().growth_events, growth) << "the zero-allocation steady state stays";
}

// Handing out a header sets its place, version and owner with two 16-byte stores
// (Buffer::SetPlace, SetFreshOwner): a reused header must come back with all of them new.
TEST(ArenaTest, AReusedHeaderComesBackAtVersionZeroWithItsNewPlace) {
  BufferPool pool;
  Arena arena(pool);
  (void)arena.Allocate(100);
  Buffer* second = arena.Allocate(100);
  second->BumpVersion();
  second->BumpVersion();
  arena.Release(second);
  arena.Reset();
  const Buffer* first = arena.Allocate(64);
  Buffer* again = arena.Allocate(1000);
  ASSERT_EQ(again, second) << "headers are reused in allocation order";
  EXPECT_EQ(again->version(), 0u);
  EXPECT_EQ(again->owner(), static_cast<BufferOwner*>(&arena));
  EXPECT_EQ(again->length(), 1000);
  EXPECT_EQ(again->capacity(), (1000 + kCanaryBytes + 63) / 64 * 64);
  EXPECT_TRUE(Aligned(again->data()));
  EXPECT_EQ(arena.Stats().used_bytes, first->capacity() + again->capacity());
  EXPECT_EQ(arena.Stats().allocations, 4);  // over the arena's life
}

// Reset() touches no header (one store to the arena's reset counter): the header keeps its
// arena as owner, and whether it is rented comes from its index against the headers handed
// out since the reset.
TEST(ArenaTest, AResetHeaderKeepsItsOwnerButIsNoLongerRented) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* a = arena.Allocate(100);
  Buffer* b = arena.Allocate(100);
  EXPECT_TRUE(arena.Rents(*a));
  EXPECT_TRUE(arena.Rents(*b));
  const uint64_t gb = b->generation();
  arena.Reset();
  EXPECT_EQ(b->owner(), static_cast<BufferOwner*>(&arena));
  EXPECT_FALSE(arena.Rents(*a));
  EXPECT_FALSE(arena.Rents(*b));
  EXPECT_THROW(arena.Release(b), StaleTensorException) << "reset, so released already";
  EXPECT_FALSE(arena.FreeIfOwned(b, gb + 1)) << "even with the current generation";
  EXPECT_EQ(b->generation(), gb + 1);
  ASSERT_EQ(arena.Allocate(64), a);  // a is handed out again, b stays spare
  EXPECT_TRUE(arena.Rents(*a));
  EXPECT_FALSE(arena.Rents(*b));
  EXPECT_THROW(arena.Release(b), StaleTensorException);
  arena.Release(a);
  EXPECT_FALSE(arena.Rents(*a));
  EXPECT_EQ(a->owner(), nullptr);
  EXPECT_EQ(arena.Stats().allocations, 3);
}

// Every header the arena holds, live or spare, gains one generation per reset: the count is
// the arena's, added to each header's own.
TEST(ArenaTest, EachResetAdvancesEveryHeldHeaderByOne) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* a = arena.Allocate(100);
  Buffer* b = arena.Allocate(100);
  arena.Reset();
  ASSERT_EQ(arena.Allocate(100), a);  // b stays spare
  const uint64_t ga = a->generation(), gb = b->generation();
  for (int i = 0; i < 3; ++i) arena.Reset();
  EXPECT_EQ(a->generation(), ga + 3);
  EXPECT_EQ(b->generation(), gb + 3);
  arena.Allocate(100);
  arena.Release(arena.Allocate(100));  // b: its own count moves too
  EXPECT_EQ(b->generation(), gb + 4);
  EXPECT_EQ(arena.Stats().resets, 4);
}

// A header that leaves an arena keeps the resets it saw: in the pool, and in the next arena
// that takes it (whose reset counter may be the first one's, reused), its generation is past
// every handle it had.
TEST(ArenaTest, AHeaderThatLeavesAnArenaNeverReturnsToAnOldGeneration) {
  BufferPool pool;
  Buffer* header;
  uint64_t last;
  {
    Arena first(pool);
    header = first.Allocate(100);
    for (int i = 0; i < 5; ++i) {
      first.Reset();
      ASSERT_EQ(first.Allocate(100), header);
    }
    last = header->generation();
  }
  EXPECT_GT(header->generation(), last) << "the arena's end makes its handles stale";
  Arena second(pool);
  EXPECT_EQ(second.Stats().resets, 0) << "a reused counter's earlier resets are not this arena's";
  ASSERT_EQ(second.Allocate(100), header) << "the pool hands the same header out again";
  EXPECT_GT(header->generation(), last);
}

// A header that backed one of `pool`'s blocks, now among its spare headers (the block freed),
// and the generation its handles had.
std::pair<Buffer*, uint64_t> SpareHeaderOfAPoolBlock(BufferPool& pool) {
  Buffer* p = pool.Rent(100);
  const uint64_t g = p->generation();
  pool.Release(p);
  pool.Trim();
  return {p, g};
}

// A pool block's header whose block was freed can go to an arena next; what the pool's
// handles saw stays behind.
TEST(ArenaTest, AHeaderFromThePoolKeepsItsPoolHandlesStale) {
  BufferPool pool;
  const auto [p, g] = SpareHeaderOfAPoolBlock(pool);
  Arena arena(pool);
  ASSERT_EQ(arena.Allocate(100), p);
  const uint64_t in_arena = p->generation();
  EXPECT_GT(in_arena, g);
  arena.Reset();
  EXPECT_GT(p->generation(), in_arena);
}

// generation() may run on any thread (a stale handle is checked wherever it is used) while
// the header moves between the pool and arenas that reset it. It never shows a generation a
// handle had before, and ThreadSanitizer sees every access as atomic.
TEST(ArenaTest, AStaleHandleStaysStaleWhileItsHeaderMovesBetweenArenas) {
  BufferPool pool;
  const auto [header, stale] = SpareHeaderOfAPoolBlock(pool);
  std::atomic<bool> done{false};
  std::atomic<int64_t> matches{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed)) {
      if (header->generation() == stale) matches.fetch_add(1);
    }
  });
  for (int round = 0; round < 2000; ++round) {
    Arena arena(pool, 4096);
    for (int run = 0; run < 3; ++run) {
      arena.Allocate(64);
      arena.Reset();
    }
  }
  done = true;
  reader.join();
  EXPECT_EQ(matches.load(), 0);
  EXPECT_GT(header->generation(), stale);
}

// While a header moves in and out of arenas (and their counters are reused), a thread reading
// its generation never sees less than a value already published when the read began: not the
// header's own count without the arena's resets, nor with a reused counter's smaller count.
TEST(ArenaTest, AReaderNeverSeesLessThanAGenerationAlreadyReached) {
  BufferPool pool;
  const auto [header, stale] = SpareHeaderOfAPoolBlock(pool);
  std::atomic<uint64_t> reached{stale + 1};  // a value the header's generation has reached
  std::atomic<bool> done{false};
  std::atomic<int64_t> below{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed)) {
      const uint64_t floor = reached.load(std::memory_order_acquire);
      if (header->generation() < floor) below.fetch_add(1);
    }
  });
  for (int round = 0; round < 20000; ++round) {
    {
      Arena arena(pool, 4096);
      ASSERT_EQ(arena.Allocate(64), header);
      for (int run = 0; run < 3; ++run) {
        arena.Reset();
        reached.store(header->generation(), std::memory_order_release);
      }
    }
    reached.store(header->generation(), std::memory_order_release);
  }
  done = true;
  reader.join();
  EXPECT_EQ(below.load(), 0);
}

// A header another arena holds is not this one's, whatever its index.
TEST(ArenaTest, RentsOnlyItsOwnHeaders) {
  BufferPool pool;
  Arena one(pool), two(pool);
  Buffer* a = one.Allocate(100);
  Buffer* b = two.Allocate(100);
  EXPECT_FALSE(one.Rents(*b));
  EXPECT_FALSE(two.Rents(*a));
  EXPECT_THROW(one.Release(b), StaleTensorException);
  Buffer* p = pool.Rent(100);
  EXPECT_FALSE(one.Rents(*p));
  EXPECT_TRUE(pool.Rents(*p));
  pool.Release(p);
  EXPECT_FALSE(pool.Rents(*p));
}

}  // namespace
}  // namespace onemodel
