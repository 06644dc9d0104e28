// FastKernels: SIMD elementwise and pooling kernels for one target, BLAS MatMul, work split
// over a thread pool. Add..Relu and MaxPool2d match ReferenceKernels bit for bit; Exp, Log,
// Tanh, Sigmoid, Gelu and Pow stay within the ULP bounds in docs/kernels.md; MatMul within a
// bound that grows with K.
//
//   FastKernels k(BestTarget());          // "fast-avx3" on an AVX-512 machine
//   k.Unary(UnaryOp::kExp, x, y);
#pragma once

#include <string>

#include "core/kernels/internal/simd_tables.h"
#include "core/kernels/kernels.h"
#include "core/kernels/thread_pool.h"

namespace onemodel {

class FastKernels final : public TensorKernels {
 public:
  // Elementwise work below this many elements per task stays on the calling thread.
  static constexpr int64_t kElementwiseGrain = 1 << 15;

  // Kernels for `target` (must be compiled in; the CPU must support it to call them).
  explicit FastKernels(SimdTarget target, ThreadPool& pool = ThreadPool::Shared());

  std::string_view name() const override { return name_; }
  SimdTarget target() const { return target_; }
  void Binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) const override;
  void Unary(UnaryOp op, const Tensor& x, Tensor& out) const override;
  void MatMul(const Tensor& a, const Tensor& b, Tensor& out) const override;
  void MaxPool2d(const Tensor& x, const MaxPool2dParams& params, Tensor& out,
                 Tensor* indices) const override;
  void MaxPool2dBackward(const Tensor& grad_out, const Tensor& indices,
                         Tensor& grad_x) const override;
  void AvgPool2d(const Tensor& x, const AvgPool2dParams& params, Tensor& out) const override;
  void AvgPool2dBackward(const Tensor& grad_out, const AvgPool2dParams& params,
                         Tensor& grad_x) const override;

 private:
  SimdTarget target_;
  ThreadPool& pool_;
  const internal::ElementwiseSimd& simd_;
  std::string name_;
};

}  // namespace onemodel
