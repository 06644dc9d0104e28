#include "core/kernels/reference_kernels.h"

#include "core/kernels/elementwise_loop.h"
#include "core/kernels/internal/conv.h"
#include "core/kernels/internal/gather_rows.h"
#include "core/kernels/internal/avgpool.h"
#include "core/kernels/internal/matmul.h"
#include "core/kernels/internal/maxpool.h"
#include "core/kernels/internal/normalize.h"
#include "core/kernels/scalar_ops.h"

namespace onemodel {
using internal::Base;
using internal::BaseForWrite;

void ReferenceKernels::Binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) const {
  if (out.shape().IsEmpty()) return;
  internal::RunRows<3>(
      out.shape(), {BaseForWrite(out), Base(a), Base(b)},
      {&out.strides(), &a.strides(), &b.strides()},
      [op](int64_t n, const std::array<float*, 3>& p, const std::array<int64_t, 3>& s) {
        for (int64_t i = 0; i < n; ++i) {
          p[0][i * s[0]] = scalar::Binary(op, p[1][i * s[1]], p[2][i * s[2]]);
        }
      });
}

void ReferenceKernels::Unary(UnaryOp op, const Tensor& x, Tensor& out) const {
  if (out.shape().IsEmpty()) return;
  internal::RunRows<2>(
      out.shape(), {BaseForWrite(out), Base(x)}, {&out.strides(), &x.strides()},
      [op](int64_t n, const std::array<float*, 2>& p, const std::array<int64_t, 2>& s) {
        for (int64_t i = 0; i < n; ++i) {
          p[0][i * s[0]] = scalar::Unary(op, p[1][i * s[1]]);
        }
      });
}

void ReferenceKernels::MatMul(const Tensor& a, const Tensor& b, Tensor& out) const {
  internal::MatMulReference(a, b, out);
}

void ReferenceKernels::MaxPool2d(const Tensor& x, const MaxPool2dParams& params, Tensor& out,
                                 Tensor* indices) const {
  internal::MaxPool2dReference(x, params, out, indices);
}

void ReferenceKernels::MaxPool2dBackward(const Tensor& grad_out, const Tensor& indices,
                                         Tensor& grad_x) const {
  internal::MaxPool2dBackwardReference(grad_out, indices, grad_x);
}

int64_t ReferenceKernels::Conv2dScratchFloats(const Shape&, const Shape&,
                                              const Conv2dParams&) const {
  return 0;
}

void ReferenceKernels::Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias,
                              const Conv2dParams& params, Tensor& out,
                              std::span<float> /*scratch*/) const {
  internal::Conv2dReference(x, w, bias, params, out);
}

void ReferenceKernels::Conv2dBackwardInput(const Tensor& grad_out, const Tensor& w,
                                           const Conv2dParams& params, Tensor& grad_x,
                                           std::span<float> /*scratch*/) const {
  internal::Conv2dBackwardInputReference(grad_out, w, params, grad_x);
}

void ReferenceKernels::Conv2dBackwardWeight(const Tensor& grad_out, const Tensor& x,
                                            const Conv2dParams& params, Tensor& grad_w,
                                            std::span<float> /*scratch*/) const {
  internal::Conv2dBackwardWeightReference(grad_out, x, params, grad_w);
}

void ReferenceKernels::AvgPool2d(const Tensor& x, const AvgPool2dParams& params,
                                 Tensor& out) const {
  internal::AvgPool2dReference(x, params, out);
}

void ReferenceKernels::AvgPool2dBackward(const Tensor& grad_out, const AvgPool2dParams& params,
                                         Tensor& grad_x) const {
  internal::AvgPool2dBackwardReference(grad_out, params, grad_x);
}

void ReferenceKernels::GatherRows(const Tensor& table, const Tensor& indices, Tensor& out) const {
  const internal::GatherRowsCall call = internal::GatherRowsOf(table, indices, out);
  internal::GatherRowRange(call, 0, call.rows);
}

void ReferenceKernels::Normalize(const NormForwardArgs& args) const {
  internal::NormalizeGroups(args, 0, args.layout.groups, /*stream=*/false);
}

void ReferenceKernels::NormalizeBackward(const NormBackwardArgs& args) const {
  internal::NormalizeBackwardGroups(args, 0, args.layout.groups);
}

}  // namespace onemodel
