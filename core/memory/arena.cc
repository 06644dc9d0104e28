#include "core/memory/arena.h"

#include <algorithm>
#include <string>

#include "core/common/exceptions.h"
#include "core/shape/shape.h"

namespace onemodel {

Arena::Arena(BufferPool& pool, int64_t chunk_bytes, MemoryBudget* budget)
    : pool_(pool), chunk_bytes_(chunk_bytes), budget_(budget) {
  if (chunk_bytes < kBufferAlignment || chunk_bytes > kMaxBufferBytes) {
    throw TensorException("arena chunk size must be between " + std::to_string(kBufferAlignment) +
                          " and " + std::to_string(kMaxBufferBytes) + " bytes (got " +
                          std::to_string(chunk_bytes) + ")");
  }
}

Arena::~Arena() {
  for (Buffer* b : live_) b->AdvanceGeneration();
  for (Buffer* b : live_) pool_.ReleaseHeader(b);
  for (Buffer* b : spare_) pool_.ReleaseHeader(b);
  ReleaseChunks();
}

void Arena::ReleaseChunks() {
  while (!chunks_.empty()) ReleaseLastChunk();
  current_ = 0;
  cursor_ = limit_ = nullptr;
}

void Arena::ReleaseLastChunk() {
  Buffer* chunk = chunks_.back();
  chunks_.pop_back();
  if (budget_) budget_->Refund(SizeClassBytes(chunk->length()));
  try {
    pool_.Release(chunk);
  } catch (const BufferOverrunException&) {
    // A chunk's own canary sits past the last slice, which Reset() already checked.
  }
}

int64_t Arena::Trim(int64_t keep_bytes) {
  // With nothing allocated since the reset every chunk is free; otherwise those up to the
  // cursor's may hold live slices.
  const size_t in_use = used_bytes_ == 0 ? 0 : current_ + 1;
  int64_t held = 0;
  for (const Buffer* c : chunks_) held += c->length();
  int64_t trimmed = 0;
  while (chunks_.size() > in_use && held > keep_bytes) {
    const int64_t length = chunks_.back()->length();
    ReleaseLastChunk();
    held -= length;
    trimmed += length;
  }
  if (chunks_.empty()) {
    current_ = 0;
    cursor_ = limit_ = nullptr;
  }
  return trimmed;
}

void Arena::Clear() {
  try {
    Reset();
  } catch (const BufferOverrunException&) {
    ReleaseChunks();
    throw;
  }
  ReleaseChunks();
}

Buffer* Arena::AllocateSlow(int64_t length, bool zero) {
  internal::CheckBufferLength(length);
  const int64_t need = SliceBytes(length);
  if (spare_.empty()) {
    spare_.push_back(pool_.AcquireHeader());
    ++growth_events_;
  }
  if (live_.size() == live_.capacity()) {
    live_.reserve(std::max<size_t>(16, live_.capacity() * 2));
    spare_.reserve(live_.capacity());
    ++growth_events_;
  }
  if (limit_ - cursor_ < need) NextChunk(need);
  Buffer* b = spare_.back();
  spare_.pop_back();
  live_.push_back(b);
  Hand(b, length, need, zero);
  return b;
}

void Arena::NextChunk(int64_t need) {
  size_t next = chunks_.empty() ? 0 : current_ + 1;
  // A held chunk further on that fits moves to `next`: the same allocation sequence always
  // finds the same chunks in the same order, so a warm arena never rents.
  auto fits = std::find_if(chunks_.begin() + static_cast<std::ptrdiff_t>(next), chunks_.end(),
                           [&](Buffer* c) { return c->length() >= need; });
  if (fits == chunks_.end()) {
    const int64_t length = std::max(chunk_bytes_, need);
    if (budget_) budget_->Charge(SizeClassBytes(length));
    next = chunks_.empty() ? 0 : current_ + 1;  // the charge may have trimmed free chunks
    Buffer* chunk;
    try {
      chunk = pool_.RentBlock(length, /*zero=*/false);
    } catch (...) {
      if (budget_) budget_->Refund(SizeClassBytes(length));
      throw;
    }
    ++growth_events_;
    chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(next), chunk);
  } else {
    std::rotate(chunks_.begin() + static_cast<std::ptrdiff_t>(next), fits, fits + 1);
  }
  current_ = next;
  cursor_ = chunks_[current_]->data();
  limit_ = cursor_ + chunks_[current_]->length();
}

void Arena::Release(Buffer* b) {
  if (b->owner_ != this) {
    throw StaleTensorException("buffer " + std::to_string(b->id()) +
                               " was released twice or does not belong to this arena");
  }
  b->owner_ = nullptr;
  b->AdvanceGeneration();
  if constexpr (kChecked) {
    if (!internal::CanaryIntact(*b)) {
      throw BufferOverrunException("arena buffer " + std::to_string(b->id()) + " of " +
                                   std::to_string(b->length()) +
                                   " bytes was written past its end (canary overwritten)");
    }
  }
}

void Arena::Free(Buffer* b) {
  try {
    Release(b);
  } catch (const BufferOverrunException&) {
    Rewind();
    throw;
  }
  Rewind();
}

bool Arena::FreeIfOwned(Buffer* b, uint64_t generation) {
  if (!b || b->owner_ != this || b->generation() != generation) return false;
  Free(b);
  return true;
}

void Arena::Rewind() {
  while (!live_.empty() && live_.back()->owner_ != this) {
    Buffer* b = live_.back();
    if (b->data_ < chunks_[current_]->data() || b->data_ >= limit_) return;  // an earlier chunk
    peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes_);
    used_bytes_ -= b->capacity_;
    cursor_ = b->data_;
    if constexpr (kChecked) {
      std::memset(b->data_, std::to_integer<int>(kPoisonByte), static_cast<size_t>(b->capacity_));
    }
    b->data_ = nullptr;
    live_.pop_back();
    spare_.push_back(b);
  }
}

void Arena::Reset() {
  int64_t overruns = 0;
  for (Buffer* b : live_) {
    if constexpr (kChecked) {
      if (b->owner_ == this && !internal::CanaryIntact(*b)) ++overruns;
      std::memset(b->data_, std::to_integer<int>(kPoisonByte), static_cast<size_t>(b->capacity_));
    }
    b->AdvanceGeneration();
    b->owner_ = nullptr;
    b->data_ = nullptr;
    spare_.push_back(b);
  }
  live_.clear();
  peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes_);
  used_bytes_ = 0;
  ++resets_;
  current_ = 0;
  cursor_ = chunks_.empty() ? nullptr : chunks_[0]->data();
  limit_ = chunks_.empty() ? nullptr : cursor_ + chunks_[0]->length();
  if (overruns) {
    throw BufferOverrunException(std::to_string(overruns) +
                                 " arena buffer(s) were written past their end (canary "
                                 "overwritten); the arena was reset all the same");
  }
}

ArenaStats Arena::Stats() const {
  ArenaStats s;
  s.chunks = static_cast<int64_t>(chunks_.size());
  for (const Buffer* c : chunks_) s.reserved_bytes += c->length();
  s.used_bytes = used_bytes_;
  s.peak_used_bytes = std::max(peak_used_bytes_, used_bytes_);
  s.resets = resets_;
  s.allocations = allocations_;
  s.growth_events = growth_events_;
  return s;
}

}  // namespace onemodel
