// Forward values, gradients and input checks of the comparisons, Where, Clip, LeakyRelu, Erf
// and GELU's erf form: NaN, ties, broadcasting, strided and empty inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/ops/activation.h"
#include "core/ops/compare.h"
#include "core/ops/elementwise.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"

namespace onemodel {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

class TensorOpsTest : public ExactOpTest {
 protected:
  Tensor Bools(std::vector<uint8_t> v, const Shape& s) {
    Tensor t = Tensor::Empty(s, DType::kBool, pool_);
    auto bytes = t.MutableRawData();
    for (size_t i = 0; i < v.size(); ++i) bytes[i] = std::byte{v[i]};
    return t;
  }
};

TEST_F(TensorOpsTest, ComparisonsGiveBoolWithIeeeNaNAndTies) {
  const Tensor a = Vec({1, 2, kNaN, -0.0f, kInf, 3}, Shape{6});
  const Tensor b = Vec({1, 3, kNaN, 0.0f, kInf, 2}, Shape{6});
  const Tensor eq = ops::Equal(a, b, ctx_);
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_EQ(Values(eq), (std::vector<float>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(Values(ops::Less(a, b, ctx_)), (std::vector<float>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Values(ops::LessEqual(a, b, ctx_)), (std::vector<float>{1, 1, 0, 1, 1, 0}));
  EXPECT_EQ(Values(ops::Greater(a, b, ctx_)), (std::vector<float>{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(Values(ops::GreaterEqual(a, b, ctx_)), (std::vector<float>{1, 0, 0, 1, 1, 1}));
  EXPECT_EQ(ops::CompareOpName(ops::CompareOp::kLessEqual), "LessEqual");
}

TEST_F(TensorOpsTest, ComparisonsBroadcastTakeStridedAndEmptyInputsAndNeverRecord) {
  const Tensor m = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3}).WithRequiresGrad();
  const Tensor col = Vec({2, 5}, Shape{2, 1});
  const Tensor lt = ops::Less(m, col, ctx_);
  EXPECT_EQ(lt.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values(lt), (std::vector<float>{1, 0, 0, 1, 0, 0}));
  EXPECT_FALSE(lt.requires_grad());
  // m^T [3, 2] (strides [1, 3]) against a reversed row [2] (stride -1): {2, 1} after reversal.
  const Tensor rev = Vec({1, 2}, Shape{2}).Slice(0, -1, -3, -1);
  EXPECT_EQ(Values(ops::GreaterEqual(m.Transpose(0, 1), rev, ctx_)),
            (std::vector<float>{0, 1, 1, 1, 1, 1}));
  const Tensor empty = ops::Equal(Vec({}, Shape{0, 3}), Vec({1, 2, 3}, Shape{3}), ctx_);
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(empty.dtype(), DType::kBool);
  ExpectError<TensorShapeException>(
      [&] {
        ops::Less(m, Vec({1, 2}, Shape{2}), ctx_);
      },
      {"do not broadcast"});
  ExpectError<TensorTypeException>(
      [&] { ops::Greater(m, Tensor::Empty(Shape{3}, DType::kInt64, pool_), ctx_); },
      {"Greater", "input b", "Cast"});
}

TEST_F(TensorOpsTest, WherePicksByConditionWithBroadcastingOfAllThree) {
  const Tensor cond = Bools({1, 0, 2}, Shape{3});  // any nonzero byte is true
  const Tensor a = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor b = Vec({-1, -2}, Shape{2, 1});
  const Tensor y = ops::Where(cond, a, b, ctx_);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values(y), (std::vector<float>{1, -1, 3, 4, -2, 6}));
  const std::vector<float> with_nan = Values(ops::Where(cond, a, Vec({kNaN}, Shape{}), ctx_));
  EXPECT_EQ(with_nan[0], 1.0f);
  EXPECT_TRUE(std::isnan(with_nan[1]));
  // Strided condition: a column of a [3, 2] view, broadcast against a [2, 3] row-major a.
  const Tensor c2 = Bools({1, 0, 0, 1, 1, 0}, Shape{3, 2}).Transpose(0, 1);  // [[1,0,1],[0,1,0]]
  EXPECT_EQ(Values(ops::Where(c2, a, b, ctx_)), (std::vector<float>{1, -1, 3, -2, 5, -2}));
  EXPECT_EQ(ops::Where(Bools({}, Shape{0}), Vec({1}, Shape{1}), Vec({2}, Shape{1}), ctx_).shape(),
            (Shape{0}));
  ExpectError<TensorTypeException>([&] { ops::Where(a, a, b, ctx_); },
                                   {"Where", "condition", "BOOL", "Cast"});
  ExpectError<TensorTypeException>(
      [&] { ops::Where(cond, Tensor::Empty(Shape{3}, DType::kInt32, pool_), b, ctx_); },
      {"Where", "input a", "Cast"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::Where(Bools({1, 0}, Shape{2}), a, b, ctx_);
      },
      {"do not broadcast"});
}

TEST_F(TensorOpsTest, WhereRoutesTheGradientAndSumsBroadcastInputs) {
  const Tensor cond = Bools({1, 0, 1}, Shape{3});
  const Tensor a = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3}).WithRequiresGrad();
  const Tensor b = Vec({kNaN, 7}, Shape{2, 1}).WithRequiresGrad();  // NaN where not picked
  const Tensor y = ops::Where(cond, a, b, ctx_);
  EXPECT_EQ(GradFn(y)->op(), OpKind::kWhere);
  EXPECT_EQ(GradFn(y)->Saved(0).buffer(), cond.buffer()) << "saves the condition";
  const Tensor g = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const std::vector<Tensor> wrt = {a, b};
  const auto grads = Backward(y, &g, wrt, ctx_);
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{1, 0, 3, 4, 0, 6}));
  EXPECT_EQ(grads[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(Values(grads[1]), (std::vector<float>{2, 5}));
}

TEST_F(TensorOpsTest, ClipLimitsPropagatesNaNAndMaxWinsOverMin) {
  const Tensor x = Vec({-3, -1, 0, 1, 3, kNaN, -kInf, kInf}, Shape{8});
  std::vector<float> y = Values(ops::Clip(x, -1, 1, ctx_));
  EXPECT_TRUE(std::isnan(y[5]));
  y[5] = 0;
  EXPECT_EQ(y, (std::vector<float>{-1, -1, 0, 1, 1, 0, -1, 1}));
  EXPECT_EQ(Values(ops::Clip(Vec({-5, 0, 5}, Shape{3}), 2, 1, ctx_)),
            (std::vector<float>{1, 1, 1}));  // min > max: everything is max (torch.clamp)
  EXPECT_EQ(Values(ops::Clip(x.Slice(0, 0, 5, 1), -kInf, kInf, ctx_)),
            (std::vector<float>{-3, -1, 0, 1, 3}));
  EXPECT_EQ(ops::Clip(Vec({}, Shape{2, 0}), 0, 1, ctx_).shape(), (Shape{2, 0}));
  ExpectError<TensorTypeException>(
      [&] { ops::Clip(Tensor::Empty(Shape{1}, DType::kInt8, pool_), 0, 1, ctx_); },
      {"Clip", "input x", "Cast"});
}

TEST_F(TensorOpsTest, ClipGradientPassesInsideTheClosedInterval) {
  const Tensor x = Vec({-3, -1, 0, 1, 3, kNaN}, Shape{6});
  // PyTorch's clamp: the gradient passes where min <= x <= max, bounds included; not for NaN.
  EXPECT_EQ(GradOf(x, [&](const Tensor& t) { return ops::Clip(t, -1, 1, ctx_); }),
            (std::vector<float>{0, 2, 3, 4, 0, 0}));
  const Tensor y = ops::Clip(x.WithRequiresGrad(), -1, 1, ctx_);
  EXPECT_EQ(GradFn(y)->op(), OpKind::kClip);
  EXPECT_EQ(GradFn(y)->floats(), (std::vector<float>{-1, 1}));
}

TEST_F(TensorOpsTest, LeakyReluScalesTheNegativeSide) {
  const Tensor x = Vec({-2, -0.0f, 0, 3, kNaN}, Shape{5});
  const std::vector<float> y = Values(ops::LeakyRelu(x, 0.1f, ctx_));
  EXPECT_EQ(y[0], -2 * 0.1f);
  EXPECT_TRUE(std::signbit(y[1]));  // -0 * alpha
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], 3.0f);
  EXPECT_TRUE(std::isnan(y[4]));
  // The gradient at 0 is alpha * g (x > 0 is false there), as PyTorch's.
  EXPECT_EQ(
      GradOf(x.Slice(0, 0, 4, 1), [&](const Tensor& t) { return ops::LeakyRelu(t, 0.1f, ctx_); }),
      (std::vector<float>{0.1f, 2 * 0.1f, 3 * 0.1f, 4}));
  EXPECT_EQ(ops::LeakyRelu(Vec({}, Shape{0}), 0.5f, ctx_).shape(), (Shape{0}));
}

TEST_F(TensorOpsTest, ErfIsOddSaturatesAndKeepsNaN) {
  const Tensor x = Vec({0.5f, -0.5f, 0, kInf, -kInf, kNaN, 5, -1e-30f}, Shape{8});
  const std::vector<float> y = Values(ops::Erf(x, ctx_));
  EXPECT_EQ(y[0], std::erf(0.5f));
  EXPECT_EQ(y[1], -y[0]);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], 1.0f);
  EXPECT_EQ(y[4], -1.0f);
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[6], 1.0f);
  EXPECT_EQ(y[7], -1e-30f * 1.1283791670955126f);
  // d/dx erf(x) = 2 / sqrt(pi) e^(-x^2).
  const std::vector<float> g =
      GradOf(Vec({0, 1}, Shape{2}), [&](const Tensor& t) { return ops::Erf(t, ctx_); });
  EXPECT_FLOAT_EQ(g[0], 1.1283791670955126f);
  EXPECT_FLOAT_EQ(g[1], 2 * 1.1283791670955126f * std::exp(-1.0f));
}

TEST_F(TensorOpsTest, GeluTanhStaysTheDefaultAndNoneIsTheErfForm) {
  const Tensor x = Vec({-3, -1, -0.5f, 0, 0.5f, 1, 3, kNaN}, Shape{8});
  const std::vector<float> tanh_form = Values(ops::Gelu(x, ctx_));
  const std::vector<float> explicit_tanh =
      Values(ops::Gelu(x, ops::GeluApproximation::kTanh, ctx_));
  EXPECT_EQ(std::memcmp(tanh_form.data(), explicit_tanh.data(), 8 * sizeof(float)), 0);
  const std::vector<float> erf_form = Values(ops::Gelu(x, ops::GeluApproximation::kNone, ctx_));
  for (size_t i = 0; i + 1 < erf_form.size(); ++i) {
    const double v = Values(x)[i];
    EXPECT_NEAR(erf_form[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6) << v;
  }
  EXPECT_TRUE(std::isnan(erf_form[7]));
  EXPECT_NE(erf_form[1], tanh_form[1]);  // the forms differ (by ~1e-4 at -1)
  const Tensor y = ops::Gelu(x.WithRequiresGrad(), ops::GeluApproximation::kNone, ctx_);
  EXPECT_EQ(GradFn(y)->op(), OpKind::kGelu);
  EXPECT_EQ(GradFn(y)->Saved(0).buffer(), x.buffer()) << "the erf form saves the input";
  // Phi(0) + 0 = 0.5 at 0; Phi(x) + x phi(x) elsewhere.
  const std::vector<float> g = GradOf(Vec({0, 1}, Shape{2}), [&](const Tensor& t) {
    return ops::Gelu(t, ops::GeluApproximation::kNone, ctx_);
  });
  EXPECT_FLOAT_EQ(g[0], 0.5f);
  EXPECT_NEAR(g[1],
              2 * (0.5 * (1 + std::erf(1 / std::sqrt(2.0))) + std::exp(-0.5) / std::sqrt(2 * M_PI)),
              1e-6);
}

}  // namespace
}  // namespace onemodel
