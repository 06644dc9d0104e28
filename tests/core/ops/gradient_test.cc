// Every differentiable operation's gradient against central finite differences, on random
// small inputs including broadcasting, non-contiguous and negative-stride inputs.
#include <gtest/gtest.h>

#include "core/ops/conv.h"
#include "core/ops/activation.h"
#include "core/ops/compare.h"
#include "core/ops/conversion.h"
#include "core/ops/elementwise.h"
#include "core/ops/linear.h"
#include "core/ops/pooling.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/grad_check.h"

namespace onemodel {
namespace {

using ops_test::ExpectGradientsMatch;
using ops_test::Random;

class GradientTest : public ExactOpTest {
 protected:
  std::mt19937 rng_{11};
};

TEST_F(GradientTest, BinaryOpsWithBroadcasting) {
  for (BinaryOp op : kAllBinaryOps) {
    const bool positive = op == BinaryOp::kPow || op == BinaryOp::kDiv;
    Tensor a = Random(Shape{2, 3, 4}, rng_, pool_, positive ? 0.5f : -2.0f, 2.0f);
    Tensor b = Random(Shape{3, 1}, rng_, pool_, positive ? 0.5f : -2.0f, 2.0f);
    ExpectGradientsMatch(
        std::string(BinaryOpName(op)).c_str(),
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Binary(op, in[0], in[1], c);
        },
        {a, b}, ctx_, rng_);
  }
}

TEST_F(GradientTest, BinaryOpsOnNonContiguousAndReversedInputs) {
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMul, BinaryOp::kDiv, BinaryOp::kMax}) {
    Tensor base = Random(Shape{4, 5}, rng_, pool_, 0.5f, 2.0f);
    const Tensor transposed = base.Transpose(0, 1);  // [5, 4], strides [1, 5]
    const Tensor reversed = Random(Shape{4}, rng_, pool_, 0.5f, 2.0f).Slice(0, -1, -5, -1);
    ExpectGradientsMatch(
        std::string(BinaryOpName(op)).c_str(),
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Binary(op, in[0], in[1], c);
        },
        {transposed, reversed}, ctx_, rng_);
  }
}

TEST_F(GradientTest, UnaryOps) {
  for (UnaryOp op : kAllUnaryOps) {
    const bool positive = op == UnaryOp::kLog || op == UnaryOp::kSqrt;
    Tensor x = Random(Shape{3, 4}, rng_, pool_, positive ? 0.5f : -2.0f, 2.0f);
    if (op == UnaryOp::kAbs || op == UnaryOp::kRelu) {
      for (float& v : x.MutableData<float>()) v += v < 0 ? -0.2f : 0.2f;  // away from the kink
    }
    ExpectGradientsMatch(
        std::string(UnaryOpName(op)).c_str(),
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Unary(op, in[0], c);
        },
        {x.Transpose(0, 1)}, ctx_, rng_);
  }
}

TEST_F(GradientTest, WhereWithBroadcastingAndAStridedCondition) {
  const Tensor picker = Random(Shape{4, 3}, rng_, pool_);
  const Tensor cond = ops::Less(picker.Transpose(0, 1), Random(Shape{4}, rng_, pool_), ctx_);
  ExpectGradientsMatch(
      "Where",
      [&](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Where(cond, in[0], in[1], c);
      },
      {Random(Shape{2, 3, 4}, rng_, pool_), Random(Shape{3, 1}, rng_, pool_).Slice(0, -1, -4, -1)},
      ctx_, rng_);
}

TEST_F(GradientTest, ClipLeakyReluAndGeluErfForm) {
  Tensor x = Random(Shape{4, 5}, rng_, pool_, -2.0f, 2.0f);
  for (float& v : x.MutableData<float>()) {
    v += v < 0 ? -0.1f : 0.1f;  // away from LeakyRelu's kink at 0
    if (std::fabs(std::fabs(v) - 1.0f) < 0.05f) v *= 1.1f;  // and from Clip's at -1 and 1
  }
  const std::vector<std::pair<const char*, ops_test::Fn>> fns = {
      {"Clip", [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::Clip(in[0], -1.0f, 1.0f, c); }},
      {"LeakyRelu", [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::LeakyRelu(in[0], 0.2f, c); }},
      {"Gelu none", [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::Gelu(in[0], ops::GeluApproximation::kNone, c); }},
  };
  for (const auto& [name, f] : fns) ExpectGradientsMatch(name, f, {x.Transpose(0, 1)}, ctx_, rng_);
}

TEST_F(GradientTest, MatMulWithBatchBroadcastAndVectors) {
  const std::vector<std::pair<Shape, Shape>> cases = {{Shape{3, 4}, Shape{4, 2}},
                                                      {Shape{2, 3, 4}, Shape{4, 5}},
                                                      {Shape{2, 1, 3, 4}, Shape{3, 4, 2}},
                                                      {Shape{4}, Shape{4, 3}},
                                                      {Shape{3, 4}, Shape{4}},
                                                      {Shape{4}, Shape{4}},
                                                      {Shape{2, 3, 4}, Shape{4}}};
  for (const auto& [sa, sb] : cases) {
    ExpectGradientsMatch(("MatMul " + sa.ToString() + " x " + sb.ToString()).c_str(),
                         [](const std::vector<Tensor>& in, const OpContext& c) {
                           return ops::MatMul(in[0], in[1], c);
                         },
                         {Random(sa, rng_, pool_), Random(sb, rng_, pool_)}, ctx_, rng_);
  }
}

TEST_F(GradientTest, MaxPool2dBothLayouts) {
  Tensor x = Tensor::Empty(Shape{1, 2, 5, 6}, DType::kFloat, pool_);
  std::vector<float> v(60);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 37) % 60) * 0.1f;  // distinct
  std::copy(v.begin(), v.end(), x.MutableData<float>().begin());
  const MaxPool2dParams p{3, 3, 2, 2, 1, 1};
  auto pool = [p](const std::vector<Tensor>& in, const OpContext& c) {
    return ops::MaxPool2d(in[0], p, c);
  };
  ExpectGradientsMatch("MaxPool2d NCHW", pool, {x}, ctx_, rng_, 1e-3);
  ExpectGradientsMatch("MaxPool2d NHWC", pool, {x.ToLayout(Layout::kNhwc, pool_)}, ctx_, rng_,
                       1e-3);
  const MaxPool2dParams overlap{3, 2, 1, 1, 0, 1};  // overlapping windows accumulate
  ExpectGradientsMatch(
      "MaxPool2d overlapping",
      [overlap](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::MaxPool2d(in[0], overlap, c);
      },
      {x}, ctx_, rng_, 1e-3);
}

TEST_F(GradientTest, Conv2dInputWeightsAndBias) {
  const Tensor x = Random(Shape{2, 4, 6, 5}, rng_, pool_);
  const Tensor w = Random(Shape{6, 2, 3, 2}, rng_, pool_);
  const Tensor b = Random(Shape{6}, rng_, pool_);
  const Conv2dParams p{
      .stride_h = 2, .pad_top = 1, .pad_left = 2, .pad_right = 1, .dilation_w = 2, .groups = 2};
  auto conv = [p](const std::vector<Tensor>& in, const OpContext& c) {
    return ops::Conv2d(in[0], in[1], &in[2], p, c);
  };
  ExpectGradientsMatch("Conv2d NCHW", conv, {x, w, b}, ctx_, rng_);
  ExpectGradientsMatch("Conv2d NHWC", conv, {x.ToLayout(Layout::kNhwc, pool_), w, b}, ctx_, rng_);
  ExpectGradientsMatch("Conv2d reversed", conv,
                       {x.Slice(2, -1, -7, -1), Random(Shape{6, 2, 2, 3}, rng_, pool_).Transpose(2, 3), b}, ctx_, rng_);
}

TEST_F(GradientTest, ConvTranspose2dInputWeightsAndBias) {
  const Tensor x = Random(Shape{2, 4, 4, 3}, rng_, pool_);
  const Tensor w = Random(Shape{4, 3, 3, 2}, rng_, pool_);
  const Tensor b = Random(Shape{6}, rng_, pool_);
  const ConvTranspose2dParams p{.conv = {.stride_h = 2,
                                         .pad_top = 1,
                                         .pad_left = 2,
                                         .pad_right = 1,
                                         .dilation_w = 2,
                                         .groups = 2},
                                .output_padding_h = 1,
                                .output_padding_w = 1};
  auto conv = [p](const std::vector<Tensor>& in, const OpContext& c) {
    return ops::ConvTranspose2d(in[0], in[1], &in[2], p, c);
  };
  ExpectGradientsMatch("ConvTranspose2d NCHW", conv, {x, w, b}, ctx_, rng_);
  ExpectGradientsMatch("ConvTranspose2d NHWC", conv, {x.ToLayout(Layout::kNhwc, pool_), w, b}, ctx_,
                       rng_);
  ExpectGradientsMatch(
      "ConvTranspose2d reversed", conv,
      {x.Slice(2, -1, -5, -1), Random(Shape{4, 3, 2, 3}, rng_, pool_).Transpose(2, 3), b}, ctx_,
      rng_);
}

TEST_F(GradientTest, DilatedCeilModeAndReluMaxPool2d) {
  Tensor x = Tensor::Empty(Shape{1, 2, 5, 6}, DType::kFloat, pool_);
  std::vector<float> v(60);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 37) % 60) * 0.1f - 3.05f;  // distinct, half negative
  std::copy(v.begin(), v.end(), x.MutableData<float>().begin());
  MaxPool2dParams p{2, 3, 2, 1, 1, 1};
  p.dilation_h = 2;
  p.dilation_w = 2;
  p.ceil_mode = true;
  ExpectGradientsMatch(
      "MaxPool2d dilated ceil_mode",
      [p](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::MaxPool2d(in[0], p, c);
      },
      {x}, ctx_, rng_, 1e-3);
  const MaxPool2dParams small{2, 2, 2, 2, 0, 0};  // some windows have no positive element
  for (const Tensor& in : {x, x.ToLayout(Layout::kNhwc, pool_)}) {
    ExpectGradientsMatch(
        "ReluMaxPool2d",
        [small](const std::vector<Tensor>& t, const OpContext& c) {
          return ops::ReluMaxPool2d(t[0], small, c);
        },
        {in}, ctx_, rng_, 1e-3);
  }
}

TEST_F(GradientTest, AvgPool2dAndGlobalAvgPool2d) {
  const Tensor x = Random(Shape{2, 3, 5, 6}, rng_, pool_);
  const AvgPool2dParams params[] = {{3, 3, 2, 2, 1, 1, false, false},
                                    {3, 2, 2, 1, 1, 1, true, true},
                                    {2, 3, 3, 2, 1, 0, true, false}};
  for (const AvgPool2dParams& p : params) {
    for (const Tensor& in : {x, x.ToLayout(Layout::kNhwc, pool_)}) {
      ExpectGradientsMatch(
          "AvgPool2d",
          [p](const std::vector<Tensor>& t, const OpContext& c) {
            return ops::AvgPool2d(t[0], p, c);
          },
          {in}, ctx_, rng_, 1e-3);
    }
  }
  ExpectGradientsMatch(
      "GlobalAvgPool2d",
      [](const std::vector<Tensor>& t, const OpContext& c) {
        return ops::GlobalAvgPool2d(t[0], c);
      },
      {x.Transpose(2, 3)}, ctx_, rng_, 1e-3);
}

TEST_F(GradientTest, Reductions) {
  const Tensor x = Random(Shape{2, 3, 4}, rng_, pool_);
  const std::vector<std::vector<int>> axes = {{}, {0}, {1, 2}, {-1}, {0, 2}};
  for (const auto& ax : axes) {
    for (bool keep : {false, true}) {
      ExpectGradientsMatch(
          "Sum",
          [&](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::Sum(in[0], ax, keep, c);
          },
          {x}, ctx_, rng_);
      ExpectGradientsMatch(
          "Mean",
          [&](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::Mean(in[0], ax, keep, c);
          },
          {x.Transpose(0, 2).Transpose(0, 2)}, ctx_, rng_);
    }
  }
}

TEST_F(GradientTest, SoftmaxAndLogSoftmaxWithScale) {
  for (int axis : {0, 1, -1}) {
    for (float scale : {1.0f, 0.5f}) {
      const Tensor x = Random(Shape{3, 4}, rng_, pool_);
      ExpectGradientsMatch(
          "Softmax",
          [=](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::Softmax(in[0], axis, c, scale);
          },
          {x}, ctx_, rng_);
      ExpectGradientsMatch(
          "LogSoftmax",
          [=](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::LogSoftmax(in[0], axis, c, scale);
          },
          {x.Transpose(0, 1)}, ctx_, rng_);
    }
  }
}

TEST_F(GradientTest, CastThroughDoubleAndBack) {
  ExpectGradientsMatch(
      "Cast",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const Tensor d = ops::Cast(in[0], DType::kDouble, c);
        return ops::Mul(ops::Cast(d, DType::kFloat, c), in[0], c);
      },
      {Random(Shape{5}, rng_, pool_)}, ctx_, rng_);
}

TEST_F(GradientTest, ViewsPutGradientsBackThroughTheView) {
  const Tensor x = Random(Shape{2, 3, 4}, rng_, pool_);
  const std::vector<std::pair<const char*, ops_test::Fn>> views = {
      {"Reshape",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         const int64_t shape[] = {4, -1};
         return ops::Mul(ops::Reshape(in[0], shape, c), ops::Reshape(in[0], shape, c), c);
       }},
      {"Reshape of a transpose (copy)",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         const int64_t shape[] = {24};
         return ops::Exp(ops::Reshape(ops::Transpose(in[0], 0, 2, c), shape, c), c);
       }},
      {"Permute",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         const int perm[] = {2, 0, 1};
         return ops::Sigmoid(ops::Permute(in[0], perm, c), c);
       }},
      {"Slice",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::Tanh(ops::Slice(in[0], 2, -1, -5, -2, c), c);
       }},
      {"Expand",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         const Tensor row = ops::Slice(in[0], 1, 0, 1, 1, c);  // [2, 1, 4]
         return ops::Mul(ops::Expand(row, Shape{3, 2, 5, 4}, c),
                         ops::Expand(row, Shape{2, 5, 4}, c), c);
       }},
      {"Squeeze/Unsqueeze",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::Exp(ops::Squeeze(ops::Unsqueeze(in[0], 1, c), {}, c), c);
       }},
      {"Contiguous",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::Exp(ops::Contiguous(ops::Transpose(in[0], 0, 1, c), c), c);
       }},
      {"Copy",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         return ops::Exp(ops::Copy(ops::Transpose(in[0], 0, 1, c), c), c);
       }},
      {"ToLayout",
       [](const std::vector<Tensor>& in, const OpContext& c) {
         const int64_t shape[] = {1, 2, 3, 4};
         const Tensor img = ops::Reshape(in[0], shape, c);
         return ops::Exp(ops::ToLayout(ops::ToLayout(img, Layout::kNhwc, c), Layout::kNchw, c), c);
       }},
  };
  for (const auto& [name, f] : views) ExpectGradientsMatch(name, f, {x}, ctx_, rng_);
}

TEST_F(GradientTest, ATensorUsedTwiceAccumulatesItsGradients) {
  ExpectGradientsMatch(
      "x*x + exp(x)",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Add(ops::Mul(in[0], in[0], c), ops::Exp(in[0], c), c);
      },
      {Random(Shape{6}, rng_, pool_)}, ctx_, rng_);
}

}  // namespace
}  // namespace onemodel
