// BufferPool: the shared pool of 64-byte-aligned blocks, one free list per size class (spec 6).
//
// Rent(n) serves n bytes from the class SizeClassBytes(n); Release() puts the block back on
// its class's free list, or frees it when idle memory would exceed MaxIdleBytes. Safe from
// many threads; nothing depends on thread count or timing. Statistics are exact.
//
//   BufferPool pool;                       // MaxIdleBytes = 2 GiB
//   Buffer* b = pool.Rent(4096, /*zero=*/true);
//   ... b->data() ...
//   pool.Release(b);                       // b's generation increases; the block waits idle
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/memory/allocator.h"
#include "core/memory/buffer.h"
#include "core/memory/internal/spin_lock.h"
#include "core/memory/size_class.h"
#include "core/shape/shape.h"

namespace onemodel {

struct PoolClassStats {
  int64_t size_bytes = 0;      // the class size
  int64_t rented_buffers = 0;  // buffers of this class now rented
  int64_t idle_buffers = 0;    // buffers of this class waiting in the free list
};

struct PoolStats {
  int64_t rented_buffers = 0;
  int64_t rented_requested_bytes = 0;   // sum of the lengths asked for
  int64_t rented_bytes = 0;             // sum of the class sizes handed out
  int64_t peak_rented_bytes = 0;        // highest rented_bytes ever seen
  int64_t idle_bytes = 0;               // bytes waiting in free lists
  int64_t max_idle_bytes = 0;           // the cap
  int64_t hits = 0;                     // rents served from a free list
  int64_t misses = 0;                   // rents that allocated from the system
  int64_t frees_over_cap = 0;           // releases freed because idle memory hit the cap
  std::vector<PoolClassStats> classes;  // classes with any rented or idle buffer, by size
};

class BufferPool final : public Allocator, public BufferOwner {
 public:
  static constexpr int64_t kDefaultMaxIdleBytes = int64_t{2} << 30;

  explicit BufferPool(int64_t max_idle_bytes = kDefaultMaxIdleBytes);
  // Frees every idle block and every header. Buffers still rented must not be used after.
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of `length` bytes (0 <= length <= 2^31-1), zero-filled if asked, version 0.
  // Throws TensorShapeException for a length outside the limit, OutOfMemoryException when
  // the system has no memory. In CHECKED builds contents are 0xFF unless zeroed.
  // Inline: the steady state (a hit) is the size class, the lock, a free-list pop, the
  // counters and the header's fields, with no call whose frame would add stores for the
  // lock's exchange to wait for.
  Buffer* Rent(int64_t length, bool zero = false) {
    if (static_cast<uint64_t>(length) > uint64_t{kMaxBufferBytes}) ThrowBadLength(length);
    return RentBlock(length, zero);
  }
  Buffer* Allocate(int64_t length, bool zero = false) override { return Rent(length, zero); }

  // Takes a rented buffer back (see BufferOwner::Release). Inline, as Rent; what a release
  // kept idle does not need (the checks that throw, CHECKED's canary, freeing over the cap)
  // is out of line.
  void Release(Buffer* buffer) override {
    if (kChecked || buffer->owner_ != this || buffer->size_class_ < 0) {
      ReleaseChecked(buffer);
      return;
    }
    buffer->owner_ = nullptr;
    buffer->AdvanceGeneration();
    Return(buffer);
  }
  bool Rents(const Buffer& buffer) const override { return buffer.owner_ == this; }

  // Frees every idle block (rented ones are untouched).
  void Trim();

  int64_t max_idle_bytes() const { return max_idle_bytes_; }
  PoolStats Stats() const;

  // A recycled header, not attached to any block (arenas slice chunks with these).
  Buffer* AcquireHeader();
  // Gives a header from AcquireHeader() back; its generation increases.
  void ReleaseHeader(Buffer* header);
  // A reset counter for an arena, kept until GiveResetCounter(); it lives as long as the pool,
  // so a header that held it can always read it. A reused one keeps its count.
  ResetCounter* TakeResetCounter();
  // Gives a counter back once no header holds it (Buffer::LeaveArena).
  void GiveResetCounter(ResetCounter* counter);

 private:
  // One cache line per class. Counters one Rent or Release updates together are never
  // neighbours (here and below, but for the byte totals, a vector always accessed whole):
  // GCC would pair them into one 16-byte load and store, and such a load cannot take its
  // value from the two 8-byte stores of the previous call still in the store buffer, a stall
  // of tens of cycles right after the lock.
  // Idle counts are derived (blocks - rented, held - rented bytes), and so are the rented
  // count and the hits (rents - returns, rents - misses), so a Rent served from a free list
  // or a Release kept idle updates one count and one byte total, not three counts and two
  // totals.
  struct alignas(64) SizeClass {
    Buffer* free_list = nullptr;  // headers with their blocks attached
    int64_t blocks = 0;           // this class's blocks, rented or idle
    int64_t rents = 0;            // rents over the pool's life
    int64_t frees_over_cap = 0;
    int64_t returns = 0;  // releases over the pool's life
    int64_t misses = 0;
    int64_t rented() const { return rents - returns; }
  };

  friend class Arena;
  // Rent without the length limit: arena chunks may exceed 2^31-1 by the alignment padding.
  Buffer* RentBlock(int64_t length, bool zero) {
    const int index = SizeClassIndex(length + kCanaryBytes);
    const int64_t size = SizeClassBytes(length + kCanaryBytes);  // shares the index's shifts
    SizeClass& c = classes_[static_cast<size_t>(index)];
    lock_.lock();
    Buffer* b = c.free_list;
    if (b) {
      c.free_list = b->next_;
    } else {
      ++c.misses;
      ++c.blocks;
      held_bytes_ += size;
    }
    ++c.rents;
    rented_ += Totals{size, length};
    if (rented_[0] > peak_rented_bytes_) peak_rented_bytes_ = rented_[0];
    lock_.unlock();
    if (!b) [[unlikely]]
      b = NewBlock(index, length);
    b->SetExtent(length, size);
    // Two 8-byte stores, not SetFreshOwner's one of 16: Release reads owner_ back, and this
    // core does not forward half of a 16-byte store to an 8-byte load (the pair took 3.6% longer).
    b->version_ = 0;
    b->owner_ = this;
    internal::FillFresh(*b, zero);
    return b;
  }
  // Puts `b`, released, back on its class's free list, or frees it over the cap.
  void Return(Buffer* b) {
    const int64_t size = b->capacity();
    SizeClass& c = classes_[static_cast<size_t>(b->size_class_)];
    lock_.lock();
    ++c.returns;
    rented_ -= Totals{size, b->length()};
    if (held_bytes_ - rented_[0] > max_idle_bytes_) [[unlikely]] {  // b among the idle
      FreeOverCap(b);
      return;
    }
    b->next_ = c.free_list;
    c.free_list = b;
    lock_.unlock();
  }
  // Return's rest when idle memory would exceed the cap: frees `b`'s block and unlocks.
  [[gnu::noinline]] void FreeOverCap(Buffer* b);
  // Release of a buffer that is not plainly rented from this pool (throws), and CHECKED
  // builds' release (verifies and poisons).
  [[gnu::noinline]] void ReleaseChecked(Buffer* b);
  [[noreturn, gnu::cold, gnu::noinline]] static void ThrowBadLength(int64_t length);
  void PushHeader(Buffer* header);
  // Rent's miss: a new block of class `index` with a header, or OutOfMemoryException after
  // taking the rent's charge back out of the statistics.
  Buffer* NewBlock(int index, int64_t length);

  const int64_t max_idle_bytes_;
  // One short critical section per Rent or Release (a pointer pop or push and counters):
  // cheaper than several atomic updates, and the statistics are always consistent. The lock
  // shares its cache line with the totals every critical section updates.
  alignas(64) mutable internal::SpinLock lock_;
  int64_t peak_rented_bytes_ = 0;
  // The sums of the class sizes ([0]) and of the lengths ([1]) rented: one vector, so a Rent
  // or Release updates both with one 16-byte load and store (always as a pair, so the load
  // takes its value from the previous call's store).
  using Totals [[gnu::vector_size(16)]] = int64_t;
  Totals rented_ = {0, 0};
  int64_t held_bytes_ = 0;  // bytes of all blocks, rented or idle
  std::array<SizeClass, kSizeClassCount> classes_;

  std::mutex header_mutex_;
  Buffer* free_headers_ = nullptr;
  std::vector<std::unique_ptr<Buffer[]>> header_slabs_;
  uint32_t next_header_id_ = 1;
  std::deque<ResetCounter> reset_counters_;  // a deque: taking one never moves the others
  std::vector<ResetCounter*> free_reset_counters_;
};

}  // namespace onemodel
