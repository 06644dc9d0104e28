// Tensor::ToLayout (spec 5): NCHW, NHWC and the blocked families, as pure data movement.
#include <string>

#include "core/tensor/strided_copy.h"
#include "core/tensor/tensor.h"

namespace onemodel {
namespace {

// Copies between a plain tensor's layout and a buffer of blocked `family`, one block at a
// time: block j holds indices [j*B, j*B + width) of the blocked dimension d as a strided
// view of the plain shape with extent d = width, stride 1 along d and the block's physical
// order elsewhere (dimensions after d inside the block, B lanes innermost; dimensions before
// d outside all blocks). Blocked: strides (Cb*H*W*B, 1, W*B, B); BlockedWeights: (1,
// KH*KW*B, KW*B, B).
void CopyBlocks(const Shape& shape, int32_t block, Layout family, int element_size,
                std::byte* plain, const Strides& plain_strides, std::byte* blocked,
                bool to_blocked) {
  const int split = BlockedDim(family);
  const int64_t blocks = (int64_t{shape[split]} + block - 1) / block;
  Strides blocked_strides{0, 0, 0, 0};
  int64_t step = block;  // the physical distance between neighbours of the next dimension
  for (int d = 3; d > split; --d) {
    blocked_strides[d] = static_cast<int32_t>(step);
    step *= shape[d];
  }
  const int64_t block_elements = step;  // one block: the dimensions after d, times B
  blocked_strides[split] = 1;
  step *= blocks;
  for (int d = split - 1; d >= 0; --d) {
    blocked_strides[d] = static_cast<int32_t>(step);
    step *= shape[d];
  }
  for (int64_t j = 0; j < blocks; ++j) {
    const int64_t width = std::min<int64_t>(block, shape[split] - j * block);
    auto extent = [&](int d) -> int64_t { return d == split ? width : shape[d]; };
    const Shape part{extent(0), extent(1), extent(2), extent(3)};
    std::byte* p = plain + j * block * plain_strides[split] * element_size;
    std::byte* b = blocked + j * block_elements * element_size;
    if (to_blocked) {
      internal::StridedCopy(part, element_size, b, blocked_strides, p, plain_strides);
    } else {
      internal::StridedCopy(part, element_size, p, plain_strides, b, blocked_strides);
    }
  }
}

}  // namespace

Tensor Tensor::ToLayout(Layout layout, Allocator& allocator, int32_t block) const {
  CheckLive();
  if (rank() != 4) {
    throw TensorLayoutException("ToLayout(" + std::string(LayoutName(layout)) +
                                ") needs a rank-4 (N, C, H, W) tensor, got " + Describe());
  }
  if (layout == Layout::kStrided) {
    throw TensorLayoutException(
        "ToLayout: Strided is not a target layout; choose NCHW, NHWC, "
        "Blocked or BlockedWeights");
  }
  if (IsBlocked(layout) && block <= 0) {
    throw TensorLayoutException("ToLayout(" + std::string(LayoutName(layout)) +
                                "): block size must be positive, got " + std::to_string(block));
  }
  const Layout from = this->layout();
  if (from == layout && (!IsBlocked(layout) || block == block_)) return *this;

  const int size = ElementSize(dtype_);
  if (block_) {
    // Blocked source: unblock into NCHW, then move on if another layout was asked for.
    Tensor nchw = Empty(shape_, dtype_, allocator);
    CopyBlocks(shape_, block_, from, size, nchw.buffer_->data(), nchw.strides_,
               buffer_->data() + offset_ * size, /*to_blocked=*/false);
    nchw.buffer_->BumpVersion();  // written once, like every copy (CopyFrom counts one write)
    if (layout == Layout::kNchw) return nchw;
    Tensor out = nchw.ToLayout(layout, allocator, block);
    nchw.Dispose();
    return out;
  }
  if (IsBlocked(layout)) {
    const int64_t physical = BlockedElementCount(shape_, block, layout);
    if (physical > kMaxBufferBytes / size) {  // not physical * size: that can overflow
      throw TensorShapeException("ToLayout(" + std::string(LayoutName(layout)) +
                                 "): " + Describe() + " blocked by " + std::to_string(block) +
                                 " needs " + std::to_string(physical) + " elements of " +
                                 std::to_string(size) + " bytes, above the buffer limit of " +
                                 std::to_string(kMaxBufferBytes) + " bytes");
    }
    Tensor out;
    out.buffer_ = allocator.Allocate(physical * size, /*zero=*/true);  // tail lanes stay 0
    out.generation_ = out.buffer_->generation();
    out.dtype_ = dtype_;
    out.block_ = block;
    out.weight_blocks_ = layout == Layout::kBlockedWeights;
    out.shape_ = shape_;
    out.strides_ = Strides{0, 0, 0, 0};
    CopyBlocks(shape_, block, layout, size, buffer_->data() + offset_ * size, strides_,
               out.buffer_->data(), /*to_blocked=*/true);
    out.buffer_->BumpVersion();
    return out;
  }
  if (layout == Layout::kNchw) return Contiguous(allocator);
  // NHWC: the same logical tensor with channels-last strides.
  Tensor out = Empty(shape_, dtype_, allocator);
  out.strides_ = NhwcStrides(shape_);
  out.CopyFrom(*this);
  return out;
}

}  // namespace onemodel
