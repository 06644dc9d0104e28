// The losses (CrossEntropy, NLLLoss, MSELoss) and Dropout: values against formulas written out
// in double, argument errors, edge cases (ignored targets, empty batches, strided inputs), the
// same bits from every kernel set, and gradients against finite differences.
#include "core/ops/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/ops/views.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"
#include "tests/core/ops/grad_check.h"

namespace onemodel {
namespace {

using ops::Reduction;
using ops_test::ExpectGradientsMatch;
using ops_test::Random;

class LossTest : public ExactOpTest {
 protected:
  template <typename T = int64_t>
  Tensor Labels(std::vector<T> v, const Shape& s) {
    Tensor t = Tensor::Empty(s, std::is_same_v<T, int64_t> ? DType::kInt64 : DType::kInt32, pool_);
    std::copy(v.begin(), v.end(), t.MutableData<T>().begin());
    return t;
  }
  float Scalar(const Tensor& t) { return Values(t).at(0); }
  std::mt19937 rng_{5};
};

// -log_softmax(row)[t] in double.
double Nll(std::vector<double> row, size_t t) {
  double sum = 0;
  for (double v : row) sum += std::exp(v);
  return std::log(sum) - row[t];
}

TEST_F(LossTest, CrossEntropyIsTheLogSoftmaxNllPerRowAndItsReductions) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1, 0, 5, -1}, Shape{3, 3});
  const Tensor t = Labels({2, 0, 1}, Shape{3});
  const std::vector<double> each = {Nll({1, 2, 3}, 2), Nll({1, 1, 1}, 0), Nll({0, 5, -1}, 1)};
  const std::vector<float> none =
      Values(ops::CrossEntropy(x, t, nullptr, {.reduction = Reduction::kNone}, ctx_));
  for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(none[i], static_cast<float>(each[i]));
  const double sum = each[0] + each[1] + each[2];
  EXPECT_FLOAT_EQ(Scalar(ops::CrossEntropy(x, t, nullptr, {.reduction = Reduction::kSum}, ctx_)),
                  static_cast<float>(sum));
  const Tensor mean = ops::CrossEntropy(x, t, nullptr, {}, ctx_);
  EXPECT_EQ(mean.shape(), Shape{});
  EXPECT_FLOAT_EQ(Scalar(mean), static_cast<float>(sum / 3));
  // Numerically stable: logits of 1e4 do not overflow exp.
  const Tensor big = Vec({1e4f, 0, -1e4f}, Shape{1, 3});
  EXPECT_FLOAT_EQ(Scalar(ops::CrossEntropy(big, Labels({1}, Shape{1}), nullptr, {}, ctx_)), 1e4f);
}

TEST_F(LossTest, WeightsScaleEachTargetAndTheMeanDividesByTheirSum) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1, 0, 5, -1}, Shape{3, 3});
  const Tensor t = Labels({2, 0, 2}, Shape{3});
  const Tensor w = Vec({0.5f, 1, 2}, Shape{3});
  const double total = 2 * Nll({1, 2, 3}, 2) + 0.5 * Nll({1, 1, 1}, 0) + 2 * Nll({0, 5, -1}, 2);
  EXPECT_FLOAT_EQ(Scalar(ops::CrossEntropy(x, t, &w, {}, ctx_)), static_cast<float>(total / 4.5));
  EXPECT_FLOAT_EQ(Scalar(ops::CrossEntropy(x, t, &w, {.reduction = Reduction::kSum}, ctx_)),
                  static_cast<float>(total));
}

TEST_F(LossTest, IgnoredTargetsAddNothingAndAllIgnoredMeanIsNaN) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1}, Shape{2, 3});
  const Tensor t = Labels({-100, 1}, Shape{2});
  EXPECT_EQ(Values(ops::CrossEntropy(x, t, nullptr, {.reduction = Reduction::kNone}, ctx_))[0], 0);
  EXPECT_FLOAT_EQ(Scalar(ops::CrossEntropy(x, t, nullptr, {}, ctx_)),
                  static_cast<float>(Nll({1, 1, 1}, 1)));
  // A custom ignore_index inside [0, C) ignores that class.
  EXPECT_FLOAT_EQ(
      Scalar(ops::CrossEntropy(x, Labels({0, 1}, Shape{2}), nullptr, {.ignore_index = 0}, ctx_)),
      static_cast<float>(Nll({1, 1, 1}, 1)));
  const Tensor none = Labels({-100, -100}, Shape{2});
  EXPECT_TRUE(std::isnan(Scalar(ops::CrossEntropy(x, none, nullptr, {}, ctx_))));
  EXPECT_TRUE(std::isnan(Scalar(ops::NllLoss(x, none, nullptr, {}, ctx_))));
  EXPECT_EQ(Scalar(ops::CrossEntropy(x, none, nullptr, {.reduction = Reduction::kSum}, ctx_)), 0);
  // And its gradient is zero, not NaN.
  const Tensor xg = x.WithRequiresGrad();
  const std::vector<Tensor> g =
      Backward(ops::CrossEntropy(xg, none, nullptr, {.label_smoothing = 0.1f}, ctx_), nullptr,
               std::vector<Tensor>{xg}, ctx_);
  EXPECT_EQ(Values(g[0]), std::vector<float>(6, 0.0f));
}

TEST_F(LossTest, LabelSmoothingMixesInTheUniformTargetAsPyTorch) {
  const Tensor x = Vec({1, 2, 3, 0, 5, -1}, Shape{2, 3});
  const Tensor t = Labels({2, 1}, Shape{2});
  const float eps = 0.2f;
  // Per row: (1 - eps) * nll + eps / C * sum_c -logp_c.
  auto row = [&](std::vector<double> r, size_t target) {
    double smooth = 0;
    for (size_t c = 0; c < r.size(); ++c) smooth += Nll(r, c);
    return (1 - double{eps}) * Nll(r, target) + double{eps} / 3 * smooth;
  };
  const std::vector<float> none = Values(ops::CrossEntropy(
      x, t, nullptr, {.reduction = Reduction::kNone, .label_smoothing = eps}, ctx_));
  EXPECT_FLOAT_EQ(none[0], static_cast<float>(row({1, 2, 3}, 2)));
  EXPECT_FLOAT_EQ(none[1], static_cast<float>(row({0, 5, -1}, 1)));
  ExpectError<TensorException>(
      [&] { ops::CrossEntropy(x, t, nullptr, {.label_smoothing = 1.5f}, ctx_); },
      {"CrossEntropy", "label_smoothing", "[0, 1]"});
  ExpectError<TensorException>(
      [&] { ops::NllLoss(x, t, nullptr, {.label_smoothing = 0.1f}, ctx_); },
      {"NLLLoss", "label_smoothing", "CrossEntropy only"});
}

TEST_F(LossTest, NllLossPicksTheWeightedNegatedLogProbability) {
  const Tensor lp = Vec({-1, -2, -3, -0.5f, -0.25f, -4}, Shape{2, 3});
  const Tensor w = Vec({1, 2, 3}, Shape{3});
  const Tensor t = Labels<int32_t>({2, 1}, Shape{2});  // INT32 targets are accepted
  EXPECT_EQ(Values(ops::NllLoss(lp, t, &w, {.reduction = Reduction::kNone}, ctx_)),
            (std::vector<float>{9, 0.5f}));
  EXPECT_FLOAT_EQ(Scalar(ops::NllLoss(lp, t, &w, {}, ctx_)), 9.5f / 5);
}

TEST_F(LossTest, ClassAxisIsOneForHigherRanksAndZeroForAVector) {
  // (N=2, C=3, d=2), read through a transposed (non-contiguous) view of a (2, 2, 3) tensor.
  const Tensor base = Random(Shape{2, 2, 3}, rng_, pool_);
  const Tensor x = base.Transpose(1, 2);
  const Tensor t = Labels({0, 2, 1, 1}, Shape{2, 2});
  const std::vector<float> ours =
      Values(ops::CrossEntropy(x, t, nullptr, {.reduction = Reduction::kNone}, ctx_));
  const Tensor flat = base.Contiguous(pool_);  // row (n, d) is flat[n, d, :]
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<double> row;
    for (int64_t c = 0; c < 3; ++c) row.push_back(flat.At<float>({r / 2, r % 2, c}));
    EXPECT_FLOAT_EQ(ours[static_cast<size_t>(r)],
                    static_cast<float>(Nll(row, static_cast<size_t>(t.Data<int64_t>()[r]))));
  }
  // (C) with a scalar target.
  const Tensor v = Vec({1, 2, 3}, Shape{3});
  EXPECT_FLOAT_EQ(Scalar(ops::CrossEntropy(v, Labels({1}, Shape{}), nullptr, {}, ctx_)),
                  static_cast<float>(Nll({1, 2, 3}, 1)));
  // A strided target.
  const Tensor wide = Labels({0, 9, 2, 9, 1, 9, 1, 9}, Shape{2, 4});
  EXPECT_EQ(Values(ops::CrossEntropy(x, wide.Slice(1, 0, 4, 2), nullptr,
                                     {.reduction = Reduction::kNone}, ctx_)),
            ours);
}

TEST_F(LossTest, EmptyBatchesGiveNaNMeanZeroSumAndAnEmptyNone) {
  const Tensor x = Tensor::Empty(Shape{0, 4}, DType::kFloat, pool_);
  const Tensor t = Labels({}, Shape{0});
  EXPECT_TRUE(std::isnan(Scalar(ops::CrossEntropy(x, t, nullptr, {}, ctx_))));
  EXPECT_EQ(Scalar(ops::NllLoss(x, t, nullptr, {.reduction = Reduction::kSum}, ctx_)), 0);
  EXPECT_EQ(ops::CrossEntropy(x, t, nullptr, {.reduction = Reduction::kNone}, ctx_).shape(),
            Shape{0});
  EXPECT_TRUE(std::isnan(Scalar(ops::MseLoss(x, x, Reduction::kMean, ctx_))));
  EXPECT_EQ(Scalar(ops::MseLoss(x, x, Reduction::kSum, ctx_)), 0);
}

TEST_F(LossTest, OutOfRangeTargetsAreRefusedByValueBeforeAnythingIsAllocated) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1}, Shape{2, 3});
  for (int64_t bad : {int64_t{3}, int64_t{-1}}) {
    const Tensor t = Labels({1, bad}, Shape{2});
    const PoolStats before = pool_.Stats();
    ExpectError<TensorException>(
        [&] { ops::CrossEntropy(x, t, nullptr, {}, ctx_); },
        {"CrossEntropy", ("target " + std::to_string(bad)).c_str(), "element 1", "3 classes"});
    EXPECT_EQ(pool_.Stats().hits + pool_.Stats().misses, before.hits + before.misses);
  }
  ExpectError<TensorException>(
      [&] {
        ops::NllLoss(x, Labels({7, 0}, Shape{2}), nullptr, {}, ctx_);
      },
      {"NLLLoss", "target 7", "3 classes", "ignore_index (-100)"});
}

TEST_F(LossTest, WrongTypesAndShapesSayWhatToGive) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1}, Shape{2, 3});
  ExpectError<TensorTypeException>(
      [&] {
        ops::CrossEntropy(x, Vec({0, 1}, Shape{2}), nullptr, {}, ctx_);
      },
      {"CrossEntropy", "target", "FLOAT", "Cast it to INT64"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::CrossEntropy(x, Labels({0, 1, 2}, Shape{3}), nullptr, {}, ctx_);
      },
      {"target has shape [3]", "needs [2]", "class axis 1"});
  const Tensor w = Vec({1, 1}, Shape{2});
  ExpectError<TensorShapeException>(
      [&] {
        ops::NllLoss(x, Labels({0, 1}, Shape{2}), &w, {}, ctx_);
      },
      {"weight has shape [2]", "3 classes", "one weight per class"});
  ExpectError<TensorShapeException>(
      [&] { ops::CrossEntropy(Vec({1}, Shape{}), Labels({0}, Shape{}), nullptr, {}, ctx_); },
      {"scalar", "(N, C)"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::MseLoss(x, Vec({1, 2, 3}, Shape{3}), Reduction::kMean, ctx_);
      },
      {"MSELoss", "[3]", "[2, 3]", "must match"});
  ExpectError<TensorTypeException>(
      [&] {
        ops::MseLoss(x, Labels({0, 1, 2, 0, 1, 2}, Shape{2, 3}), Reduction::kMean, ctx_);
      },
      {"MSELoss", "target", "Cast"});
}

TEST_F(LossTest, AReleasedTargetIsStale) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1}, Shape{2, 3});
  Tensor t = Labels({0, 1}, Shape{2});
  t.Dispose();
  ExpectError<StaleTensorException>([&] { ops::NllLoss(x, t, nullptr, {}, ctx_); }, {"stale"});
}

TEST_F(LossTest, MseLossSquaresDifferencesAndReduces) {
  const Tensor a = Vec({1, 2, 3, 4}, Shape{2, 2});
  const Tensor b = Vec({0, 4, 3, 1}, Shape{2, 2});
  EXPECT_EQ(Values(ops::MseLoss(a, b, Reduction::kNone, ctx_)), (std::vector<float>{1, 4, 0, 9}));
  EXPECT_EQ(Scalar(ops::MseLoss(a, b, Reduction::kSum, ctx_)), 14);
  EXPECT_EQ(Scalar(ops::MseLoss(a, b, Reduction::kMean, ctx_)), 3.5f);
  EXPECT_EQ(Scalar(ops::MseLoss(a.Transpose(0, 1), b.Transpose(0, 1), Reduction::kSum, ctx_)), 14);
}

TEST_F(LossTest, LossesGiveTheSameBitsWithEveryKernelSet) {
  const Tensor x = Random(Shape{4, 7, 3}, rng_, pool_);
  const Tensor t = Labels({0, 6, 3, 2, 1, 1, 5, 4, 3, 2, 1, 0}, Shape{4, 3});
  std::vector<std::vector<float>> results;
  for (const TensorKernels* kernels : KernelSet::Available()) {
    const OpContext ctx{pool_, *kernels};
    const Tensor xg = x.WithRequiresGrad();
    const Tensor y = ops::CrossEntropy(xg, t, nullptr, {.label_smoothing = 0.1f}, ctx);
    std::vector<float> all = Values(y);
    for (float v : Values(Backward(y, nullptr, std::vector<Tensor>{xg}, ctx)[0])) all.push_back(v);
    for (float v : Values(ops::Dropout(x, {.ratio = 0.3f, .seed = 9}, ctx))) all.push_back(v);
    results.push_back(all);
  }
  for (const auto& r : results) {
    EXPECT_EQ(std::memcmp(r.data(), results[0].data(), r.size() * sizeof(float)), 0);
  }
}

TEST_F(LossTest, RecordsNameTheLossAndGiveNoGradientToTargets) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1}, Shape{2, 3}).WithRequiresGrad();
  const Tensor y = ops::CrossEntropy(x, Labels({0, 1}, Shape{2}), nullptr, {}, ctx_);
  ASSERT_NE(GradFn(y), nullptr);
  EXPECT_EQ(OpKindName(GradFn(y)->op()), "CrossEntropy");
  EXPECT_EQ(GradFn(y)->inputs().size(), 1u);
  EXPECT_EQ(OpKindName(GradFn(ops::NllLoss(x, Labels({0, 1}, Shape{2}), nullptr, {}, ctx_))->op()),
            "NLLLoss");
  EXPECT_EQ(OpKindName(GradFn(ops::MseLoss(x, x, Reduction::kMean, ctx_))->op()), "MSELoss");
  EXPECT_EQ(OpKindName(GradFn(ops::Dropout(x, {.seed = 1}, ctx_))->op()), "Dropout");
}

TEST_F(LossTest, ChangingTheTargetAfterForwardFailsBackward) {
  const Tensor x = Vec({1, 2, 3, 1, 1, 1}, Shape{2, 3}).WithRequiresGrad();
  Tensor t = Labels({0, 1}, Shape{2});
  const Tensor y = ops::CrossEntropy(x, t, nullptr, {}, ctx_);
  t.Set<int64_t>({0}, 2);
  ExpectError<TensorVersionException>([&] { Backward(y, nullptr, std::vector<Tensor>{x}, ctx_); },
                                      {"CrossEntropy"});
}

TEST_F(LossTest, DropoutMasksAreAFunctionOfSeedAndIndex) {
  const Tensor x = Filled(Shape{100, 100}, 1.0f);
  const std::vector<float> a = Values(ops::Dropout(x, {.ratio = 0.25f, .seed = 42}, ctx_));
  EXPECT_EQ(Values(ops::Dropout(x, {.ratio = 0.25f, .seed = 42}, ctx_)), a);
  EXPECT_NE(Values(ops::Dropout(x, {.ratio = 0.25f, .seed = 43}, ctx_)), a);
  int kept = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i] != 0, ops::DropoutKeeps(42, static_cast<int64_t>(i), 0.25f));
    if (a[i] != 0) {
      EXPECT_EQ(a[i], 1.0f / 0.75f);
      ++kept;
    }
  }
  EXPECT_NEAR(kept, 7500, 200);  // 4.6 standard deviations
  // A strided input gets the mask of its row-major element order.
  const Tensor base = Random(Shape{8, 6}, rng_, pool_);
  const Tensor view = base.Transpose(0, 1);
  EXPECT_EQ(Values(ops::Dropout(view, {.seed = 7}, ctx_)),
            Values(ops::Dropout(view.Contiguous(pool_), {.seed = 7}, ctx_)));
}

TEST_F(LossTest, DropoutEdgeRatiosTrainingOffAndErrors) {
  const Tensor x = Vec({1, -2, 3, NAN}, Shape{4});
  EXPECT_EQ(Values(ops::Dropout(x, {.ratio = 1, .seed = 3}, ctx_))[0], 0.0f);
  EXPECT_EQ(Values(ops::Dropout(x, {.ratio = 1, .seed = 3}, ctx_))[1], 0.0f);
  EXPECT_TRUE(std::isnan(Values(ops::Dropout(x, {.ratio = 1, .seed = 3}, ctx_))[3]));  // x * 0
  const std::vector<float> same = Values(ops::Dropout(x, {.ratio = 0, .seed = 3}, ctx_));
  EXPECT_EQ(same[2], 3.0f);
  const Tensor off = ops::Dropout(x, {.ratio = 0.9f, .seed = 3, .training = false}, ctx_);
  EXPECT_EQ(off.buffer(), x.buffer());
  EXPECT_EQ(GradFn(ops::Dropout(x.WithRequiresGrad(), {.training = false}, ctx_)), nullptr);
  EXPECT_EQ(ops::Dropout(Tensor::Empty(Shape{0, 3}, DType::kFloat, pool_), {}, ctx_).shape(),
            (Shape{0, 3}));
  ExpectError<TensorException>([&] { ops::Dropout(x, {.ratio = 1.5f}, ctx_); },
                               {"Dropout", "ratio", "[0, 1]"});
}

TEST_F(LossTest, DropoutGradientIsTheMaskScaled) {
  const Tensor x = Filled(Shape{50}, 2.0f).WithRequiresGrad();
  const Tensor y = ops::Dropout(x, {.ratio = 0.5f, .seed = 11}, ctx_);
  const Tensor ones = Filled(Shape{50}, 1.0f);
  const std::vector<float> out = Values(y);
  const std::vector<float> g = Values(Backward(y, &ones, std::vector<Tensor>{x}, ctx_)[0]);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(g[i], out[i] / 2.0f);  // 2 * mask * 2
}

TEST_F(LossTest, GradientsMatchFiniteDifferences) {
  const Tensor t = Labels({2, -100, 0, 1, 3, 3}, Shape{2, 3});
  const Tensor w = Vec({0.5f, 1.5f, 1, 2}, Shape{4});
  for (Reduction red : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
    for (float eps : {0.0f, 0.3f}) {
      const ops::ClassLossParams p{.reduction = red, .label_smoothing = eps};
      // Logits (N=2, C=4, d=3) as a transposed view.
      const Tensor x = Random(Shape{2, 3, 4}, rng_, pool_).Transpose(1, 2);
      ExpectGradientsMatch(
          "CrossEntropy",
          [&](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::CrossEntropy(in[0], t, &w, p, c);
          },
          {x}, ctx_, rng_, 1e-2, 1e-2);
      ExpectGradientsMatch(
          "CrossEntropy without weights",
          [&](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::CrossEntropy(in[0], t, nullptr, p, c);
          },
          {x}, ctx_, rng_, 1e-2, 1e-2);
    }
    ExpectGradientsMatch(
        "NLLLoss",
        [&](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::NllLoss(in[0], t, &w, {.reduction = red}, c);
        },
        {Random(Shape{2, 4, 3}, rng_, pool_)}, ctx_, rng_);
    ExpectGradientsMatch(
        "MSELoss",
        [&](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::MseLoss(in[0], in[1], red, c);
        },
        {Random(Shape{3, 4}, rng_, pool_), Random(Shape{4, 3}, rng_, pool_).Transpose(0, 1)}, ctx_,
        rng_);
  }
  ExpectGradientsMatch(
      "Dropout",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Dropout(in[0], {.ratio = 0.4f, .seed = 5}, c);
      },
      {Random(Shape{4, 5}, rng_, pool_)}, ctx_, rng_);
}

}  // namespace
}  // namespace onemodel
