// Helpers shared by the operations: input checks with messages that name the op and the
// input, output allocation, and record creation.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "core/autograd/backward_record.h"

namespace onemodel::ops::internal {

// Throws TensorTypeException unless `t` is a live plain FLOAT tensor; the message names the op
// and the input and, for other types, suggests a Cast. With `blocked_weights`, a tensor in
// the BlockedWeights family (convolution weights) passes too.
void CheckFloat(std::string_view op, std::string_view input, const Tensor& t,
                bool blocked_weights = false);

// A new contiguous FLOAT tensor of `shape` from the context's allocator.
Tensor NewFloat(const Shape& shape, const OpContext& ctx, bool zero = false);

// Makes the record for `op` over `inputs`, and returns `result` with the record as its GradFn.
// Call only when ShouldRecord(inputs).
std::shared_ptr<BackwardRecord> NewRecord(OpKind op, BackwardFn backward,
                                          std::initializer_list<const Tensor*> inputs);

// True when the record's input i wants a gradient (has an autograd node).
inline bool Wants(const BackwardRecord& r, int i) {
  return r.inputs()[static_cast<size_t>(i)].node != nullptr;
}

// Writes into grads[i] the full-shape gradient `full` summed down to input i's shape (undoing
// a broadcast); `full` is consumed.
void Give(const BackwardRecord& r, int i, Tensor full, const OpContext& ctx,
          std::span<Tensor> grads);

// A tensor derived from `source` that may be a temporary copy (Contiguous, Reshape): disposed
// at scope exit unless it shares `source`'s buffer.
class Temporary {
 public:
  Temporary(Tensor t, const Tensor& source)
      : t_(std::move(t)), owned_(t_.buffer() != source.buffer()) {}
  ~Temporary() {
    if (owned_ && !t_.IsStale()) t_.Dispose();
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  const Tensor& operator*() const { return t_; }
  const Tensor* operator->() const { return &t_; }

 private:
  Tensor t_;
  bool owned_;
};

// The byte range [lo, hi) of its buffer a tensor's elements lie in (empty for no elements).
std::pair<int64_t, int64_t> ByteRange(const Tensor& t);

// True when `a` and `b` have elements in a common byte range of one buffer (an in-place write
// to one could change what the other reads).
bool SharesMemory(const Tensor& a, const Tensor& b);

// `dim` in [-rank, rank) as an index; throws TensorShapeException naming the op.
int NormalizeAxis(std::string_view op, int dim, int rank);

}  // namespace onemodel::ops::internal
