#include "core/ops/pooling.h"

#include <cstdint>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

void CheckRank(const char* op, const Tensor& x) {
  if (x.rank() != 4) {
    throw TensorShapeException(std::string(op) + ": input x must be (N, C, H, W), got " +
                               x.Describe());
  }
}

// One dimension's window: kernel, stride, dilation >= 1 and 0 <= pad < kernel.
void CheckWindow(const char* op, const char* what, int32_t kernel, int32_t stride, int32_t pad,
                 int32_t dilation) {
  if (kernel < 1 || stride < 1 || dilation < 1 || pad < 0 || pad >= kernel) {
    throw TensorShapeException(std::string(op) + ": " + what + " kernel " + std::to_string(kernel) +
                               ", stride " + std::to_string(stride) + ", pad " +
                               std::to_string(pad) + ", dilation " + std::to_string(dilation) +
                               " is invalid: kernel, stride and dilation must be >= 1 and "
                               "0 <= pad < kernel");
  }
}

// (N, C, oh, ow), after checking the output is not empty.
Shape OutputShape(const char* op, const Tensor& x, int64_t oh, int64_t ow) {
  if (x.shape()[2] == 0 || x.shape()[3] == 0 || oh < 1 || ow < 1) {
    throw TensorShapeException(std::string(op) + ": input " + x.shape().ToString() +
                               " is too small for the window (output would be " +
                               std::to_string(oh) + " x " + std::to_string(ow) + ")");
  }
  return Shape{x.shape()[0], x.shape()[1], oh, ow};
}

// Scatters the output gradient to each window's argmax (adding where windows overlap; -1:
// nowhere). The kernel writes every element of the input gradient, so it is allocated
// without zeroing.
void MaxPool2dBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                       std::span<Tensor> grads) {
  grads[0] = internal::NewFloat(r.InputShape(0), ctx);
  ctx.kernels.MaxPool2dBackward(g, r.Owned(0), grads[0]);
}

Tensor MaxPoolOp(const char* op, OpKind kind, const Tensor& x, MaxPool2dParams p, bool relu,
                 const OpContext& ctx) {
  internal::CheckFloat(op, "x", x);
  CheckRank(op, x);
  CheckWindow(op, "height", p.kernel_h, p.stride_h, p.pad_h, p.dilation_h);
  CheckWindow(op, "width", p.kernel_w, p.stride_w, p.pad_w, p.dilation_w);
  p.relu = relu;
  const Shape out_shape = OutputShape(
      op, x,
      PoolOutputExtent(x.shape()[2], p.kernel_h, p.stride_h, p.pad_h, p.dilation_h, p.ceil_mode),
      PoolOutputExtent(x.shape()[3], p.kernel_w, p.stride_w, p.pad_w, p.dilation_w, p.ceil_mode));
  Tensor out = internal::NewFloat(out_shape, ctx);
  if (!ShouldRecord({&x})) {
    ctx.kernels.MaxPool2d(x, p, out, nullptr);  // no argmax when nothing records
    return out;
  }
  Tensor indices = Tensor::Empty(out_shape, DType::kInt32, ctx.allocator);
  ctx.kernels.MaxPool2d(x, p, out, &indices);
  auto record = internal::NewRecord(kind, &MaxPool2dBackward, {&x});
  record->Own(indices);
  record->SetInts({p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h,
                   p.dilation_w, p.ceil_mode ? 1 : 0});
  return out.WithAutogradNode(std::move(record));
}

// The parameters AvgPool2d recorded in Ints.
AvgPool2dParams RecordedAvgParams(const BackwardRecord& r) {
  const std::vector<int64_t>& v = r.ints();
  return {static_cast<int32_t>(v[0]),
          static_cast<int32_t>(v[1]),
          static_cast<int32_t>(v[2]),
          static_cast<int32_t>(v[3]),
          static_cast<int32_t>(v[4]),
          static_cast<int32_t>(v[5]),
          v[6] != 0,
          v[7] != 0};
}

// Spreads each output gradient over its window, divided by the window's divisor. The kernel
// writes every element of the input gradient.
void AvgPool2dBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                       std::span<Tensor> grads) {
  grads[0] = internal::NewFloat(r.InputShape(0), ctx);
  ctx.kernels.AvgPool2dBackward(g, RecordedAvgParams(r), grads[0]);
}

Tensor AvgPoolOp(const char* op, OpKind kind, const Tensor& x, const AvgPool2dParams& p,
                 const OpContext& ctx) {
  CheckWindow(op, "height", p.kernel_h, p.stride_h, p.pad_h, 1);
  CheckWindow(op, "width", p.kernel_w, p.stride_w, p.pad_w, 1);
  const Shape out_shape = OutputShape(
      op, x, PoolOutputExtent(x.shape()[2], p.kernel_h, p.stride_h, p.pad_h, 1, p.ceil_mode),
      PoolOutputExtent(x.shape()[3], p.kernel_w, p.stride_w, p.pad_w, 1, p.ceil_mode));
  Tensor out = internal::NewFloat(out_shape, ctx);
  ctx.kernels.AvgPool2d(x, p, out);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(kind, &AvgPool2dBackward, {&x});
  record->SetInts({p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w,
                   p.ceil_mode ? 1 : 0, p.count_include_pad ? 1 : 0});
  return out.WithAutogradNode(std::move(record));
}

}  // namespace

Tensor MaxPool2d(const Tensor& x, const MaxPool2dParams& p, const OpContext& ctx) {
  return MaxPoolOp("MaxPool2d", OpKind::kMaxPool2d, x, p, false, ctx);
}

Tensor ReluMaxPool2d(const Tensor& x, const MaxPool2dParams& p, const OpContext& ctx) {
  return MaxPoolOp("ReluMaxPool2d", OpKind::kReluMaxPool2d, x, p, true, ctx);
}

Tensor AvgPool2d(const Tensor& x, const AvgPool2dParams& p, const OpContext& ctx) {
  internal::CheckFloat("AvgPool2d", "x", x);
  CheckRank("AvgPool2d", x);
  return AvgPoolOp("AvgPool2d", OpKind::kAvgPool2d, x, p, ctx);
}

Tensor GlobalAvgPool2d(const Tensor& x, const OpContext& ctx) {
  internal::CheckFloat("GlobalAvgPool2d", "x", x);
  CheckRank("GlobalAvgPool2d", x);
  const auto extent = [&](int d) {
    if (x.shape()[d] < 1 || x.shape()[d] > INT32_MAX) {
      throw TensorShapeException("GlobalAvgPool2d: input " + x.shape().ToString() +
                                 " needs a height and width from 1 to 2^31 - 1");
    }
    return static_cast<int32_t>(x.shape()[d]);
  };
  AvgPool2dParams p;
  p.kernel_h = extent(2);
  p.kernel_w = extent(3);
  return AvgPoolOp("GlobalAvgPool2d", OpKind::kGlobalAvgPool2d, x, p, ctx);
}

}  // namespace onemodel::ops
