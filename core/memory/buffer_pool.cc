#include "core/memory/buffer_pool.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/common/exceptions.h"
#include "core/memory/block_memory.h"
#include "core/shape/shape.h"

namespace onemodel {
namespace {
constexpr int kHeadersPerSlab = 256;

// Out of line, so the hot paths keep a small frame.
[[noreturn, gnu::cold, gnu::noinline]] void ThrowNotRented(const Buffer& b) {
  throw StaleTensorException("buffer " + std::to_string(b.id()) +
                             " was released twice or was not rented from this pool");
}

[[noreturn, gnu::cold, gnu::noinline]] void ThrowOverrun(const Buffer& b, int64_t length) {
  throw BufferOverrunException("buffer " + std::to_string(b.id()) + " of " +
                               std::to_string(length) +
                               " bytes was written past its end (canary overwritten); the "
                               "buffer was released, but a kernel or caller has a bug");
}
}  // namespace

namespace internal {
[[noreturn, gnu::cold, gnu::noinline]] static void ThrowBadBufferLength(int64_t length) {
  throw TensorShapeException("buffer of " + std::to_string(length) +
                             " bytes requested; a buffer holds 0 to " +
                             std::to_string(kMaxBufferBytes) + " bytes");
}

void CheckBufferLength(int64_t length) {
  if (length < 0 || length > kMaxBufferBytes) ThrowBadBufferLength(length);
}
}  // namespace internal

BufferPool::BufferPool(int64_t max_idle_bytes) : max_idle_bytes_(max_idle_bytes) {
  if (max_idle_bytes < 0) {
    throw TensorException("MaxIdleBytes must not be negative (got " +
                          std::to_string(max_idle_bytes) + ")");
  }
}

BufferPool::~BufferPool() {
  if constexpr (kChecked) {
    // An arena still holding a reset counter would write to it after this (a bench case did).
    if (const size_t taken = reset_counters_.size() - free_reset_counters_.size()) {
      std::fprintf(stderr, "BufferPool destroyed while %zu arena(s) still use it\n", taken);
      std::abort();
    }
  }
  // Every header ever made is in a slab, so walking the slabs frees every block, idle or not.
  for (auto& slab : header_slabs_) {
    for (int i = 0; i < kHeadersPerSlab; ++i) {
      Buffer& h = slab[static_cast<size_t>(i)];
      if (h.size_class_ >= 0) std::free(h.data_);
    }
  }
}

void BufferPool::ThrowBadLength(int64_t length) { internal::ThrowBadBufferLength(length); }

Buffer* BufferPool::NewBlock(int index, int64_t length) {
  const int64_t size = SizeClassBytesAt(index);
  void* block = AllocateBlockMemory(size);
  if (!block) {
    {
      std::lock_guard guard(lock_);
      SizeClass& c = classes_[static_cast<size_t>(index)];
      ++c.returns;  // the miss still counts, as a rent taken back
      --c.blocks;
      rented_ -= Totals{size, length};
      held_bytes_ -= size;
    }
    throw OutOfMemoryException("the system refused " + std::to_string(size) +
                               " bytes for a buffer of " + std::to_string(length) + " bytes");
  }
  Buffer* b = AcquireHeader();
  b->data_ = static_cast<std::byte*>(block);
  b->size_class_ = index;
  return b;
}

void BufferPool::ReleaseChecked(Buffer* b) {
  if (b->owner_ != this || b->size_class_ < 0) ThrowNotRented(*b);
  b->owner_ = nullptr;
  b->AdvanceGeneration();
  const int64_t length = b->length();
  bool intact = true;
  if constexpr (kChecked) {
    intact = internal::CanaryIntact(*b);
    internal::PoisonAndGuard(*b);
  }
  Return(b);
  if (!intact) ThrowOverrun(*b, length);
}

void BufferPool::FreeOverCap(Buffer* b) {
  SizeClass& c = classes_[static_cast<size_t>(b->size_class_)];
  --c.blocks;
  held_bytes_ -= b->capacity();
  ++c.frees_over_cap;
  lock_.unlock();
  std::free(b->data_);
  PushHeader(b);
}

void BufferPool::Trim() {
  Buffer* lists = nullptr;  // every idle block, chained through next_
  {
    std::lock_guard guard(lock_);
    for (SizeClass& c : classes_) {
      while (Buffer* b = c.free_list) {
        c.free_list = b->next_;
        b->next_ = lists;
        lists = b;
      }
      c.blocks = c.rented();
    }
    held_bytes_ = rented_[0];
  }
  while (lists) {
    Buffer* next = lists->next_;
    std::free(lists->data_);
    PushHeader(lists);
    lists = next;
  }
}

Buffer* BufferPool::AcquireHeader() {
  std::lock_guard guard(header_mutex_);
  if (!free_headers_) {
    auto slab = std::make_unique<Buffer[]>(kHeadersPerSlab);
    for (int i = kHeadersPerSlab - 1; i >= 0; --i) {
      Buffer& h = slab[static_cast<size_t>(i)];
      h.id_ = next_header_id_ + static_cast<uint32_t>(i);
      h.next_ = free_headers_;
      free_headers_ = &h;
    }
    next_header_id_ += kHeadersPerSlab;
    header_slabs_.push_back(std::move(slab));
  }
  Buffer* h = free_headers_;
  free_headers_ = h->next_;
  h->next_ = nullptr;
  return h;
}

void BufferPool::ReleaseHeader(Buffer* header) {
  header->AdvanceGeneration();
  PushHeader(header);
}

void BufferPool::PushHeader(Buffer* header) {
  header->data_ = nullptr;
  header->size_class_ = -1;
  header->owner_ = nullptr;
  header->extent_ = 0;
  std::lock_guard guard(header_mutex_);
  header->next_ = free_headers_;
  free_headers_ = header;
}

ResetCounter* BufferPool::TakeResetCounter() {
  std::lock_guard guard(header_mutex_);
  if (free_reset_counters_.empty()) return &reset_counters_.emplace_back();
  ResetCounter* counter = free_reset_counters_.back();
  free_reset_counters_.pop_back();
  return counter;
}

void BufferPool::GiveResetCounter(ResetCounter* counter) {
  std::lock_guard guard(header_mutex_);
  free_reset_counters_.push_back(counter);
}

PoolStats BufferPool::Stats() const {
  PoolStats s;
  s.max_idle_bytes = max_idle_bytes_;
  std::lock_guard guard(lock_);
  for (int i = 0; i < kSizeClassCount; ++i) {
    const SizeClass& c = classes_[static_cast<size_t>(i)];
    const int64_t size = SizeClassBytesAt(i);
    const int64_t rented = c.rented();
    s.rented_buffers += rented;
    s.hits += c.rents - c.misses;
    s.misses += c.misses;
    s.frees_over_cap += c.frees_over_cap;
    const int64_t idle = c.blocks - rented;
    if (rented || idle) s.classes.push_back({size, rented, idle});
  }
  s.rented_requested_bytes = rented_[1];
  s.rented_bytes = rented_[0];
  s.idle_bytes = held_bytes_ - rented_[0];
  s.peak_rented_bytes = peak_rented_bytes_;
  return s;
}

}  // namespace onemodel
