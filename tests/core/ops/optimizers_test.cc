// SgdStep, AdamWStep and ClipGradNorm (core/ops/optimizers.h): values by hand, the checks
// that refuse a call before anything is written, version bumps, and no steady-state
// allocation.
#include "core/ops/optimizers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "tests/core/ops/expect_error.h"

namespace onemodel {
namespace {

class OptimizersTest : public ::testing::Test {
 protected:
  Tensor Vec(std::vector<float> v) {
    Tensor t = Tensor::Empty(Shape{static_cast<int64_t>(v.size())}, DType::kFloat, pool_);
    std::copy(v.begin(), v.end(), t.MutableData<float>().begin());
    return t;
  }
  Tensor Step(int64_t value = 0) {
    Tensor t = Tensor::Empty(Shape{}, DType::kInt64, pool_);
    t.MutableData<int64_t>()[0] = value;
    return t;
  }
  static std::vector<float> Values(const Tensor& t) {
    return {t.Data<float>().begin(), t.Data<float>().end()};
  }
  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Default()};
};

TEST_F(OptimizersTest, SgdMomentumStartsFromTheGradientThenDampens) {
  Tensor p = Vec({1, 2}), g = Vec({0.5f, -1}), buf = Vec({NAN, NAN}), step = Step();
  const ops::SgdOptions o{.lr = 0.1f, .momentum = 0.9f, .dampening = 0.5f};
  const Tensor t1 = ops::SgdStep({&p, 1}, {&g, 1}, {&buf, 1}, step, o, ctx_);
  EXPECT_EQ(t1.dtype(), DType::kInt64);
  EXPECT_EQ(t1.Data<int64_t>()[0], 1);
  EXPECT_EQ(step.Data<int64_t>()[0], 1) << "the step counter is incremented in place";
  EXPECT_EQ(Values(buf), (std::vector<float>{0.5f, -1})) << "first step: buf = grad (NaN ignored)";
  EXPECT_EQ(Values(p), (std::vector<float>{1 - 0.05f, 2 + 0.1f}));
  ops::SgdStep({&p, 1}, {&g, 1}, {&buf, 1}, step, o, ctx_);
  // buf = 0.9 * buf + (1 - 0.5) * g
  EXPECT_FLOAT_EQ(buf.Data<float>()[0], 0.9f * 0.5f + 0.5f * 0.5f);
  EXPECT_FLOAT_EQ(p.Data<float>()[0], 0.95f - 0.1f * (0.9f * 0.5f + 0.25f));
}

TEST_F(OptimizersTest, SgdNesterovAndWeightDecay) {
  Tensor p = Vec({2}), g = Vec({1}), buf = Vec({0}), step = Step();
  const ops::SgdOptions o{.lr = 0.5f, .momentum = 0.5f, .nesterov = true, .weight_decay = 0.25f};
  ops::SgdStep({&p, 1}, {&g, 1}, {&buf, 1}, step, o, ctx_);
  // d = 1 + 0.25 * 2 = 1.5; buf = 1.5; d = 1.5 + 0.5 * 1.5 = 2.25; p = 2 - 0.5 * 2.25
  EXPECT_FLOAT_EQ(buf.Data<float>()[0], 1.5f);
  EXPECT_FLOAT_EQ(p.Data<float>()[0], 2 - 1.125f);
}

TEST_F(OptimizersTest, AdamWFirstStepMovesEachParameterByAboutLr) {
  Tensor p = Vec({1, -1, 3}), g = Vec({4, -0.01f, 0}), m = Vec({0, 0, 0}), v = Vec({0, 0, 0});
  Tensor step = Step();
  const ops::AdamWOptions o{.lr = 0.1f, .weight_decay = 0.5f};
  const Tensor t = ops::AdamWStep({&p, 1}, {&g, 1}, {&m, 1}, {&v, 1}, {}, step, o, ctx_);
  EXPECT_EQ(t.Data<int64_t>()[0], 1);
  // Bias-corrected m / sqrt(v) is sign(g) on step 1; decay first multiplies by 1 - 0.05.
  EXPECT_NEAR(p.Data<float>()[0], 0.95f - 0.1f, 1e-6);
  EXPECT_NEAR(p.Data<float>()[1], -0.95f + 0.1f, 1e-5);
  EXPECT_FLOAT_EQ(p.Data<float>()[2], 3 * 0.95f) << "a zero gradient only decays";
  EXPECT_FLOAT_EQ(m.Data<float>()[0], 0.1f * 4);
  EXPECT_FLOAT_EQ(v.Data<float>()[0], (1 - 0.999f) * 16);
}

TEST_F(OptimizersTest, AmsgradKeepsTheLargestSecondMoment) {
  Tensor p = Vec({0}), g = Vec({10}), m = Vec({0}), v = Vec({0}), vmax = Vec({0}), step = Step();
  const ops::AdamWOptions o{.amsgrad = true};
  ops::AdamWStep({&p, 1}, {&g, 1}, {&m, 1}, {&v, 1}, {&vmax, 1}, step, o, ctx_);
  const float peak = vmax.Data<float>()[0];
  g = Vec({0});
  ops::AdamWStep({&p, 1}, {&g, 1}, {&m, 1}, {&v, 1}, {&vmax, 1}, step, o, ctx_);
  EXPECT_LT(v.Data<float>()[0], peak);
  EXPECT_EQ(vmax.Data<float>()[0], peak);
}

TEST_F(OptimizersTest, EveryWrittenTensorBumpsItsVersionSoAnOldGraphCannotBackward) {
  Tensor w = Vec({1, 2}).WithRequiresGrad();
  const Tensor x = Vec({3, 4});
  const Tensor loss = ops::Sum(ops::Mul(w, x, ctx_), {}, false, ctx_);  // Mul saves w
  Tensor g = Vec({1, 1}), m = Vec({0, 0}), v = Vec({0, 0}), step = Step();
  const uint64_t wv = w.version(), mv = m.version(), gv = g.version(), sv = step.version();
  ops::AdamWStep({&w, 1}, {&g, 1}, {&m, 1}, {&v, 1}, {}, step, {}, ctx_);
  EXPECT_EQ(w.version(), wv + 1);
  EXPECT_EQ(m.version(), mv + 1);
  EXPECT_EQ(step.version(), sv + 1);
  EXPECT_EQ(g.version(), gv) << "gradients are only read";
  EXPECT_THROW(Backward(loss, nullptr, std::vector<Tensor>{w}, ctx_), TensorVersionException);
}

TEST_F(OptimizersTest, RefusedCallsWriteNothing) {
  Tensor p = Vec({1, 2}), q = Vec({3}), g = Vec({1, 1}), h = Vec({1}), step = Step();
  const Tensor params[] = {p, q};
  const ops::SgdOptions o{.lr = 0.1f};
  const auto refuse = [&](std::initializer_list<Tensor> grads, const Tensor& s) {
    const std::vector<Tensor> gs(grads);
    ops::SgdStep(params, gs, {}, s, o, ctx_);
  };
  const uint64_t before = p.version();
  ExpectError<TensorShapeException>(
      [&] {
        refuse({g, g}, step);
      },
      {"SGD", "grads[1] is [2]", "params[1] is [1]"});
  ExpectError<TensorException>([&] { refuse({g}, step); }, {"grads has 1 tensors", "2 params"});
  const Tensor ints = Tensor::Empty(Shape{1}, DType::kInt32, pool_);
  ExpectError<TensorTypeException>(
      [&] {
        refuse({g, ints}, step);
      },
      {"grads[1]", "Cast it to FLOAT"});
  ExpectError<TensorTypeException>(
      [&] {
        refuse({g, h}, Vec({0}));
      },
      {"step must be a one-element INT64 tensor"});
  ExpectError<TensorException>([&] { refuse({g, h}, Step(-1)); }, {"step holds -1"});
  ExpectError<TensorException>(
      [&] {
        refuse({p, h}, step);
      },
      {"params[0] and grads[0] share memory"});
  EXPECT_EQ(p.version(), before);
  EXPECT_EQ(Values(p), (std::vector<float>{1, 2}));
  EXPECT_EQ(step.Data<int64_t>()[0], 0);
}

TEST_F(OptimizersTest, WrittenTensorsMustBeDenseAndDisjointButGradientsMayBeStrided) {
  Tensor big = Tensor::Empty(Shape{2, 2}, DType::kFloat, pool_, /*zero=*/true);
  Tensor col = big.Slice(1, 0, 1).Squeeze(1);  // strided
  Tensor g = Vec({1, 1}), step = Step();
  const ops::SgdOptions o{.lr = 1};
  ExpectError<TensorLayoutException>(
      [&] {
        ops::SgdStep({&col, 1}, {&g, 1}, {}, step, o, ctx_);
      },
      {"params[0] is a strided view", "contiguous"});
  // Two halves of one buffer are fine; overlapping rows are not.
  Tensor flat = Vec({1, 2, 3, 4});
  const Tensor halves[] = {flat.Slice(0, 0, 2), flat.Slice(0, 2, 4)};
  const Tensor grads[] = {col, col};  // a strided gradient, read twice
  ops::SgdStep(halves, grads, {}, step, o, ctx_);
  EXPECT_EQ(Values(flat), (std::vector<float>{1, 2, 3, 4})) << "zero gradients";
  const Tensor overlapping[] = {flat.Slice(0, 0, 2), flat.Slice(0, 1, 3)};
  ExpectError<TensorException>([&] { ops::SgdStep(overlapping, grads, {}, step, o, ctx_); },
                               {"params[0] and params[1] share memory"});
  const Tensor blocked =
      Tensor::Empty(Shape{1, 2, 1, 1}, DType::kFloat, pool_).ToLayout(Layout::kBlocked, pool_, 2);
  ExpectError<TensorLayoutException>(
      [&] {
        ops::ClipGradNorm({&blocked, 1}, 1, 2, false, ctx_);
      },
      {"grads[0] is blocked"});
}

TEST_F(OptimizersTest, HyperparametersTorchRefusesAreRefused) {
  Tensor p = Vec({1}), g = Vec({1}), step = Step();
  ExpectError<TensorException>(
      [&] {
        ops::SgdStep({&p, 1}, {&g, 1}, {}, step, {.lr = -1}, ctx_);
      },
      {"invalid lr"});
  ExpectError<TensorException>(
      [&] {
        ops::SgdStep({&p, 1}, {&g, 1}, {}, step, {.nesterov = true}, ctx_);
      },
      {"nesterov momentum requires momentum > 0 and dampening 0"});
  ExpectError<TensorException>(
      [&] {
        ops::SgdStep({&p, 1}, {&g, 1}, {}, step, {.momentum = 0.9f}, ctx_);
      },
      {"momentum_buffers has 0 tensors"});
  ExpectError<TensorException>(
      [&] {
        ops::AdamWStep({&p, 1}, {&g, 1}, {}, {}, {}, step, {.beta2 = 1}, ctx_);
      },
      {"invalid beta2"});
  ExpectError<TensorException>(
      [&] {
        ops::ClipGradNorm({&g, 1}, 1, 0, false, ctx_);
      },
      {"invalid norm_type"});
}

TEST_F(OptimizersTest, ClipGradNormScalesOnlyAboveTheLimit) {
  Tensor a = Vec({3}), b = Vec({4});
  const Tensor grads[] = {a, b};
  const uint64_t v = a.version();
  EXPECT_FLOAT_EQ(ops::ClipGradNorm(grads, 10, 2, false, ctx_).Data<float>()[0], 5);
  EXPECT_EQ(a.version(), v) << "under the limit nothing is written";
  EXPECT_FLOAT_EQ(ops::ClipGradNorm(grads, 1, 2, false, ctx_).Data<float>()[0], 5);
  EXPECT_NEAR(a.Data<float>()[0], 0.6f, 1e-6);
  EXPECT_NEAR(b.Data<float>()[0], 0.8f, 1e-6);
  EXPECT_GT(a.version(), v);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_NEAR(ops::ClipGradNorm(grads, 10, inf, false, ctx_).Data<float>()[0], 0.8f, 1e-6);
  b.MutableData<float>()[0] = NAN;
  ExpectError<TensorException>([&] { ops::ClipGradNorm(grads, 1, 2, true, ctx_); },
                               {"total norm", "nan", "error_if_nonfinite=0"});
  EXPECT_NEAR(a.Data<float>()[0], 0.6f, 1e-6) << "nothing written";
}

// The max norm is NaN when any gradient element is, wherever it lies: a larger finite value
// after the NaN, in the same tensor or a later one, does not replace it (clip_grad_norm_).
TEST_F(OptimizersTest, ClipGradNormMaxNormKeepsANaNWhereverItIs) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& lists : std::vector<std::vector<std::vector<float>>>{
           {{NAN, 1}}, {{NAN, 0.5f, 3}}, {{NAN}, {1, 2}}, {{1, 2}, {NAN}}, {{1, NAN, 2}}}) {
    std::vector<Tensor> grads;
    for (const auto& v : lists) grads.push_back(Vec(v));
    EXPECT_TRUE(std::isnan(ops::ClipGradNorm(grads, 10, inf, false, ctx_).Data<float>()[0]));
    for (const Tensor& g : grads) {
      for (const float x : Values(g)) EXPECT_TRUE(std::isnan(x)) << "scaled by a NaN, as torch";
    }
    std::vector<Tensor> again;
    for (const auto& v : lists) again.push_back(Vec(v));
    ExpectError<TensorException>([&] { ops::ClipGradNorm(again, 10, inf, true, ctx_); },
                                 {"total norm", "nan"});
    for (size_t t = 0; t < lists.size(); ++t) {
      for (size_t i = 0; i < lists[t].size(); ++i) {
        if (!std::isnan(lists[t][i]))
          EXPECT_EQ(Values(again[t])[i], lists[t][i]) << "refused: unscaled";
      }
    }
  }
}

TEST_F(OptimizersTest, SteadyStateAllocatesNothingButTheResult) {
  std::vector<Tensor> p, g, m, v;
  for (int i = 0; i < 3; ++i) {
    p.push_back(Vec({1, 2, 3}));
    g.push_back(Vec({1, 1, 1}));
    m.push_back(Vec({0, 0, 0}));
    v.push_back(Vec({0, 0, 0}));
  }
  Tensor step = Step();
  ops::AdamWStep(p, g, m, v, {}, step, {}, ctx_).Dispose();
  const int64_t before = pool_.Stats().rented_buffers;
  Tensor t = ops::AdamWStep(p, g, m, v, {}, step, {}, ctx_);
  EXPECT_EQ(pool_.Stats().rented_buffers, before + 1) << "only the step result";
  t.Dispose();
}

}  // namespace
}  // namespace onemodel
