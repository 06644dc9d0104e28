#include "core/kernels/fast_kernels.h"

#include <algorithm>

#include "core/kernels/elementwise_loop.h"
#include "core/kernels/internal/avgpool.h"
#include "core/kernels/internal/conv.h"
#include "core/kernels/internal/gather_rows.h"
#include "core/kernels/internal/layer_norm_rows.h"
#include "core/kernels/internal/matmul.h"
#include "core/kernels/internal/maxpool.h"
#include "core/kernels/internal/normalize.h"

namespace onemodel {
using internal::Base;
using internal::BaseForWrite;

FastKernels::FastKernels(SimdTarget target, ThreadPool& pool, int64_t streaming_min_bytes)
    : target_(target),
      pool_(pool),
      simd_(internal::ElementwiseSimdFor(target)),
      streaming_min_bytes_(streaming_min_bytes),
      name_("fast-" + std::string(SimdTargetName(target))) {}

bool FastKernels::Streams(const Tensor& out) const {
  return out.shape().ElementCount() * static_cast<int64_t>(sizeof(float)) >= streaming_min_bytes_;
}

void FastKernels::Binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) const {
  const bool streaming = Streams(out);
  const int i = static_cast<int>(op);
  const internal::BinaryRowFn row = streaming ? simd_.binary_streaming[i] : simd_.binary[i];
  // Pow runs a scalar libm call per element: worth splitting much earlier.
  const int64_t grain = op == BinaryOp::kPow ? kElementwiseGrain / 16 : kElementwiseGrain;
  internal::ForEachRow<3>(
      pool_, grain, out.shape(), {BaseForWrite(out), Base(a), Base(b)},
      {&out.strides(), &a.strides(), &b.strides()},
      [row](int64_t n, const std::array<float*, 3>& p, const std::array<int64_t, 3>& s) {
        row(n, p[0], s[0], p[1], s[1], p[2], s[2]);
      },
      streaming);
}

void FastKernels::Unary(UnaryOp op, const Tensor& x, Tensor& out) const {
  const bool streaming = Streams(out);
  const int i = static_cast<int>(op);
  const internal::UnaryRowFn row = streaming ? simd_.unary_streaming[i] : simd_.unary[i];
  internal::ForEachRow<2>(
      pool_, kElementwiseGrain, out.shape(), {BaseForWrite(out), Base(x)},
      {&out.strides(), &x.strides()},
      [row](int64_t n, const std::array<float*, 2>& p, const std::array<int64_t, 2>& s) {
        row(n, p[0], s[0], p[1], s[1]);
      },
      streaming);
}

void FastKernels::MatMul(const Tensor& a, const Tensor& b, Tensor& out) const {
  internal::MatMulFast(target_, pool_, a, b, out);
}

void FastKernels::MaxPool2d(const Tensor& x, const MaxPool2dParams& params, Tensor& out,
                            Tensor* indices) const {
  internal::MaxPool2dFast(target_, pool_, x, params, out, indices);
}

void FastKernels::MaxPool2dBackward(const Tensor& grad_out, const Tensor& indices,
                                    Tensor& grad_x) const {
  internal::MaxPool2dBackwardFast(target_, pool_, grad_out, indices, grad_x);
}

int64_t FastKernels::Conv2dScratchFloats(const Shape& x, const Shape& w,
                                         const Conv2dParams& params) const {
  return internal::Conv2dFastScratchFloats(x, w, params, pool_.threads());
}

void FastKernels::Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias,
                         const Conv2dParams& params, Tensor& out, std::span<float> scratch) const {
  internal::Conv2dFast(x, w, bias, params, out, scratch, pool_, target_);
}

void FastKernels::Conv2dBackwardInput(const Tensor& grad_out, const Tensor& w,
                                      const Conv2dParams& params, Tensor& grad_x,
                                      std::span<float> scratch) const {
  internal::Conv2dBackwardInputFast(grad_out, w, params, grad_x, scratch, pool_, target_);
}

void FastKernels::Conv2dBackwardWeight(const Tensor& grad_out, const Tensor& x,
                                       const Conv2dParams& params, Tensor& grad_w,
                                       std::span<float> scratch) const {
  internal::Conv2dBackwardWeightFast(grad_out, x, params, grad_w, scratch, pool_, target_);
}

void FastKernels::AvgPool2d(const Tensor& x, const AvgPool2dParams& params, Tensor& out) const {
  internal::AvgPool2dFast(target_, pool_, x, params, out, Streams(out));
}

void FastKernels::AvgPool2dBackward(const Tensor& grad_out, const AvgPool2dParams& params,
                                    Tensor& grad_x) const {
  internal::AvgPool2dBackwardFast(pool_, grad_out, params, grad_x);
}

// Rows in tasks of about 256 KiB each (at least one row), over the pool.
void FastKernels::GatherRows(const Tensor& table, const Tensor& indices, Tensor& out) const {
  const internal::GatherRowsCall call = internal::GatherRowsOf(table, indices, out);
  if (call.rows == 0) return;
  const int64_t bytes = call.rows * std::max<int64_t>(call.width * 4, 1);
  const int64_t tasks = std::clamp<int64_t>(bytes / (256 << 10), 1, call.rows);
  pool_.ParallelFor(tasks, [&](int64_t t) {
    internal::GatherRowRange(call, call.rows * t / tasks, call.rows * (t + 1) / tasks);
  });
}

void FastKernels::Normalize(const NormForwardArgs& args) const {
  const NormGroups& l = args.layout;
  const bool stream = l.groups * l.blocks * l.block * static_cast<int64_t>(sizeof(float)) >=
                      streaming_min_bytes_;
  // LayerNorm's rows in float (layer_norm_rows.h); other layouts as the reference computes them.
  const bool float_rows = internal::FloatRowsApply(args);
  internal::SplitGroups(pool_, l, [&](int64_t begin, int64_t end) {
    float_rows ? internal::NormalizeRowsFloat(args, begin, end, stream)
               : internal::NormalizeGroups(args, begin, end, stream);
  });
}

void FastKernels::NormalizeBackward(const NormBackwardArgs& args) const {
  internal::SplitGroups(pool_, args.layout, [&](int64_t begin, int64_t end) {
    internal::NormalizeBackwardGroups(args, begin, end);
  });
}

}  // namespace onemodel
