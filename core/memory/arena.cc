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
  resets_ = pool.TakeResetCounter();
  resets_before_ = resets_->resets.load(std::memory_order_relaxed);
}

Arena::~Arena() {
  for (Buffer* b : headers_) {
    b->LeaveArena();
    pool_.ReleaseHeader(b);  // advances the generation: the live ones' handles become stale
  }
  pool_.GiveResetCounter(resets_);
  ReleaseChunks();
}

void Arena::ReleaseChunks() {
  while (!chunks_.empty()) ReleaseLastChunk();
  current_ = 0;
  PlaceCursor();
}

void Arena::PlaceCursor() {
  chunk_start_ = chunks_.empty() ? nullptr : chunks_[current_]->data();
  chunk_length_ = chunks_.empty() ? 0 : static_cast<uint64_t>(chunks_[current_]->length());
  SetPosition(0, live_count());
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
  const size_t in_use = used_bytes() == 0 ? 0 : current_ + 1;
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
    PlaceCursor();
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
  if (live_count() == headers_.size()) {
    if (headers_.size() == headers_.capacity()) {
      headers_.reserve(std::max<size_t>(16, headers_.capacity() * 2));
      ++growth_events_;
    }
    Buffer* const header = pool_.AcquireHeader();
    header->size_class_ = -1 - static_cast<int32_t>(headers_.size());
    header->JoinArena(resets_);
    headers_.push_back(header);
    ++growth_events_;
    headers_held_ = headers_.size();
  }
  if (static_cast<int64_t>(chunk_length_) - offset() < need) NextChunk(need);
  const size_t live = live_count();
  std::byte* const at = chunk_start_ + offset();
  SetPosition(offset() + need, live + 1);
  return Hand(headers_[live], at, length, need, zero);
}

void Arena::NextChunk(int64_t need) {
  // What the current chunk handed out moves into used_before_chunk_, so used_bytes() stays
  // exact while the budget's reclaimer may Trim() below.
  used_before_chunk_ += offset();
  SetPosition(0, live_count());
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
  PlaceCursor();
}

void Arena::Release(Buffer* b) {
  if (!Rents(*b)) {
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
  if (!b || !Rents(*b) || b->generation() != generation) return false;
  Free(b);
  return true;
}

void Arena::Rewind() {
  for (size_t live = live_count(); live > 0 && headers_[live - 1]->owner_ != this; --live) {
    Buffer* b = headers_[live - 1];
    const std::byte* const chunk_end = chunk_start_ + chunk_length_;
    if (b->data_ < chunk_start_ || b->data_ >= chunk_end) return;  // an earlier chunk
    peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes());
    if constexpr (kChecked) {
      std::memset(b->data_, std::to_integer<int>(kPoisonByte), static_cast<size_t>(b->capacity()));
    }
    SetPosition(b->data_ - chunk_start_, live - 1);  // b is the first spare header now
    b->data_ = nullptr;
    ++retired_allocations_;
  }
}

void Arena::Reset() {
  int64_t overruns = 0;
  const size_t live = live_count();
  if constexpr (kChecked) {
    for (size_t i = 0; i < live; ++i) {
      Buffer* b = headers_[i];
      if (b->owner_ == this && !internal::CanaryIntact(*b)) ++overruns;
      std::memset(b->data_, std::to_integer<int>(kPoisonByte), static_cast<size_t>(b->capacity()));
    }
  }
  // One store makes every handle stale (Buffer::generation adds the count); the headers keep
  // their owner, and Rents() now says no by the index.
  resets_->resets.store(resets_->resets.load(std::memory_order_relaxed) + 1,
                        std::memory_order_release);
  retired_allocations_ += static_cast<int64_t>(live);
  peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes());
  used_before_chunk_ = 0;
  current_ = 0;
  SetPosition(0, 0);
  PlaceCursor();
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
  s.used_bytes = used_bytes();
  s.peak_used_bytes = std::max(peak_used_bytes_, s.used_bytes);
  s.resets = static_cast<int64_t>(resets_->resets.load(std::memory_order_relaxed) - resets_before_);
  s.allocations = retired_allocations_ + static_cast<int64_t>(live_count());
  s.growth_events = growth_events_;
  return s;
}

}  // namespace onemodel
