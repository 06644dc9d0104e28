#include "core/kernels/fast_kernels.h"

#include "core/kernels/elementwise_loop.h"
#include "core/kernels/internal/avgpool.h"
#include "core/kernels/internal/matmul.h"
#include "core/kernels/internal/maxpool.h"

namespace onemodel {
using internal::Base;
using internal::BaseForWrite;

FastKernels::FastKernels(SimdTarget target, ThreadPool& pool)
    : target_(target),
      pool_(pool),
      simd_(internal::ElementwiseSimdFor(target)),
      name_("fast-" + std::string(SimdTargetName(target))) {}

void FastKernels::Binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) const {
  const internal::BinaryRowFn row = simd_.binary[static_cast<int>(op)];
  // Pow runs a scalar libm call per element: worth splitting much earlier.
  const int64_t grain = op == BinaryOp::kPow ? kElementwiseGrain / 16 : kElementwiseGrain;
  internal::ForEachRow<3>(
      pool_, grain, out.shape(), {BaseForWrite(out), Base(a), Base(b)},
      {&out.strides(), &a.strides(), &b.strides()},
      [row](int64_t n, const std::array<float*, 3>& p, const std::array<int64_t, 3>& s) {
        row(n, p[0], s[0], p[1], s[1], p[2], s[2]);
      });
}

void FastKernels::Unary(UnaryOp op, const Tensor& x, Tensor& out) const {
  const internal::UnaryRowFn row = simd_.unary[static_cast<int>(op)];
  internal::ForEachRow<2>(
      pool_, kElementwiseGrain, out.shape(), {BaseForWrite(out), Base(x)},
      {&out.strides(), &x.strides()},
      [row](int64_t n, const std::array<float*, 2>& p, const std::array<int64_t, 2>& s) {
        row(n, p[0], s[0], p[1], s[1]);
      });
}

void FastKernels::MatMul(const Tensor& a, const Tensor& b, Tensor& out) const {
  internal::MatMulBlas(a, b, out);
}

void FastKernels::MaxPool2d(const Tensor& x, const MaxPool2dParams& params, Tensor& out,
                            Tensor* indices) const {
  internal::MaxPool2dFast(target_, pool_, x, params, out, indices);
}

void FastKernels::MaxPool2dBackward(const Tensor& grad_out, const Tensor& indices,
                                    Tensor& grad_x) const {
  internal::MaxPool2dBackwardFast(pool_, grad_out, indices, grad_x);
}

void FastKernels::AvgPool2d(const Tensor& x, const AvgPool2dParams& params, Tensor& out) const {
  internal::AvgPool2dFast(target_, pool_, x, params, out);
}

void FastKernels::AvgPool2dBackward(const Tensor& grad_out, const AvgPool2dParams& params,
                                    Tensor& grad_x) const {
  internal::AvgPool2dBackwardFast(pool_, grad_out, params, grad_x);
}

}  // namespace onemodel
