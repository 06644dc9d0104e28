// Tensor::CopyLogicalBytes: any byte range of a plain tensor's row-major values.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "core/tensor/strided_copy.h"
#include "core/tensor/tensor.h"

namespace onemodel {

void Tensor::CopyLogicalBytes(int64_t first_byte, std::span<std::byte> out) const {
  CheckLive();
  CheckPlain("CopyLogicalBytes");
  const int size = ElementSize(dtype_);
  const int64_t total = ElementCount() * size, wanted = static_cast<int64_t>(out.size());
  if (first_byte < 0 || wanted > total - first_byte) {
    throw TensorShapeException("CopyLogicalBytes: " + std::to_string(wanted) + " bytes from byte " +
                               std::to_string(first_byte) + " are outside the " +
                               std::to_string(total) + " bytes of " + Describe());
  }
  const std::byte* base = buffer_->data() + offset_ * size;
  std::byte* dst = out.data();
  int64_t at = first_byte, left = wanted;
  // Copies the part [skip, skip + n) of element at / size.
  const auto partial = [&](int64_t skip, int64_t n) {
    std::array<std::byte, 8> element;  // the widest element type
    internal::StridedCopyRange(shape_, size, base, strides_, at / size, 1, element.data());
    std::memcpy(dst, element.data() + skip, static_cast<size_t>(n));
    dst += n;
    at += n;
    left -= n;
  };
  if (left > 0 && at % size != 0) partial(at % size, std::min<int64_t>(size - at % size, left));
  const int64_t whole = left / size;
  internal::StridedCopyRange(shape_, size, base, strides_, at / size, whole, dst);
  dst += whole * size;
  at += whole * size;
  left -= whole * size;
  if (left > 0) partial(0, left);
}

}  // namespace onemodel
