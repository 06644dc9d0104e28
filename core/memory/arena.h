// Arena: bump allocation for the state of one run (spec 6).
//
// Chunks (1 MiB by default, or the request if larger) are rented from a BufferPool and kept
// across Reset() until Trim() gives the free ones back. Reset() reclaims everything at once
// and makes every tensor allocated since the last reset stale. After a warm-up run, a run with
// the same allocation sequence allocates no memory at all: chunks, buffer headers and
// bookkeeping are all reused.
// Not thread-safe: one arena per concurrent run.
//
//   Arena arena(pool);
//   for (int step = 0; step < n; ++step) {
//     arena.Reset();
//     Buffer* b = arena.Allocate(4096);   // a few nanoseconds
//   }
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/memory/allocator.h"
#include "core/memory/buffer_pool.h"
#include "core/memory/memory_budget.h"
#include "core/shape/shape.h"

namespace onemodel {

struct ArenaStats {
  int64_t chunks = 0;           // chunks held (kept across resets)
  int64_t reserved_bytes = 0;   // bytes of all chunks
  int64_t used_bytes = 0;       // bytes handed out since the last reset (64-byte rounded)
  int64_t peak_used_bytes = 0;  // highest used_bytes of any run
  int64_t resets = 0;
  int64_t allocations = 0;    // Allocate() calls over the arena's life
  int64_t growth_events = 0;  // times the arena itself had to get memory (0 once warm)
};

class Arena final : public Allocator, public BufferOwner {
 public:
  static constexpr int64_t kDefaultChunkBytes = int64_t{1} << 20;

  // Rents chunks of `chunk_bytes` from `pool`, charging each chunk's block to `budget` when one
  // is given (a growth that would exceed it throws MemoryLimitException).
  explicit Arena(BufferPool& pool, int64_t chunk_bytes = kDefaultChunkBytes,
                 MemoryBudget* budget = nullptr);
  // Makes every tensor stale and returns chunks, headers and the reset counter to the pool.
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // A 64-byte-aligned slice of `length` bytes, zero-filled if asked (see Allocator). The
  // steady state is inline: one sign test covers the length limits, the room left in the chunk
  // and a spare header; then one store of the position (offset and header count move in one
  // add) and the header's fields. Statistics are derived from the position, so they cost
  // nothing here.
  Buffer* Allocate(int64_t length, bool zero = false) override {
    const int64_t need = SliceBytes(length);
    const uint64_t position = position_;
    const uint64_t in_chunk = static_cast<uint32_t>(position);
    const uint64_t live = position >> 32;
    const uint64_t sign_if_slow = static_cast<uint64_t>(length) |
                                  (uint64_t{kMaxBufferBytes} - static_cast<uint64_t>(length)) |
                                  (chunk_length_ - in_chunk - static_cast<uint64_t>(need)) |
                                  (headers_held_ - live - 1);
    if (static_cast<int64_t>(sign_if_slow) < 0) return AllocateSlow(length, zero);
    position_ = position + kOneHeader + static_cast<uint64_t>(need);
    return Hand(headers_[live], chunk_start_ + in_chunk, length, need, zero);
  }

  // Marks one buffer released (its handles become stale); its memory returns at Reset().
  void Release(Buffer* buffer) override;
  // A header keeps this arena as its owner while the arena holds it, Reset() included: it is
  // rented when handed out since the last reset and not released.
  bool Rents(const Buffer& buffer) const override {
    return buffer.owner_ == this && IndexOf(buffer) < live_count();
  }
  // Release(), then, when `buffer` and every allocation after it in the current chunk are
  // released, moves the cursor back over them: their memory is reused at once. For a buffer no
  // one reads any more (a failed upload's); anything allocated after it keeps it until Reset().
  void Free(Buffer* buffer);
  // Free() when `buffer` was handed out by this arena and `generation`, the generation of the
  // handle naming it, is still current; returns whether it did. Anything else (null, another
  // owner's, already released or reset) is left alone: BufferLedger::ReleaseIfOwned's rule.
  bool FreeIfOwned(Buffer* buffer, uint64_t generation);

  // Reclaims every allocation; all their handles become stale. Constant time: one store to
  // the reset counter every header adds to its generation. In CHECKED builds verifies every
  // canary and, after the reset is complete, throws BufferOverrunException if one broke.
  void Reset();

  // Reset(), then gives every chunk back to the pool (and the budget): the arena holds no
  // memory until its next allocation.
  void Clear();

  // Gives free chunks back to the pool (and the budget), the last held first, until the chunks
  // held total at most `keep_bytes` or none is free; returns the chunk bytes given back. A
  // chunk is free when no allocation since the last Reset() lies in it or before it, so Trim
  // never touches a live tensor and is safe at any time, even inside an allocation. The next
  // run rents again what was given back (growth_events counts it).
  int64_t Trim(int64_t keep_bytes);

  ArenaStats Stats() const;
  int64_t chunk_bytes() const { return chunk_bytes_; }

 private:
  // Bytes a slice of `length` takes: the canary included, rounded to the alignment. Computed
  // without overflow for any length; Allocate() rejects the ones outside the limit.
  static int64_t SliceBytes(int64_t length) {
    return static_cast<int64_t>(
        (static_cast<uint64_t>(length) + kCanaryBytes + kBufferAlignment - 1) &
        ~static_cast<uint64_t>(kBufferAlignment - 1));
  }
  Buffer* AllocateSlow(int64_t length, bool zero);
  // Gives header `b` the `need` bytes at `at` and returns it.
  Buffer* Hand(Buffer* b, std::byte* at, int64_t length, int64_t need, bool zero) {
    b->SetPlace(at, length, need);
    b->SetFreshOwner(this);
    internal::FillFresh(*b, zero);
    return b;
  }
  // The index in headers_ of `header`, one of this arena's (size_class_ records it).
  static size_t IndexOf(const Buffer& header) {
    return static_cast<size_t>(-1 - static_cast<int64_t>(header.size_class_));
  }
  // position_'s high half counts one header.
  static constexpr uint64_t kOneHeader = uint64_t{1} << 32;
  // Headers handed out since the last reset: headers_[0, live_count()).
  size_t live_count() const { return static_cast<size_t>(position_ >> 32); }
  // Bytes handed out from the current chunk since the cursor was placed in it.
  int64_t offset() const { return static_cast<uint32_t>(position_); }
  // Sets the position to `offset` bytes into the current chunk and `live` headers handed out.
  void SetPosition(int64_t offset, size_t live) {
    position_ = static_cast<uint64_t>(live) << 32 | static_cast<uint64_t>(offset);
  }
  // Bytes handed out since the last reset (64-byte rounded).
  int64_t used_bytes() const { return used_before_chunk_ + offset(); }
  // Points the cursor at the start of chunks_[current_] (keeping the live headers), or nowhere
  // when no chunk is held.
  void PlaceCursor();
  // Moves the cursor back over the released allocations at the end of the current chunk.
  void Rewind();
  // Returns every chunk to the pool; the cursor points nowhere.
  void ReleaseChunks();
  // Returns the last chunk to the pool (and the budget).
  void ReleaseLastChunk();
  // Moves the cursor to a held chunk with room for `need` bytes, renting one if none has.
  void NextChunk(int64_t need);

  // Read by every Allocate(). The position is the only field it writes: the bytes handed out
  // from the current chunk in the low 32 bits (a chunk holds less than 2^32), the headers
  // handed out since the last reset in the high 32 bits. One store per allocation instead of
  // a cursor and a header pointer: stores, not loads, are what an allocation costs.
  uint64_t position_ = 0;
  std::byte* chunk_start_ = nullptr;  // chunks_[current_]->data(), null when no chunk is held
  uint64_t chunk_length_ = 0;         // chunks_[current_]->length(), 0 when none is held
  uint64_t headers_held_ = 0;         // headers_.size()

  BufferPool& pool_;
  const int64_t chunk_bytes_;
  MemoryBudget* const budget_;
  std::vector<Buffer*> chunks_;  // pool buffers; chunks_[current_] holds the cursor
  size_t current_ = 0;
  // Every header this arena holds: the live ones (in allocation order), then the spare ones.
  std::vector<Buffer*> headers_;
  int64_t used_before_chunk_ = 0;  // bytes handed out in chunks before the current one
  int64_t peak_used_bytes_ = 0;
  // Counts Reset() calls (on top of its count when this arena took it: resets_before_);
  // every header this arena holds has joined it (Buffer::JoinArena).
  ResetCounter* resets_ = nullptr;
  uint64_t resets_before_ = 0;
  int64_t retired_allocations_ = 0;  // allocations no longer live (reset or rewound)
  int64_t growth_events_ = 0;
};

}  // namespace onemodel
