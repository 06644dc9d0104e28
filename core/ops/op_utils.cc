#include "core/ops/internal/op_utils.h"

#include <string>

#include "core/common/exceptions.h"
#include "core/ops/reduce.h"

namespace onemodel::ops::internal {

void CheckFloat(std::string_view op, std::string_view input, const Tensor& t,
                bool blocked_weights) {
  if (t.is_null()) {
    throw TensorException(std::string(op) + ": input " + std::string(input) + " is a null handle");
  }
  if (t.dtype() != DType::kFloat) {
    throw TensorTypeException(std::string(op) + ": input " + std::string(input) + " is " +
                              t.Describe() +
                              "; operations run on FLOAT tensors, so Cast it to FLOAT first");
  }
  if (t.block_size() && !(blocked_weights && t.layout() == Layout::kBlockedWeights)) {
    throw TensorLayoutException(
        std::string(op) + ": input " + std::string(input) + " is blocked (" + t.Describe() +
        "); convert it with " +
        (blocked_weights ? "ToLayout(NCHW) or ToLayout(BlockedWeights)" : "ToLayout(NCHW)") +
        " first");
  }
  if (t.IsStale()) (void)t.version();  // throws StaleTensorException naming the tensor
}

Tensor NewFloat(const Shape& shape, const OpContext& ctx, bool zero) {
  return Tensor::Empty(shape, DType::kFloat, ctx.allocator, zero);
}

std::shared_ptr<BackwardRecord> NewRecord(OpKind op, BackwardFn backward,
                                          std::initializer_list<const Tensor*> inputs) {
  auto record = std::make_shared<BackwardRecord>(op, backward);
  for (const Tensor* t : inputs) record->AddInput(*t);
  return record;
}

void Give(const BackwardRecord& r, int i, Tensor full, const OpContext& ctx,
          std::span<Tensor> grads) {
  const Shape& shape = r.InputShape(i);
  if (full.shape() == shape) {
    grads[static_cast<size_t>(i)] = full;
    return;
  }
  grads[static_cast<size_t>(i)] = SumToShape(full, shape, ctx);
  full.Dispose();
}

int NormalizeAxis(std::string_view op, int dim, int rank) {
  if (rank == 0) {
    throw TensorShapeException(std::string(op) + ": axis " + std::to_string(dim) +
                               " does not exist: the input is a scalar (rank 0), which has no "
                               "axes; Reshape it to [1] first");
  }
  if (dim < -rank || dim >= rank) {
    throw TensorShapeException(std::string(op) + ": axis " + std::to_string(dim) +
                               " is out of range for rank " + std::to_string(rank) + " (valid: " +
                               std::to_string(-rank) + " to " + std::to_string(rank - 1) + ")");
  }
  return dim < 0 ? dim + rank : dim;
}

std::pair<int64_t, int64_t> ByteRange(const Tensor& t) {
  if (t.ElementCount() == 0) return {0, 0};
  int64_t lo = t.offset(), hi = t.offset();
  for (int d = 0; d < t.rank(); ++d) {
    const int64_t reach = (t.shape()[d] - 1) * t.strides()[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const int64_t size = ElementSize(t.dtype());
  return {lo * size, (hi + 1) * size};
}

bool SharesMemory(const Tensor& a, const Tensor& b) {
  if (a.buffer() != b.buffer()) return false;
  const auto [alo, ahi] = ByteRange(a);
  const auto [blo, bhi] = ByteRange(b);
  return alo < ahi && blo < bhi && alo < bhi && blo < ahi;
}

}  // namespace onemodel::ops::internal
