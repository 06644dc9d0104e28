#include "core/ops/pooling.h"

#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

void CheckParams(const Tensor& x, const MaxPool2dParams& p) {
  if (x.rank() != 4) {
    throw TensorShapeException("MaxPool2d: input x must be (N, C, H, W), got " + x.Describe());
  }
  auto check = [](const char* what, int32_t kernel, int32_t stride, int32_t pad) {
    if (kernel < 1 || stride < 1 || pad < 0 || pad >= kernel) {
      throw TensorShapeException(
          std::string("MaxPool2d: ") + what + " kernel " + std::to_string(kernel) + ", stride " +
          std::to_string(stride) + ", pad " + std::to_string(pad) +
          " is invalid: kernel and stride must be >= 1 and 0 <= pad < kernel");
    }
  };
  check("height", p.kernel_h, p.stride_h, p.pad_h);
  check("width", p.kernel_w, p.stride_w, p.pad_w);
}

// Scatters the output gradient to each window's argmax (adding where windows overlap). The
// kernel writes every element of the input gradient, so it is allocated without zeroing.
void MaxPool2dBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                       std::span<Tensor> grads) {
  grads[0] = internal::NewFloat(r.InputShape(0), ctx);
  ctx.kernels.MaxPool2dBackward(g, r.Owned(0), grads[0]);
}

}  // namespace

Tensor MaxPool2d(const Tensor& x, const MaxPool2dParams& p, const OpContext& ctx) {
  internal::CheckFloat("MaxPool2d", "x", x);
  CheckParams(x, p);
  const int64_t oh = PoolOutputExtent(x.shape()[2], p.kernel_h, p.stride_h, p.pad_h);
  const int64_t ow = PoolOutputExtent(x.shape()[3], p.kernel_w, p.stride_w, p.pad_w);
  if (x.shape()[2] == 0 || x.shape()[3] == 0 || oh < 1 || ow < 1) {
    throw TensorShapeException("MaxPool2d: input " + x.shape().ToString() +
                               " is too small for the window (output would be " +
                               std::to_string(oh) + " x " + std::to_string(ow) + ")");
  }
  const Shape out_shape{x.shape()[0], x.shape()[1], oh, ow};
  Tensor out = internal::NewFloat(out_shape, ctx);
  if (!ShouldRecord({&x})) {
    ctx.kernels.MaxPool2d(x, p, out, nullptr);  // no argmax when nothing records
    return out;
  }
  Tensor indices = Tensor::Empty(out_shape, DType::kInt32, ctx.allocator);
  ctx.kernels.MaxPool2d(x, p, out, &indices);
  auto record = internal::NewRecord(OpKind::kMaxPool2d, &MaxPool2dBackward, {&x});
  record->Own(indices);
  record->SetInts({p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w});
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
