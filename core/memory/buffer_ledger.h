// BufferLedger: a session's record of the buffers it rented from the shared pool.
//
// C++ has no finalizer to free a tensor the client forgot, so each session rents through its
// ledger; closing or expiring the session calls ReclaimAll(), which returns every buffer still
// rented to the pool and counts it as leaked (DESIGN.md section 3).
//
//   BufferLedger ledger(pool);
//   Buffer* b = ledger.Allocate(256);
//   ...                                   // never released
//   int64_t leaked = ledger.ReclaimAll(); // 1; b's handles are now stale
#pragma once

#include <cstdint>
#include <mutex>

#include "core/memory/allocator.h"
#include "core/memory/buffer_pool.h"
#include "core/memory/memory_budget.h"

namespace onemodel {

class BufferLedger final : public Allocator, public BufferOwner {
 public:
  // Rents from `pool`; each buffer's class size is charged to `budget` when one is given.
  explicit BufferLedger(BufferPool& pool, MemoryBudget* budget = nullptr)
      : pool_(pool), budget_(budget) {}
  // Reclaims whatever is still rented.
  ~BufferLedger();
  BufferLedger(const BufferLedger&) = delete;
  BufferLedger& operator=(const BufferLedger&) = delete;

  // Rents from the pool and records the buffer (see Allocator::Allocate). Throws
  // MemoryLimitException, renting nothing, when the budget would be exceeded.
  Buffer* Allocate(int64_t length, bool zero = false) override;
  // Forgets the buffer and returns it to the pool (see BufferOwner::Release).
  void Release(Buffer* buffer) override;
  bool Rents(const Buffer& buffer) const override { return buffer.owner_ == this; }
  // The ownership rule of a session (what keeps bad input from leaking without freeing anyone
  // else's memory): releases `buffer` when it was rented through this ledger and `generation`,
  // the generation of the handle naming it, is still current; returns whether it did. A null
  // buffer, another owner's buffer, or one already released (even if rented again since) is
  // left alone.
  bool ReleaseIfOwned(Buffer* buffer, uint64_t generation);
  // Returns every buffer still rented to the pool; the number returned is added to leaked().
  // In CHECKED builds, throws BufferOverrunException afterwards if any canary was broken.
  int64_t ReclaimAll();

  // Buffers rented through this ledger and not yet released.
  int64_t rented_buffers() const;
  // Bytes (lengths) rented through this ledger and not yet released.
  int64_t rented_bytes() const;
  // Buffers ReclaimAll() has returned over the ledger's life.
  int64_t leaked() const;

  BufferPool& pool() const { return pool_; }

 private:
  // Takes a rented buffer off the list (mutex_ held); the pool becomes its owner.
  void Unlink(Buffer* buffer);
  // Returns an unlinked buffer to the pool and its bytes to the budget.
  void GiveBack(Buffer* buffer);

  BufferPool& pool_;
  MemoryBudget* const budget_;
  mutable std::mutex mutex_;
  Buffer* head_ = nullptr;  // doubly linked through Buffer::prev()/next_
  int64_t rented_buffers_ = 0;
  int64_t rented_bytes_ = 0;
  int64_t leaked_ = 0;
};

}  // namespace onemodel
