// Buffer: a 64-byte-aligned block with a length, a generation and a version (spec 6, 7).
//
// A Buffer header is owned by whoever handed it out (a BufferPool, an Arena or a
// BufferLedger, all BufferOwners). Headers are recycled, never freed while their pool lives,
// so a stale tensor handle always reads a valid header whose generation no longer matches.
//
//   Buffer* b = pool.Rent(1024);
//   uint64_t g = b->generation();
//   b->owner()->Release(b);            // generation becomes g + 1: every handle is stale
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onemodel {

class Buffer;

// Every buffer alignment, in bytes.
inline constexpr int64_t kBufferAlignment = 64;

// CHECKED builds put this many 0xA5 canary bytes after every buffer's length.
#ifdef ONEMODEL_CHECKED
inline constexpr bool kChecked = true;
inline constexpr int64_t kCanaryBytes = 64;
#else
inline constexpr bool kChecked = false;
inline constexpr int64_t kCanaryBytes = 0;
#endif
inline constexpr std::byte kCanaryByte{0xA5};
inline constexpr std::byte kPoisonByte{0xFF};

// Something that hands out buffers and takes them back.
class BufferOwner {
 public:
  // Takes `buffer` back: its generation increases, so every handle to it becomes stale.
  // Throws BufferOverrunException in CHECKED builds if the canary was overwritten (the
  // buffer is released all the same).
  virtual void Release(Buffer* buffer) = 0;
  // Whether `buffer`, whose owner() is this, is rented now (handed out and not released).
  virtual bool Rents(const Buffer& buffer) const = 0;

 protected:
  ~BufferOwner() = default;
};

// Counts the resets of the arenas that held it. Every header an arena holds adds it to its
// own generation (Buffer::generation), so a reset makes all their handles stale with one store
// instead of one per header. Counters belong to a BufferPool and live as long as its headers,
// so a reader racing with a header's move out of an arena still reads a live counter, and they
// only ever grow (a reused one is not reset), so that reader never sees a smaller count.
struct alignas(64) ResetCounter {
  std::atomic<uint64_t> resets{0};
};

// One cache line: an arena's allocation touches one line per header, and headers
// never share a line (no false sharing between a version bump and a neighbour's generation).
class alignas(64) Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Start of the block; 64-byte aligned.
  std::byte* data() const { return data_; }
  // Bytes requested by the renter.
  int64_t length() const { return static_cast<uint32_t>(extent_); }
  // Bytes of the block (the size class, or the arena slice), at least length() + canary.
  int64_t capacity() const { return static_cast<int64_t>(extent_ >> 32); }
  // Increases whenever the buffer is returned or its arena reset: the header's own count,
  // plus its arena's resets while an arena holds it. Any thread may read it at any time and
  // gets at least every value it had before the read began, even while the header leaves an
  // arena: the link is read first, and LeaveArena stores the folded count before it clears
  // the link, so a cleared link comes with the folded count; a link still set adds a counter
  // that never goes back (counters are not reset when reused).
  uint64_t generation() const {
    const uintptr_t link = link_.load(std::memory_order_acquire);
    const uint64_t own = generation_.load(std::memory_order_acquire);
    if (!(link & kArenaTag)) return own;
    return own + reinterpret_cast<const ResetCounter*>(link ^ kArenaTag)
                     ->resets.load(std::memory_order_acquire);
  }
  // Write counter shared by every view (spec 7): 0 at rent.
  uint64_t version() const { return std::atomic_ref(version_).load(std::memory_order_relaxed); }
  // Counts one tracked write.
  void BumpVersion() { std::atomic_ref(version_).fetch_add(1, std::memory_order_relaxed); }
  // Stable identity of this header for diagnostics (never reused by another header).
  uint64_t id() const { return id_; }
  // Who handed the buffer out: null once a pool's or a ledger's buffer is released. An arena's
  // header keeps its arena across Reset() (one store less per allocation), so whether a
  // buffer is rented is owner()->Rents()'s to say.
  BufferOwner* owner() const { return owner_; }

 private:
  friend class BufferPool;
  friend class Arena;
  friend class BufferLedger;

  // Makes every handle stale. Only the buffer's current owner calls this (one writer at a
  // time), so a plain increment published with release ordering suffices: no locked RMW.
  void AdvanceGeneration() {
    generation_.store(generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Joins the arena whose resets `counter` counts: from now on each of them advances the
  // generation too. The generation can only grow here (own plus a count), so the handles the
  // header had before stay stale.
  void JoinArena(const ResetCounter* counter) {
    link_.store(reinterpret_cast<uintptr_t>(counter) | kArenaTag, std::memory_order_release);
  }
  // Leaves the arena, folding its resets into the header's own count, then clearing the link
  // (in this order: see generation()).
  void LeaveArena() {
    generation_.store(generation(), std::memory_order_release);
    link_.store(0, std::memory_order_release);
  }

  // A ledger's previous rented buffer (link_ holds it while the header is in a ledger).
  Buffer* prev() const { return reinterpret_cast<Buffer*>(link_.load(std::memory_order_relaxed)); }
  void set_prev(Buffer* b) {
    link_.store(reinterpret_cast<uintptr_t>(b), std::memory_order_relaxed);
  }

  // Sets length() and capacity() with one store.
  void SetExtent(int64_t length, int64_t capacity) { extent_ = Extent(length, capacity); }

  // Sets data(), length() and capacity() with one 16-byte store (data_ and extent_ are
  // neighbours): an arena's allocation costs its stores, and this saves one.
  void SetPlace(std::byte* data, int64_t length, int64_t capacity) {
    using Pair [[gnu::vector_size(16), gnu::may_alias]] = uint64_t;
    *reinterpret_cast<Pair*>(&data_) =
        Pair{reinterpret_cast<uintptr_t>(data), Extent(length, capacity)};
  }

  // Sets version() to 0 and owner() to `owner` with one 16-byte store (they are neighbours),
  // as the buffer is handed out: no one else may use the header then, so the plain store to
  // the version, which is otherwise accessed atomically, races with nothing.
  void SetFreshOwner(BufferOwner* owner) {
    using Pair [[gnu::vector_size(16), gnu::may_alias]] = uint64_t;
    *reinterpret_cast<Pair*>(&version_) = Pair{0, reinterpret_cast<uintptr_t>(owner)};
  }

  static uint64_t Extent(int64_t length, int64_t capacity) {
    return static_cast<uint64_t>(length) | static_cast<uint64_t>(capacity) << 32;
  }

  std::byte* data_ = nullptr;
  // Length in the low 32 bits, capacity in the high ones, so one store sets both. 32 bits
  // suffice: a buffer holds at most 2^31-1 bytes, its class (canary included) or an arena
  // chunk at most 2^31 + 2^29. Next to data_, so an arena's allocation sets both with one
  // 16-byte store.
  uint64_t extent_ = 0;
  // Accessed through std::atomic_ref (BumpVersion may run on any thread holding a view),
  // except as the header is handed out (SetFreshOwner; BufferPool's Rent). Next to owner_, so
  // an arena's allocation sets both with one store.
  alignas(16) mutable uint64_t version_ = 0;
  BufferOwner* owner_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  // Intrusive link: the pool's free lists, or a ledger's list of rented buffers.
  Buffer* next_ = nullptr;
  // While a ledger holds the header, its previous buffer (set_prev); while an arena holds it,
  // the arena's ResetCounter tagged with kArenaTag (headers and counters are 64-byte aligned,
  // so bit 0 is free); otherwise 0. Atomic because generation() reads it from any thread.
  std::atomic<uintptr_t> link_{0};
  static constexpr uintptr_t kArenaTag = 1;
  uint32_t id_ = 0;          // headers are never freed, so 2^32 of them would be 256 GiB
  // Pool class of data_; negative when data_ belongs to an arena chunk: -1 - the header's
  // index in its arena's list, or -1 outside any arena.
  int32_t size_class_ = -1;
};
static_assert(sizeof(Buffer) == 64);

namespace internal {
// CHECKED helpers: fill [data, data+length) with 0xFF and the canary after it; verify it.
void PoisonAndGuard(Buffer& buffer);
bool CanaryIntact(const Buffer& buffer);

// The contents of a freshly handed-out buffer (pool or arena): zeroed when asked; in CHECKED
// builds 0xFF otherwise, with the canary after its length.
inline void FillFresh(Buffer& buffer, bool zero) {
  if (zero) std::memset(buffer.data(), 0, static_cast<size_t>(buffer.length()));
  if constexpr (kChecked) {
    if (zero) {
      std::memset(buffer.data() + buffer.length(), std::to_integer<int>(kCanaryByte),
                  static_cast<size_t>(kCanaryBytes));
    } else {
      PoisonAndGuard(buffer);
    }
  }
}
}  // namespace internal

}  // namespace onemodel
