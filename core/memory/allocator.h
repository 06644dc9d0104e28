// Allocator: where an operation gets the buffer for its output (a pool, a session's ledger or
// an arena). Every buffer it returns is 64-byte aligned, version 0, and owned by someone who
// takes it back through BufferOwner::Release.
//
//   Buffer* out = allocator.Allocate(count * sizeof(float));
#pragma once

#include <cstdint>

#include "core/memory/buffer.h"

namespace onemodel {

class Allocator {
 public:
  // A buffer of `length` bytes (0 <= length <= 2^31-1), zero-filled when `zero` is true.
  // Throws TensorShapeException for a length outside the limit.
  virtual Buffer* Allocate(int64_t length, bool zero = false) = 0;

 protected:
  ~Allocator() = default;
};

namespace internal {
// Throws TensorShapeException unless 0 <= length <= 2^31-1 (spec 3's buffer limit).
void CheckBufferLength(int64_t length);
}  // namespace internal

}  // namespace onemodel
