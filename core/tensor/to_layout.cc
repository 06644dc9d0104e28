// Tensor::ToLayout (spec 5): NCHW, NHWC and channel-blocked, as pure data movement.
#include <string>

#include "core/tensor/strided_copy.h"
#include "core/tensor/tensor.h"

namespace onemodel {
namespace {

// Copies between a plain NCHW-logical tensor's layout and a blocked buffer, one channel block
// at a time: block j holds channels [j*B, j*B + width) as a strided view of shape
// (N, width, H, W) with strides (Cb*H*W*B, 1, W*B, B).
void CopyBlocks(const Shape& nchw, int32_t block, int element_size, std::byte* plain,
                const Strides& plain_strides, std::byte* blocked, bool to_blocked) {
  const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  const int64_t blocks = (c + block - 1) / block;
  const Strides blocked_strides{static_cast<int32_t>(blocks * h * w * block), 1,
                                static_cast<int32_t>(w * block), block};
  for (int64_t j = 0; j < blocks; ++j) {
    const int64_t width = std::min<int64_t>(block, c - j * block);
    const Shape part{n, width, h, w};
    std::byte* p = plain + j * block * plain_strides[1] * element_size;
    std::byte* b = blocked + j * h * w * block * element_size;
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
    throw TensorLayoutException("ToLayout: Strided is not a target layout; choose NCHW, NHWC "
                                "or Blocked");
  }
  if (layout == Layout::kBlocked && block <= 0) {
    throw TensorLayoutException("ToLayout(Blocked): block size must be positive, got " +
                                std::to_string(block));
  }
  const Layout from = this->layout();
  if (from == layout && (layout != Layout::kBlocked || block == block_)) return *this;

  const int size = ElementSize(dtype_);
  if (block_) {
    // Blocked source: unblock into NCHW, then move on if another layout was asked for.
    Tensor nchw = Empty(shape_, dtype_, allocator);
    CopyBlocks(shape_, block_, size, nchw.buffer_->data(), nchw.strides_,
               buffer_->data() + offset_ * size, /*to_blocked=*/false);
    nchw.buffer_->BumpVersion();  // written once, like every copy (CopyFrom counts one write)
    if (layout == Layout::kNchw) return nchw;
    Tensor out = nchw.ToLayout(layout, allocator, block);
    nchw.Dispose();
    return out;
  }
  if (layout == Layout::kBlocked) {
    const int64_t physical = BlockedElementCount(shape_, block);
    if (physical * size > kMaxBufferBytes) {
      throw TensorShapeException("ToLayout(Blocked): " + Describe() + " blocked by " +
                                 std::to_string(block) + " needs " +
                                 std::to_string(physical * size) +
                                 " bytes, above the buffer limit");
    }
    Tensor out;
    out.buffer_ = allocator.Allocate(physical * size, /*zero=*/true);  // tail channels stay 0
    out.generation_ = out.buffer_->generation();
    out.dtype_ = dtype_;
    out.block_ = block;
    out.shape_ = shape_;
    out.strides_ = Strides{0, 0, 0, 0};
    CopyBlocks(shape_, block, size, buffer_->data() + offset_ * size, strides_,
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
