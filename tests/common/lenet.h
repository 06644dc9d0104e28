// The LeNet-style CNN of issue 16, run in this process through onemodel's ops and autograd
// engine: trained against PyTorch by tests/core/ops/cnn_training_test.cc and timed by
// scripts/bench's cnn_step_vs_torch (bench/compare/cnn_case.cc). Its PyTorch twin is
// lenet_loss in tests/core/ops/torch_reference.py.
//
//   x (N, 1, S, S) -> Conv2d 1->6 3x3 pad 1 -> ReluMaxPool2d 2x2 stride 2
//     -> Conv2d 6->12 3x3 pad 1 -> Relu -> AvgPool2d 2x2 stride 2 -> (N, 12 * (S/4)^2)
//     -> MatMul (.., 10) + bias -> LogSoftmax -> NllLoss (mean over the batch)
//
//   LeNet net(28, rng, pool);
//   net.Step(x, labels, 0.1f, ctx);     // forward, backward, p -= 0.1 * dloss/dp
#pragma once

#include <array>
#include <cstdint>
#include <random>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::test_models {

class LeNet {
 public:
  static constexpr int64_t kConv1 = 6, kConv2 = 12, kClasses = 10;

  // Parameters for S x S images (S a multiple of 4, at least 4), in `a`: each uniform within
  // +-1/sqrt(fan_in) (PyTorch's default ranges), drawn from `rng` in the order of params().
  LeNet(int64_t image_size, std::mt19937& rng, Allocator& a);

  // conv1 weight (6, 1, 3, 3) and bias, conv2 weight (12, 6, 3, 3) and bias, fc weight
  // (12 * (S/4)^2, 10) and bias: the tensors Step updates in place.
  const std::array<Tensor, 6>& params() const { return params_; }

  // The mean negative log-likelihood of `labels` (INT64 (N)) for images `x` (N, 1, S, S).
  Tensor Loss(const Tensor& x, const Tensor& labels, const OpContext& ctx) const;

  // One SGD step: Loss, its gradients, then p -= lr * g in place for every parameter (the
  // product rounded to float first, as PyTorch's p.sub_(g * lr)). Returns the loss (in ctx).
  Tensor Step(const Tensor& x, const Tensor& labels, const Tensor& lr, const OpContext& ctx);

 private:
  std::array<Tensor, 6> params_;
};

}  // namespace onemodel::test_models
