#include "core/tensor/tensor.h"

#include <array>
#include <cstring>
#include <vector>

#include "core/tensor/grad_mode.h"
#include "core/tensor/strided_copy.h"

namespace onemodel {

Tensor Tensor::Empty(const Shape& shape, DType dtype, Allocator& allocator, bool zero) {
  if (!IsSupported(dtype)) FromOnnx(static_cast<int32_t>(dtype));  // throws, naming the type
  CheckByteSize(shape, dtype);
  Tensor t;
  t.buffer_ = allocator.Allocate(shape.ElementCount() * ElementSize(dtype), zero);
  t.generation_ = t.buffer_->generation();
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = ContiguousStrides(shape);
  return t;
}

Tensor Tensor::FromBuffer(Buffer* buffer, DType dtype, const Shape& shape, const Strides& strides,
                          int64_t offset) {
  if (!IsSupported(dtype)) FromOnnx(static_cast<int32_t>(dtype));
  if (!buffer->owner() || !buffer->owner()->Rents(*buffer)) {
    throw StaleTensorException("FromBuffer: buffer " + std::to_string(buffer->id()) +
                               " is not rented (it was released or its arena reset)");
  }
  Tensor t;
  t.buffer_ = buffer;
  t.generation_ = buffer->generation();
  t.dtype_ = dtype;
  return t.WithView(shape, strides, offset);
}

Tensor Tensor::WithView(const Shape& shape, const Strides& strides, int64_t offset) const {
  CheckLive();
  CheckViewBounds(shape, strides, offset, buffer_->length() / ElementSize(dtype_));
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_ = strides;
  t.offset_ = offset;
  t.node_.reset();
  return t;
}

std::string Tensor::Describe() const {
  std::string s = std::string(OnnxName(dtype_)) + " " + shape_.ToString();
  if (block_) {
    return s + (weight_blocks_ ? " weights" : "") + " blocked by " + std::to_string(block_);
  }
  return s + " strides " + strides_.ToString() + " offset " + std::to_string(offset_);
}

void Tensor::ThrowNotLive() const {
  if (!buffer_) throw StaleTensorException("null tensor handle used (it was never assigned)");
  throw StaleTensorException("tensor " + Describe() + " is stale: buffer " +
                             std::to_string(buffer_->id()) + " was released or its arena reset " +
                             "(handle generation " + std::to_string(generation_) +
                             ", buffer generation " + std::to_string(buffer_->generation()) + ")");
}

void Tensor::ThrowTypeMismatch(DType requested) const {
  throw TensorTypeException("tensor " + Describe() + " holds " + std::string(OnnxName(dtype_)) +
                            " elements, not " + std::string(OnnxName(requested)));
}

void Tensor::CheckPlain(const char* what) const {
  if (block_) {
    throw TensorLayoutException(std::string(what) + " is not available on blocked tensor " +
                                Describe() + "; convert it with ToLayout(NCHW) first");
  }
}

int64_t Tensor::DenseCount() const {
  if (block_) return BlockedElementCount(shape_, block_, layout());
  if (!onemodel::IsContiguous(shape_, strides_)) {
    throw TensorLayoutException("tensor " + Describe() +
                                " is not contiguous, so it has no dense span; call "
                                "Contiguous() first or use Storage() with its strides");
  }
  return shape_.ElementCount();
}

std::span<const std::byte> Tensor::RawData() const {
  CheckLive();
  const int64_t size = ElementSize(dtype_);
  return {buffer_->data() + offset_ * size, static_cast<size_t>(DenseCount() * size)};
}

std::span<std::byte> Tensor::MutableRawData() {
  CheckLive();
  const int64_t size = ElementSize(dtype_);
  std::span<std::byte> s{buffer_->data() + offset_ * size,
                         static_cast<size_t>(DenseCount() * size)};
  buffer_->BumpVersion();
  return s;
}

int64_t Tensor::ElementOffset(std::span<const int64_t> index) const {
  CheckPlain("element access");
  if (static_cast<int>(index.size()) != rank()) {
    throw TensorShapeException("index of rank " + std::to_string(index.size()) + " for tensor " +
                               Describe());
  }
  int64_t at = offset_;
  for (int d = 0; d < rank(); ++d) {
    const int64_t i = index[static_cast<size_t>(d)];
    if (i < 0 || i >= shape_[d]) {
      throw TensorShapeException("index " + FormatExtents(index) + " is out of range for tensor " +
                                 Describe());
    }
    at += i * strides_[d];
  }
  return at;
}

namespace {
// True when every element of the view has its own storage (no stride 0 over extent > 1).
bool Writable(const Shape& shape, const Strides& strides) {
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] > 1 && strides[d] == 0) return shape.IsEmpty();
  }
  return true;
}
}  // namespace

void Tensor::CheckWritable() const {
  if (!Writable(shape_, strides_)) {
    throw TensorShapeException("cannot write into broadcast view " + Describe() +
                               " (a dimension of extent > 1 has stride 0); write into a "
                               "Contiguous() copy instead");
  }
}

void Tensor::FillBytes(const void* value) {
  CheckPlain("Fill");
  CheckLive();
  CheckWritable();
  const int size = ElementSize(dtype_);
  const std::array<int32_t, kMaxRank> zeros{};
  internal::StridedCopy(
      shape_, size, buffer_->data() + offset_ * size, strides_,
      static_cast<const std::byte*>(value),
      Strides(std::span<const int32_t>(zeros.data(), static_cast<size_t>(rank()))));
  buffer_->BumpVersion();
}

void Tensor::CopyFrom(const Tensor& src) {
  if (requires_grad() && GradMode::IsEnabled()) {
    throw TensorException("CopyFrom into " + Describe() +
                          ", which requires gradients, while recording is on: the in-place "
                          "write would corrupt the graph; do it under NoGrad or on a Detach()ed "
                          "handle");
  }
  CheckPlain("CopyFrom");
  src.CheckPlain("CopyFrom");
  CheckLive();
  src.CheckLive();
  if (src.dtype_ != dtype_ || !(src.shape_ == shape_)) {
    throw TensorShapeException("CopyFrom: source " + src.Describe() +
                               " does not match destination " + Describe() +
                               " (shape and type must be equal)");
  }
  CheckWritable();
  const int size = ElementSize(dtype_);
  std::byte* dst = buffer_->data() + offset_ * size;
  const std::byte* from = src.buffer_->data() + src.offset_ * size;
  Strides from_strides = src.strides_;
  std::vector<std::byte> staging;
  if (src.buffer_ == buffer_ && !shape_.IsEmpty()) {
    const OffsetRange a = ReachableOffsets(shape_, strides_, offset_);
    const OffsetRange b = ReachableOffsets(src.shape_, src.strides_, src.offset_);
    if (a.lowest <= b.highest && b.lowest <= a.highest) {  // may overlap: go through a copy
      staging.resize(static_cast<size_t>(shape_.ElementCount() * size));
      from_strides = ContiguousStrides(shape_);
      internal::StridedCopy(shape_, size, staging.data(), from_strides, from, src.strides_);
      from = staging.data();
    }
  }
  internal::StridedCopy(shape_, size, dst, strides_, from, from_strides);
  buffer_->BumpVersion();
}

void Tensor::Dispose() {
  CheckLive();
  buffer_->owner()->Release(buffer_);
}

Tensor Tensor::Contiguous(Allocator& allocator) const {
  CheckPlain("Contiguous");
  CheckLive();
  if (IsContiguous()) return *this;
  Tensor out = Empty(shape_, dtype_, allocator);
  out.CopyFrom(*this);
  return out;
}

}  // namespace onemodel
