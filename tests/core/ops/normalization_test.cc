// LayerNorm, RMSNorm and BatchNorm2d: values, checks, epsilon, empty and strided inputs, the
// running statistics, the record (spec 8), gradients against finite differences, and the same
// bits from every kernel variant.
#include "core/ops/normalization.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/ops/elementwise.h"
#include "core/tensor/grad_mode.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"
#include "tests/core/ops/grad_check.h"

namespace onemodel {
namespace {

using ops_test::ExpectGradientsMatch;
using ops_test::Random;

class NormalizationTest : public ExactOpTest {
 protected:
  std::mt19937 rng_{5};
};

void ExpectAll(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST_F(NormalizationTest, LayerNormNormalizesTheLastAxesThenScalesAndShifts) {
  const Tensor x = Vec({1, 2, 3, 4, 2, 2, 2, 2}, Shape{2, 4});
  const double r = 1 / std::sqrt(1.25 + 1e-5);  // row 0: mean 2.5, variance 1.25
  ExpectAll(Values(ops::LayerNorm(x, nullptr, nullptr, -1, 1e-5f, ctx_)),
            {float(-1.5 * r), float(-0.5 * r), float(0.5 * r), float(1.5 * r), 0, 0, 0, 0});
  const Tensor scale = Vec({1, 2, 3, 4}, Shape{4}), bias = Vec({0, 1, 0, 1}, Shape{4});
  ExpectAll(Values(ops::LayerNorm(x, &scale, &bias, 1, 1e-5f, ctx_)),
            {float(-1.5 * r), float(-1.0 * r + 1), float(1.5 * r), float(6 * r + 1), 0, 1, 0, 1});
  // Over both axes: mean 2.25, variance 0.6875.
  const double r2 = 1 / std::sqrt(0.6875 + 1e-5);
  EXPECT_NEAR(Values(ops::LayerNorm(x, nullptr, nullptr, 0, 1e-5f, ctx_))[0], -1.25 * r2, 1e-6);
}

TEST_F(NormalizationTest, RMSNormDividesByTheRootMeanSquare) {
  const Tensor x = Vec({3, 4, 0, 0}, Shape{2, 2});
  const Tensor scale = Vec({2, 1}, Shape{2});
  const double r = 1 / std::sqrt(12.5 + 1e-5);
  ExpectAll(Values(ops::RMSNorm(x, &scale, -1, 1e-5f, ctx_)), {float(6 * r), float(4 * r), 0, 0});
}

TEST_F(NormalizationTest, EpsilonIsAddedToTheVariance) {
  const Tensor x = Vec({0, 2}, Shape{1, 2});  // variance 1
  ExpectAll(Values(ops::LayerNorm(x, nullptr, nullptr, -1, 3, ctx_)), {-0.5f, 0.5f});
  ExpectAll(Values(ops::RMSNorm(x, nullptr, -1, 2, ctx_)), {0, 1});  // mean square 2
  const std::vector<float> flat =
      Values(ops::LayerNorm(Filled(Shape{3}, 7), nullptr, nullptr, -1, 0, ctx_));
  EXPECT_TRUE(std::isnan(flat[0])) << "a constant row with eps 0 is 0 / 0, as in PyTorch";
}

TEST_F(NormalizationTest, ChecksSayWhatToDo) {
  const Tensor x = Filled(Shape{2, 3}, 1);
  ExpectError<TensorShapeException>(
      [&] { ops::LayerNorm(Filled(Shape{}, 1), nullptr, nullptr, -1, 1e-5f, ctx_); },
      {"LayerNorm", "scalar", "Reshape"});
  ExpectError<TensorShapeException>([&] { ops::RMSNorm(x, nullptr, 2, 1e-5f, ctx_); },
                                    {"RMSNorm", "2"});
  const Tensor wrong = Filled(Shape{2, 3}, 1);
  ExpectError<TensorShapeException>(
      [&] { ops::LayerNorm(x, &wrong, nullptr, -1, 1e-5f, ctx_); },
      {"LayerNorm", "scale is [2, 3] but must be [3]", "normalized axes"});
  ExpectError<TensorShapeException>([&] { ops::LayerNorm(x, nullptr, &wrong, 0 + 1, 1e-5f, ctx_); },
                                    {"bias"});
  ExpectError<TensorException>([&] { ops::LayerNorm(x, nullptr, nullptr, -1, -1, ctx_); },
                               {"epsilon", ">= 0"});
  const Tensor ints = Tensor::Empty(Shape{2, 3}, DType::kInt32, pool_, true);
  ExpectError<TensorTypeException>([&] { ops::RMSNorm(ints, nullptr, -1, 1e-5f, ctx_); },
                                   {"RMSNorm", "Cast"});

  const Tensor img = Filled(Shape{2, 3, 2, 2}, 1);
  Tensor mean = Filled(Shape{3}, 0), var = Filled(Shape{3}, 1);
  const uint64_t version = mean.version();
  ExpectError<TensorShapeException>(
      [&] { ops::BatchNorm2d(x, mean, var, nullptr, nullptr, {}, ctx_); }, {"(N, C, H, W)"});
  ExpectError<TensorShapeException>(
      [&] { ops::BatchNorm2d(img, Filled(Shape{2}, 0), var, nullptr, nullptr, {}, ctx_); },
      {"running_mean", "one per channel"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::BatchNorm2d(Filled(Shape{1, 3, 1, 1}, 1), mean, var, nullptr, nullptr,
                         {.training = true}, ctx_);
      },
      {"more than 1 value per channel", "training = 0"});
  const Tensor both = Filled(Shape{6}, 1);
  ExpectError<TensorLayoutException>(
      [&] {
        ops::BatchNorm2d(img, both.Slice(0, 0, 6, 2), var, nullptr, nullptr, {.training = true},
                         ctx_);
      },
      {"running_mean is a strided view", "contiguous"});
  ExpectError<TensorException>(
      [&] {
        ops::BatchNorm2d(img, both.Slice(0, 0, 3), both.Slice(0, 2, 5), nullptr, nullptr,
                         {.training = true}, ctx_);
      },
      {"share memory"});
  EXPECT_EQ(mean.version(), version) << "refused calls write nothing";
  // Inference reads a strided running statistic.
  EXPECT_NO_THROW(ops::BatchNorm2d(img, both.Slice(0, 0, 6, 2), var, nullptr, nullptr, {}, ctx_));
}

// Training writes the running statistics in place while it reads x, scale and bias: a running
// statistic sharing their memory would change the result, so it is refused before any write.
TEST_F(NormalizationTest, TrainingRefusesRunningStatisticsSharingMemoryWithWhatItReads) {
  const Tensor img = Filled(Shape{2, 3, 2, 2}, 1);
  const Tensor in_img = img.Reshape({24}, pool_).Slice(0, 0, 3);
  const Tensor params = Filled(Shape{6}, 1);
  Tensor mean = Filled(Shape{3}, 0), var = Filled(Shape{3}, 1);
  const uint64_t version = mean.version();
  const ops::BatchNormParams training{.training = true};
  ExpectError<TensorException>(
      [&] { ops::BatchNorm2d(img, in_img, var, nullptr, nullptr, training, ctx_); },
      {"running_mean shares memory with x"});
  ExpectError<TensorException>(
      [&] { ops::BatchNorm2d(img, mean, var, &mean, nullptr, training, ctx_); },
      {"running_mean shares memory with scale"});
  const Tensor bias = params.Slice(0, 3, 6);
  ExpectError<TensorException>(
      [&] { ops::BatchNorm2d(img, mean, bias, nullptr, &bias, training, ctx_); },
      {"running_var shares memory with bias"});
  EXPECT_EQ(mean.version(), version) << "refused calls write nothing";
  // Inference writes nothing, so there any aliasing is fine; so are disjoint slices of a buffer.
  EXPECT_NO_THROW(ops::BatchNorm2d(img, in_img, var, &mean, &mean, {}, ctx_));
  EXPECT_NO_THROW(ops::BatchNorm2d(img, params.Slice(0, 0, 3), params.Slice(0, 3, 6), nullptr,
                                   nullptr, training, ctx_));
}

TEST_F(NormalizationTest, EmptyInputsGiveEmptyOutputs) {
  EXPECT_EQ(ops::LayerNorm(Filled(Shape{0, 4}, 1), nullptr, nullptr, -1, 1e-5f, ctx_).shape(),
            (Shape{0, 4}));
  EXPECT_EQ(ops::RMSNorm(Filled(Shape{3, 0}, 1), nullptr, -1, 1e-5f, ctx_).shape(), (Shape{3, 0}));
  const Tensor mean = Filled(Shape{2}, 0), var = Filled(Shape{2}, 1);
  EXPECT_EQ(
      ops::BatchNorm2d(Filled(Shape{0, 2, 3, 3}, 1), mean, var, nullptr, nullptr, {}, ctx_).shape(),
      (Shape{0, 2, 3, 3}));
}

TEST_F(NormalizationTest, StridedInputsGiveTheBitsOfTheirContiguousCopies) {
  const Tensor base = Random(Shape{5, 7}, rng_, pool_);
  const Tensor t = base.Transpose(0, 1), tc = t.Contiguous(pool_);
  const Tensor scale = Random(Shape{10}, rng_, pool_).Slice(0, 0, 10, 2);
  EXPECT_EQ(Values(ops::LayerNorm(t, &scale, &scale, -1, 1e-5f, ctx_)),
            Values(ops::LayerNorm(tc, &scale, &scale, -1, 1e-5f, ctx_)));
  EXPECT_EQ(Values(ops::RMSNorm(t, &scale, -1, 1e-5f, ctx_)),
            Values(ops::RMSNorm(tc, &scale, -1, 1e-5f, ctx_)));
}

TEST_F(NormalizationTest, BatchNormTrainingUsesBatchStatisticsAndUpdatesTheRunningOnes) {
  // Channel 0: {1, 3, 5, 7} (mean 4, biased variance 5, unbiased 20/3); channel 1: {0, 2, 0,
  // 2} (mean 1, variance 1, unbiased 4/3).
  const Tensor x = Vec({1, 3, 0, 2, 5, 7, 0, 2}, Shape{2, 2, 1, 2});
  Tensor mean = Vec({1, 0}, Shape{2}), var = Vec({1, 1}, Shape{2});
  const uint64_t mv = mean.version(), vv = var.version();
  const Tensor y = ops::BatchNorm2d(x, mean, var, nullptr, nullptr,
                                    {.training = true, .momentum = 0.5f, .eps = 0}, ctx_);
  const double r = 1 / std::sqrt(5.0);
  ExpectAll(Values(y), {float(-3 * r), float(-r), -1, 1, float(r), float(3 * r), -1, 1});
  ExpectAll(Values(mean), {2.5f, 0.5f});
  ExpectAll(Values(var), {float(0.5 + 10.0 / 3), float(0.5 + 2.0 / 3)});
  EXPECT_EQ(mean.version(), mv + 1) << "written in place: the version bumps";
  EXPECT_EQ(var.version(), vv + 1);

  // Inference: the running statistics, unchanged.
  const Tensor scale = Vec({2, 1}, Shape{2}), bias = Vec({0, 1}, Shape{2});
  const Tensor z = ops::BatchNorm2d(x, mean, var, &scale, &bias, {.eps = 0}, ctx_);
  const double r0 = 1 / std::sqrt(0.5 + 10.0 / 3), r1 = 1 / std::sqrt(0.5 + 2.0 / 3);
  EXPECT_NEAR(Values(z)[0], 2 * (1 - 2.5) * r0, 1e-6);
  EXPECT_NEAR(Values(z)[2], (0 - 0.5) * r1 + 1, 1e-6);
  EXPECT_EQ(mean.version(), mv + 1) << "inference writes nothing";
}

TEST_F(NormalizationTest, BatchNormTrainingRefusesANonFiniteMomentumAndWritesNothing) {
  const Tensor x = Random(Shape{2, 2, 2, 2}, rng_, pool_);
  Tensor mean = Filled(Shape{2}, 0), var = Filled(Shape{2}, 1);
  const uint64_t mv = mean.version();
  for (const float m : {std::nanf(""), INFINITY, -INFINITY}) {
    EXPECT_THROW(
        ops::BatchNorm2d(x, mean, var, nullptr, nullptr, {.training = true, .momentum = m}, ctx_),
        TensorException);
  }
  ExpectAll(Values(mean), {0, 0});
  ExpectAll(Values(var), {1, 1});
  EXPECT_EQ(mean.version(), mv);
  // Inference never reads the momentum.
  ops::BatchNorm2d(x, mean, var, nullptr, nullptr, {.momentum = std::nanf("")}, ctx_);
}

TEST_F(NormalizationTest, BatchNormTrainingInvalidatesAGraphThatSavedTheRunningStatistics) {
  const Tensor x = Random(Shape{2, 2, 2, 2}, rng_, pool_);
  Tensor mean = Filled(Shape{2}, 0), var = Filled(Shape{2}, 1);
  const Tensor w = Filled(Shape{2}, 3).WithRequiresGrad();
  const Tensor product = ops::Mul(w, mean, ctx_);  // saves the running mean
  ops::BatchNorm2d(x, mean, var, nullptr, nullptr, {.training = true}, ctx_);
  const Tensor g = Filled(Shape{2}, 1);
  EXPECT_THROW(Backward(product, &g, std::vector<Tensor>{w}, ctx_), TensorVersionException);
}

TEST_F(NormalizationTest, RecordsTheNormalizedRowsTheInverseDeviationAndTheScale) {
  const Tensor x = Vec({1, 2, 3, 4, 2, 2, 2, 2}, Shape{2, 4}).WithRequiresGrad();
  const Tensor scale = Filled(Shape{4}, 2);
  const Tensor y = ops::LayerNorm(x, &scale, nullptr, -1, 1e-5f, ctx_);
  const BackwardRecord* r = GradFn(y);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->op(), OpKind::kLayerNorm);
  EXPECT_NEAR(r->Owned(0).At<float>({0, 3}), 1.5 / std::sqrt(1.25 + 1e-5), 1e-6)
      << "owned slot 0: the normalized rows";
  EXPECT_EQ(r->Owned(1).shape(), (Shape{2})) << "owned slot 1: one inverse deviation per row";
  EXPECT_NEAR(r->Owned(1).At<float>({1}), 1 / std::sqrt(1e-5), 1e-2);
  EXPECT_EQ(r->Saved(0).buffer(), scale.buffer()) << "and the scale input";
}

TEST_F(NormalizationTest, GradientsMatchFiniteDifferences) {
  const Tensor x = Random(Shape{3, 4, 5}, rng_, pool_, -2, 2).Transpose(1, 2);  // [3, 5, 4]
  ExpectGradientsMatch(
      "LayerNorm",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::LayerNorm(in[0], &in[1], &in[2], 1, 1e-3f, c);
      },
      {x, Random(Shape{5, 4}, rng_, pool_), Random(Shape{5, 4}, rng_, pool_)}, ctx_, rng_, 1e-2,
      3e-2);
  ExpectGradientsMatch(
      "LayerNorm over every axis",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::LayerNorm(in[0], &in[1], &in[2], 0, 1e-3f, c);
      },
      {Random(Shape{2, 3}, rng_, pool_), Random(Shape{2, 3}, rng_, pool_),
       Random(Shape{2, 3}, rng_, pool_)},
      ctx_, rng_, 1e-2, 3e-2);
  ExpectGradientsMatch(
      "RMSNorm",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::RMSNorm(in[0], &in[1], -1, 1e-3f, c);
      },
      {x, Random(Shape{8}, rng_, pool_).Slice(0, 7, -9, -2)}, ctx_, rng_, 1e-2, 3e-2);
  const Tensor img = Random(Shape{2, 3, 3, 2}, rng_, pool_);
  const Tensor mean = Random(Shape{3}, rng_, pool_), var = Random(Shape{3}, rng_, pool_, 0.5, 2);
  for (const bool training : {true, false}) {
    ExpectGradientsMatch(
        training ? "BatchNorm2d training" : "BatchNorm2d inference",
        [&](const std::vector<Tensor>& in, const OpContext& c) {
          // Fresh running statistics per call: finite differences call it many times.
          const Tensor m = mean.Contiguous(pool_).Detach(), v = var.Contiguous(pool_).Detach();
          Tensor mc = Tensor::Empty(Shape{3}, DType::kFloat, pool_),
                 vc = Tensor::Empty(Shape{3}, DType::kFloat, pool_);
          mc.CopyFrom(m);
          vc.CopyFrom(v);
          return ops::BatchNorm2d(in[0], mc, vc, &in[1], &in[2],
                                  {.training = training, .eps = 1e-3f}, c);
        },
        {img.ToLayout(Layout::kNhwc, pool_), Random(Shape{3}, rng_, pool_),
         Random(Shape{3}, rng_, pool_)},
        ctx_, rng_, 1e-2, 3e-2);
  }
}

// Enough rows for the fast kernels to split them over threads, and rows whose length is not
// a multiple of the 8 lanes: every variant gives the reference's bits, forward and backward,
// but for LayerNorm, whose rows the fast kernels take in float (layer_norm_rows.h): there
// every fast variant gives the same bits, within a few float roundings of the reference's.
TEST_F(NormalizationTest, EveryKernelVariantGivesTheSameBits) {
  const Tensor x = Random(Shape{257, 301}, rng_, pool_, -3, 3);
  const Tensor scale = Random(Shape{301}, rng_, pool_), bias = Random(Shape{301}, rng_, pool_);
  const Tensor g = Random(Shape{257, 301}, rng_, pool_);
  const Tensor img = Random(Shape{16, 9, 13, 11}, rng_, pool_);
  const Tensor gi = Random(Shape{16, 9, 13, 11}, rng_, pool_);
  const Tensor cs = Random(Shape{9}, rng_, pool_);
  auto run = [&](const TensorKernels& k) {
    const OpContext c{pool_, k};
    std::vector<std::vector<float>> out;
    const Tensor xs[] = {x.WithRequiresGrad(), scale.WithRequiresGrad(), bias.WithRequiresGrad()};
    const Tensor y = ops::LayerNorm(xs[0], &xs[1], &xs[2], -1, 1e-5f, c);
    out.push_back(Values(y));
    for (const Tensor& t : Backward(y, &g, xs, c)) out.push_back(Values(t));
    const Tensor r = ops::RMSNorm(xs[0], &xs[1], -1, 1e-5f, c);
    out.push_back(Values(r));
    for (const Tensor& t : Backward(r, &g, std::span(xs, 1), c)) out.push_back(Values(t));
    Tensor mean = Filled(Shape{9}, 0.5f), var = Filled(Shape{9}, 2);
    const Tensor is[] = {img.WithRequiresGrad(), cs.WithRequiresGrad()};
    const Tensor b = ops::BatchNorm2d(is[0], mean, var, &is[1], nullptr, {.training = true}, c);
    out.push_back(Values(b));
    out.push_back(Values(mean));
    out.push_back(Values(var));
    for (const Tensor& t : Backward(b, &gi, is, c)) out.push_back(Values(t));
    return out;
  };
  constexpr size_t kLayerNormResults = 4;  // y and the gradients of x, scale and bias
  const TensorKernels& exact = KernelSet::Get(KernelChoice::kExact);
  const auto reference = run(exact);
  const auto fast = run(KernelSet::Get(KernelChoice::kFast));
  for (const TensorKernels* k : KernelSet::Available()) {
    const auto got = run(*k);
    ASSERT_EQ(got.size(), reference.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const bool float_rows = i < kLayerNormResults && k != &exact;
      const std::vector<float>& want = float_rows ? fast[i] : reference[i];
      ASSERT_EQ(got[i].size(), want.size());
      EXPECT_EQ(std::memcmp(got[i].data(), want.data(), got[i].size() * sizeof(float)), 0)
          << k->name() << " result " << i;
      for (size_t j = 0; float_rows && j < got[i].size(); ++j) {
        const float r = reference[i][j];
        ASSERT_NEAR(got[i][j], r, 1e-5 * (1 + std::fabs(r))) << "result " << i << " at " << j;
      }
    }
  }
}

}  // namespace
}  // namespace onemodel
