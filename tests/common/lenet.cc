#include "tests/common/lenet.h"

#include <cmath>
#include <vector>

#include "core/autograd/engine.h"
#include "core/ops/conv.h"
#include "core/ops/elementwise.h"
#include "core/ops/linear.h"
#include "core/ops/loss.h"
#include "core/ops/pooling.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
#include "core/tensor/grad_mode.h"

namespace onemodel::test_models {
namespace {

constexpr Conv2dParams kSame3x3{.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1};
constexpr MaxPool2dParams kMaxPool{.kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2};
constexpr AvgPool2dParams kAvgPool{.kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2};

Tensor Uniform(const Shape& shape, int64_t fan_in, std::mt19937& rng, Allocator& a) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::uniform_real_distribution<float> d(-bound, bound);
  Tensor t = Tensor::Empty(shape, DType::kFloat, a);
  for (float& v : t.MutableData<float>()) v = d(rng);
  return t.WithRequiresGrad();
}

}  // namespace

LeNet::LeNet(int64_t image_size, std::mt19937& rng, Allocator& a) {
  const int64_t features = kConv2 * (image_size / 4) * (image_size / 4);
  params_ = {Uniform(Shape{kConv1, 1, 3, 3}, 9, rng, a),
             Uniform(Shape{kConv1}, 9, rng, a),
             Uniform(Shape{kConv2, kConv1, 3, 3}, kConv1 * 9, rng, a),
             Uniform(Shape{kConv2}, kConv1 * 9, rng, a),
             Uniform(Shape{features, kClasses}, features, rng, a),
             Uniform(Shape{kClasses}, features, rng, a)};
}

Tensor LeNet::Loss(const Tensor& x, const Tensor& labels, const OpContext& ctx) const {
  const auto& p = params_;
  const Tensor h1 = ops::ReluMaxPool2d(ops::Conv2d(x, p[0], &p[1], kSame3x3, ctx), kMaxPool, ctx);
  const Tensor h2 =
      ops::AvgPool2d(ops::Relu(ops::Conv2d(h1, p[2], &p[3], kSame3x3, ctx), ctx), kAvgPool, ctx);
  const int64_t flat[] = {x.shape()[0], -1};
  const Tensor z = ops::Add(ops::MatMul(ops::Reshape(h2, flat, ctx), p[4], ctx), p[5], ctx);
  return ops::NllLoss(ops::LogSoftmax(z, 1, ctx), labels, nullptr, {}, ctx);
}

Tensor LeNet::Step(const Tensor& x, const Tensor& labels, const Tensor& lr, const OpContext& ctx) {
  const Tensor loss = Loss(x, labels, ctx);
  const std::vector<Tensor> grads = Backward(loss, nullptr, params_, ctx);
  NoGrad no_grad;
  for (size_t k = 0; k < params_.size(); ++k) {
    ctx.kernels.Binary(BinaryOp::kSub, params_[k], ops::Mul(grads[k], lr, ctx), params_[k]);
  }
  return loss;
}

}  // namespace onemodel::test_models
