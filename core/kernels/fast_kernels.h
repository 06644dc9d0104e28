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
#include "core/kernels/streaming_stores.h"
#include "core/kernels/thread_pool.h"

namespace onemodel {

class FastKernels final : public TensorKernels {
 public:
  // Elementwise work below this many elements per task stays on the calling thread. Waking a
  // pool thread costs more than it saves below it: Relu of 2^17 floats took 9 µs on one thread
  // and 17 µs split in two, of 2^18 26 µs against 36 µs (2^15 before; docs/kernels.md).
  static constexpr int64_t kElementwiseGrain = 1 << 17;

  // Kernels for `target` (must be compiled in; the CPU must support it to call them).
  // Elementwise and AvgPool2d outputs of at least `streaming_min_bytes` are written with
  // streaming stores (streaming_stores.h; tests lower it to reach that path with small
  // tensors).
  explicit FastKernels(SimdTarget target, ThreadPool& pool = ThreadPool::Shared(),
                       int64_t streaming_min_bytes = DefaultStreamingMinBytes());

  std::string_view name() const override { return name_; }
  SimdTarget target() const { return target_; }
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

 private:
  SimdTarget target_;
  ThreadPool& pool_;
  const internal::ElementwiseSimd& simd_;
  int64_t streaming_min_bytes_;
  std::string name_;

  // Whether `out` is large enough for streaming stores.
  bool Streams(const Tensor& out) const;
};

}  // namespace onemodel
