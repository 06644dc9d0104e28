#include "core/memory/buffer_ledger.h"

#include <exception>
#include <string>

#include "core/common/exceptions.h"

namespace onemodel {

BufferLedger::~BufferLedger() {
  try {
    ReclaimAll();
  } catch (const BufferOverrunException&) {
    // Everything was reclaimed; a destructor cannot report the overrun any further.
  }
}

Buffer* BufferLedger::Allocate(int64_t length, bool zero) {
  internal::CheckBufferLength(length);
  if (budget_) budget_->Charge(SizeClassBytes(length));
  Buffer* b;
  try {
    b = pool_.Rent(length, zero);
  } catch (...) {
    if (budget_) budget_->Refund(SizeClassBytes(length));
    throw;
  }
  b->owner_ = this;
  std::lock_guard guard(mutex_);
  b->set_prev(nullptr);
  b->next_ = head_;
  if (head_) head_->set_prev(b);
  head_ = b;
  ++rented_buffers_;
  rented_bytes_ += length;
  return b;
}

void BufferLedger::Unlink(Buffer* b) {
  if (Buffer* prev = b->prev())
    prev->next_ = b->next_;
  else
    head_ = b->next_;
  if (b->next_) b->next_->set_prev(b->prev());
  b->set_prev(nullptr);
  b->next_ = nullptr;
  b->owner_ = &pool_;
  --rented_buffers_;
  rented_bytes_ -= b->length();
}

void BufferLedger::Release(Buffer* b) {
  {
    std::lock_guard guard(mutex_);
    if (b->owner_ != this) {
      throw StaleTensorException("buffer " + std::to_string(b->id()) +
                                 " was released twice or was not rented through this session");
    }
    Unlink(b);
  }
  GiveBack(b);
}

bool BufferLedger::ReleaseIfOwned(Buffer* b, uint64_t generation) {
  if (!b) return false;
  {
    std::lock_guard guard(mutex_);
    if (b->owner_ != this || b->generation() != generation) return false;
    Unlink(b);
  }
  GiveBack(b);
  return true;
}

void BufferLedger::GiveBack(Buffer* b) {
  if (budget_) budget_->Refund(SizeClassBytes(b->length()));
  pool_.Release(b);  // may report a broken canary (CHECKED) once the buffer is back
}

int64_t BufferLedger::ReclaimAll() {
  int64_t count = 0;
  std::exception_ptr overrun;
  for (;;) {
    Buffer* b;
    {
      std::lock_guard guard(mutex_);
      b = head_;
      if (!b) break;
      Unlink(b);
      ++leaked_;
    }
    ++count;
    try {
      GiveBack(b);
    } catch (const BufferOverrunException&) {
      if (!overrun) overrun = std::current_exception();  // reported once everything is back
    }
  }
  if (overrun) std::rethrow_exception(overrun);
  return count;
}

int64_t BufferLedger::rented_buffers() const {
  std::lock_guard guard(mutex_);
  return rented_buffers_;
}
int64_t BufferLedger::rented_bytes() const {
  std::lock_guard guard(mutex_);
  return rented_bytes_;
}
int64_t BufferLedger::leaked() const {
  std::lock_guard guard(mutex_);
  return leaked_;
}

}  // namespace onemodel
