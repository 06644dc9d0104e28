// ReferenceKernels: the meaning of every kernel (spec 9). Scalar loops over any strides,
// double accumulation in MatMul, no threads. Fast kernels are tested against these.
#pragma once

#include "core/kernels/kernels.h"

namespace onemodel {

class ReferenceKernels final : public TensorKernels {
 public:
  std::string_view name() const override { return "reference"; }
  void Binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) const override;
  void Unary(UnaryOp op, const Tensor& x, Tensor& out) const override;
  void MatMul(const Tensor& a, const Tensor& b, Tensor& out) const override;
  void MaxPool2d(const Tensor& x, const MaxPool2dParams& params, Tensor& out,
                 Tensor* indices) const override;
  void MaxPool2dBackward(const Tensor& grad_out, const Tensor& indices,
                         Tensor& grad_x) const override;
  int64_t Conv2dScratchFloats(const Shape& x, const Shape& w,
                              const Conv2dParams& params) const override;
  void Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& params,
              Tensor& out, std::span<float> scratch) const override;
  void Conv2dBackwardInput(const Tensor& grad_out, const Tensor& w, const Conv2dParams& params,
                           Tensor& grad_x, std::span<float> scratch) const override;
  void Conv2dBackwardWeight(const Tensor& grad_out, const Tensor& x, const Conv2dParams& params,
                            Tensor& grad_w, std::span<float> scratch) const override;
  void AvgPool2d(const Tensor& x, const AvgPool2dParams& params, Tensor& out) const override;
  void AvgPool2dBackward(const Tensor& grad_out, const AvgPool2dParams& params,
                         Tensor& grad_x) const override;
  void GatherRows(const Tensor& table, const Tensor& indices, Tensor& out) const override;
  void Normalize(const NormForwardArgs& args) const override;
  void NormalizeBackward(const NormBackwardArgs& args) const override;
};

}  // namespace onemodel
