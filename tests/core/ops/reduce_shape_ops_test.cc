// Forward values, gradients (tables and finite differences) and input checks of ReduceMax,
// ReduceMin, ArgMax, ArgMin, Pad, Tile and CumSum: NaN, ties, strided and reversed views,
// empty tensors and empty reductions.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/simd_targets.h"
#include "core/ops/cumsum.h"
#include "core/ops/internal/sum_runs.h"
#include "core/ops/pad_tile.h"
#include "core/ops/reduce.h"
#include "core/ops/reduce_extrema.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"
#include "tests/core/ops/grad_check.h"

namespace onemodel {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Expects equal element lists, where NaN equals NaN.
void ExpectSameFloats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))
        << "element " << i << ": " << got[i] << " != " << want[i];
  }
}

class ReduceShapeOpsTest : public ExactOpTest {
 protected:
  std::vector<int64_t> Indices(const Tensor& t) {
    EXPECT_EQ(t.dtype(), DType::kInt64);
    const Tensor c = t.Contiguous(pool_);
    return {c.Data<int64_t>().begin(), c.Data<int64_t>().end()};
  }
  // Distinct values 0.1 apart in a scrambled order (no near-ties for finite differences).
  Tensor Distinct(const Shape& s) {
    std::vector<float> v(static_cast<size_t>(s.ElementCount()));
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = static_cast<float>((i * 37) % v.size()) * 0.1f - 1.0f;
    }
    return Vec(v, s);
  }

  std::mt19937 rng_{17};
};

using F = std::vector<float>;
using I = std::vector<int64_t>;

// ---- Sum ----

// Each output's elements are added in row-major order in double, whichever group of output
// elements is summed side by side (8 at a time, then the rest): 2^60, 1, -2^60, v gives v in
// that order (2^60 + 1 rounds to 2^60), 0 pairwise or reversed, and another output's v when
// sums are mixed up.
TEST_F(ReduceShapeOpsTest, SumAddsEachOutputsElementsInOrder) {
  const float big = 0x1p60f;
  F rows(4 * 11), want(11);
  for (size_t u = 0; u < 11; ++u) {
    want[u] = static_cast<float>(u + 1);
    for (size_t q = 0; q < 4; ++q) rows[q * 11 + u] = F{big, 1, -big, want[u]}[q];
  }
  const std::array<int, 1> axis0{0};
  EXPECT_EQ(Values(ops::Sum(Vec(rows, Shape{4, 11}), axis0, false, ctx_)), want);
  F columns(11 * 4);  // the same as an (11, 4) tensor, read through its transpose
  for (size_t q = 0; q < 4; ++q) {
    for (size_t u = 0; u < 11; ++u) columns[u * 4 + q] = rows[q * 11 + u];
  }
  const Tensor t = Vec(columns, Shape{11, 4}).Permute({1, 0});
  EXPECT_EQ(Values(ops::Sum(t, axis0, false, ctx_)), want);
  // A convolution's bias gradient: (N, C, H, W) = (3, 10, 2, 2) summed over N, H and W.
  F nchw(3 * 10 * 4, 0.0f);
  for (size_t c = 0; c < 10; ++c) {
    for (size_t q = 0; q < 4; ++q) nchw[c * 4 + q] = F{big, 1, -big, static_cast<float>(c + 1)}[q];
  }
  const std::array<int, 3> bias_axes{0, 2, 3};
  EXPECT_EQ(Values(ops::Sum(Vec(nchw, Shape{3, 10, 2, 2}), bias_axes, false, ctx_)),
            (F{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

// Eight runs summed side by side (Sum's fast inner loop for unit-stride runs, each supported
// instruction set): every run's additions in its own order, so the scalar loop's bits. Values
// where the order shows (2^60 against 1, infinities, NaN), run lengths 0-41 (partial blocks of
// 8), gaps between the runs and runs in reverse memory order.
TEST_F(ReduceShapeOpsTest, EightRunsSideBySideAddInEachRunsOrder) {
  std::mt19937 rng(23);
  const auto value = [&] {
    switch (rng() % 16) {
      case 0:
        return 0x1p60f;
      case 1:
        return -0x1p60f;
      case 2:
        return rng() % 2 ? kInf : -kInf;
      case 3:
        return rng() % 8 ? 1.0f : kNaN;
      default:
        return std::uniform_real_distribution<float>(-4, 4)(rng);
    }
  };
  int checked = 0;
  for (SimdTarget target : CompiledTargets()) {
    if (!TargetSupported(target)) continue;
    for (int64_t m = 0; m <= 41; ++m) {
      for (int64_t step : {m, m + 3, -(m + 5)}) {
        std::vector<float> data(static_cast<size_t>(8 * (std::abs(step) + m) + 8));
        for (float& v : data) v = value();
        const float* p = data.data() + (step < 0 ? -7 * step : 0);
        double want[8], got[8];
        for (int u = 0; u < 8; ++u) want[u] = got[u] = static_cast<double>(u) - 3.5;
        for (int64_t q = 0; q < m; ++q) {
          for (int u = 0; u < 8; ++u) want[u] += p[u * step + q];
        }
        ops::internal::AddEightRunsOn(target, p, m, step, got);
        for (int u = 0; u < 8; ++u) {
          EXPECT_TRUE(std::bit_cast<uint64_t>(got[u]) == std::bit_cast<uint64_t>(want[u]) ||
                      (std::isnan(got[u]) && std::isnan(want[u])))
              << SimdTargetName(target) << " m " << m << " step " << step << " run " << u << ": "
              << got[u] << " != " << want[u];
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 42 * 3);
}

// ---- ReduceMax / ReduceMin ----

TEST_F(ReduceShapeOpsTest, ReduceMaxAndMinLetNaNWinAndTheFirstOfEqualsTakeTheGradient) {
  const Tensor x = Vec({1, 3, 3, 2, kNaN, 5, kNaN, -kInf}, Shape{2, 4});
  const int axis1[] = {1};
  ExpectSameFloats(Values(ops::ReduceMax(x, axis1, false, ctx_)), F{3, kNaN});
  ExpectSameFloats(Values(ops::ReduceMin(x, axis1, false, ctx_)), F{1, kNaN});
  // g = 1, 2: the first 3 (index 1) and the first NaN (index 4) get it; every other 0.
  EXPECT_EQ(GradOf(x, [&](const Tensor& t) { return ops::ReduceMax(t, axis1, false, ctx_); }),
            (F{0, 1, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(GradOf(x, [&](const Tensor& t) { return ops::ReduceMin(t, axis1, false, ctx_); }),
            (F{1, 0, 0, 0, 2, 0, 0, 0}));
  const Tensor m = ops::ReduceMax(x.WithRequiresGrad(), axis1, true, ctx_);
  EXPECT_EQ(m.shape(), (Shape{2, 1}));
  EXPECT_EQ(GradFn(m)->op(), OpKind::kReduceMax);
}

TEST_F(ReduceShapeOpsTest, ReduceMaxOverSeveralAxesMatchesALoopOverEveryElement) {
  const Tensor x = Distinct(Shape{2, 3, 4});
  const int axes[] = {0, -1};
  const Tensor m = ops::ReduceMax(x, axes, true, ctx_);
  EXPECT_EQ(m.shape(), (Shape{1, 3, 1}));
  F want(3, -kInf);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c)
        want[static_cast<size_t>(b)] =
            std::max(want[static_cast<size_t>(b)], x.At<float>({a, b, c}));
  EXPECT_EQ(Values(m), want);
  const Tensor all = ops::ReduceMin(x, {}, false, ctx_);
  EXPECT_EQ(all.shape(), Shape{});
  EXPECT_FLOAT_EQ(all.At<float>({}), -1.0f);
  // A scalar reduces to itself.
  EXPECT_EQ(Values(ops::ReduceMax(Vec({4}, Shape{}), {}, false, ctx_)), (F{4}));
}

TEST_F(ReduceShapeOpsTest, ReduceMaxReadsReversedViewsInTheirOwnOrder) {
  const Tensor x = Vec({1, 3, 3, 2}, Shape{4});
  const Tensor reversed = x.Slice(0, 3, -5, -1);  // {2, 3, 3, 1}, stride -1
  EXPECT_EQ(Values(ops::ReduceMax(reversed, {}, false, ctx_)), (F{3}));
  // The first 3 of the view is x[2]: its gradient lands there, seen in the view's order.
  EXPECT_EQ(GradOf(reversed, [&](const Tensor& t) { return ops::ReduceMax(t, {}, false, ctx_); }),
            (F{0, 1, 0, 0}));
  const Tensor m = Vec({1, 9, 4, 2, 8, 3}, Shape{2, 3}).Transpose(0, 1);  // [[1,2],[9,8],[4,3]]
  const int axis1[] = {1};
  EXPECT_EQ(Values(ops::ReduceMin(m, axis1, false, ctx_)), (F{1, 8, 3}));
}

TEST_F(ReduceShapeOpsTest, EmptyReductionsGiveTheIdentityAndEmptyGradients) {
  const Tensor x = Filled(Shape{0, 3}, 1);
  const int axis0[] = {0}, axis1[] = {1};
  EXPECT_EQ(Values(ops::ReduceMax(x, axis0, false, ctx_)), (F{-kInf, -kInf, -kInf}));
  EXPECT_EQ(Values(ops::ReduceMin(x, axis0, false, ctx_)), (F{kInf, kInf, kInf}));
  EXPECT_EQ(ops::ReduceMax(x, axis1, true, ctx_).shape(), (Shape{0, 1}));
  const Tensor tracked = x.WithRequiresGrad();
  const Tensor y = ops::ReduceMax(tracked, axis0, false, ctx_);
  const Tensor g = Filled(Shape{3}, 1);
  EXPECT_EQ(Backward(y, &g, std::vector<Tensor>{tracked}, ctx_)[0].shape(), (Shape{0, 3}));
}

TEST_F(ReduceShapeOpsTest, ReduceMaxRefusesBadAxesAndOtherTypes) {
  const Tensor x = Filled(Shape{2, 3}, 1);
  const int bad[] = {2}, twice[] = {1, -1};
  ExpectError<TensorShapeException>([&] { ops::ReduceMax(x, bad, false, ctx_); },
                                    {"ReduceMax", "axis 2", "out of range"});
  ExpectError<TensorShapeException>([&] { ops::ReduceMin(x, twice, false, ctx_); },
                                    {"ReduceMin", "given twice"});
  const Tensor ints = Tensor::Empty(Shape{2}, DType::kInt64, pool_, true);
  ExpectError<TensorTypeException>([&] { ops::ReduceMax(ints, {}, false, ctx_); },
                                   {"ReduceMax", "Cast it to FLOAT"});
}

// ---- ArgMax / ArgMin ----

TEST_F(ReduceShapeOpsTest, ArgMaxAndArgMinGiveTheFirstIndexNaNCountsAsTheExtremum) {
  const Tensor x = Vec({1, 3, 3, 2, kNaN, 5, kNaN, -kInf}, Shape{2, 4}).WithRequiresGrad();
  const Tensor a = ops::ArgMax(x, 1, false, false, ctx_);
  EXPECT_EQ(a.shape(), (Shape{2}));
  EXPECT_FALSE(a.requires_grad());
  EXPECT_EQ(Indices(a), (I{1, 0}));
  EXPECT_EQ(Indices(ops::ArgMax(x, -1, false, true, ctx_)), (I{2, 2}));  // select_last_index
  EXPECT_EQ(Indices(ops::ArgMin(x, 1, false, false, ctx_)), (I{0, 0}));
  EXPECT_EQ(Indices(ops::ArgMin(x, 1, false, true, ctx_)), (I{0, 2}));
  const Tensor col = ops::ArgMax(x, 0, true, false, ctx_);
  EXPECT_EQ(col.shape(), (Shape{1, 4}));
  EXPECT_EQ(Indices(col), (I{1, 1, 1, 0}));
  EXPECT_EQ(Indices(ops::ArgMin(Filled(Shape{3, 2}, 7), 0, false, true, ctx_)), (I{2, 2}));
}

TEST_F(ReduceShapeOpsTest, ArgMaxReadsStridedViewsAndRefusesAnEmptyAxis) {
  const Tensor m = Vec({1, 9, 4, 2, 8, 3}, Shape{2, 3});
  EXPECT_EQ(Indices(ops::ArgMax(m.Transpose(0, 1), 0, false, false, ctx_)), (I{1, 1}));
  EXPECT_EQ(Indices(ops::ArgMin(m.Slice(1, 2, -4, -1), 1, false, false, ctx_)), (I{2, 2}));
  EXPECT_EQ(ops::ArgMax(Filled(Shape{0, 3}, 1), 1, false, false, ctx_).shape(), (Shape{0}));
  ExpectError<TensorShapeException>(
      [&] {
        ops::ArgMax(Filled(Shape{2, 0}, 1), 1, false, false, ctx_);
      },
      {"ArgMax", "axis 1", "[2, 0]", "is empty"});
  ExpectError<TensorShapeException>([&] { ops::ArgMin(m, 2, false, false, ctx_); },
                                    {"ArgMin", "out of range"});
}

// ---- Pad ----

TEST_F(ReduceShapeOpsTest, PadInEveryModeMatchesItsTable) {
  const Tensor x = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const int64_t constant[] = {1, 0, 0, 2};
  const Tensor c = ops::Pad(x, constant, ops::PadMode::kConstant, 9, ctx_);
  EXPECT_EQ(c.shape(), (Shape{3, 5}));
  EXPECT_EQ(Values(c), (F{9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9}));
  const int64_t width[] = {0, 2, 0, 1};
  EXPECT_EQ(Values(ops::Pad(x, width, ops::PadMode::kReflect, 0, ctx_)),
            (F{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
  EXPECT_EQ(Values(ops::Pad(x, width, ops::PadMode::kWrap, 0, ctx_)),
            (F{2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4}));
  const int64_t edge[] = {1, 1, 0, 1};
  EXPECT_EQ(Values(ops::Pad(x, edge, ops::PadMode::kEdge, 0, ctx_)),
            (F{1, 1, 2, 3, 3, 1, 1, 2, 3, 3, 4, 4, 5, 6, 6}));
  EXPECT_EQ(ops::ParsePadMode("edge"), ops::PadMode::kEdge);
}

TEST_F(ReduceShapeOpsTest, NegativePadsCropBeforeTheModeReads) {
  const Tensor x = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const int64_t crop[] = {0, -1, 0, 1};
  EXPECT_EQ(Values(ops::Pad(x, crop, ops::PadMode::kConstant, 0, ctx_)), (F{2, 3, 0, 5, 6, 0}));
  EXPECT_EQ(Values(ops::Pad(x, crop, ops::PadMode::kReflect, 0, ctx_)), (F{2, 3, 2, 5, 6, 5}));
  const int64_t all[] = {-1, -3, 0, 0};
  EXPECT_EQ(ops::Pad(x, all, ops::PadMode::kConstant, 0, ctx_).shape(), (Shape{1, 0}));
}

TEST_F(ReduceShapeOpsTest, PadReadsStridedAndEmptyInputs) {
  const Tensor x = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const int64_t pads[] = {0, 1, 0, 0};  // x^T reversed along rows: [[3, 6], [2, 5], [1, 4]]
  EXPECT_EQ(
      Values(ops::Pad(x.Transpose(0, 1).Slice(0, 2, -4, -1), pads, ops::PadMode::kEdge, 0, ctx_)),
      (F{3, 3, 6, 2, 2, 5, 1, 1, 4}));
  const int64_t grow[] = {1, 0, 0, 0};
  EXPECT_EQ(Values(ops::Pad(Filled(Shape{0, 2}, 1), grow, ops::PadMode::kConstant, 7, ctx_)),
            (F{7, 7}));
  EXPECT_EQ(Values(ops::Pad(Vec({5}, Shape{}), {}, ops::PadMode::kReflect, 0, ctx_)), (F{5}));
}

TEST_F(ReduceShapeOpsTest, PadGradientSumsEveryCopyOfAnElement) {
  const Tensor x = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const int64_t width[] = {0, 2, 0, 1};  // sources per row: 2 1 0 1 2 1; g = 1..12
  EXPECT_EQ(
      GradOf(x,
             [&](const Tensor& t) { return ops::Pad(t, width, ops::PadMode::kReflect, 0, ctx_); }),
      (F{3, 12, 6, 9, 30, 18}));
  const int64_t crop[] = {0, -1, 0, 1};  // the cropped column gets nothing, the constant gives
  EXPECT_EQ(
      GradOf(x,
             [&](const Tensor& t) { return ops::Pad(t, crop, ops::PadMode::kConstant, 0, ctx_); }),
      (F{0, 1, 2, 0, 4, 5}));
}

TEST_F(ReduceShapeOpsTest, PadRefusesWhatItCannotPad) {
  const Tensor x = Filled(Shape{2, 3}, 1);
  const int64_t three[] = {1, 1, 1};
  ExpectError<TensorShapeException>([&] { ops::Pad(x, three, ops::PadMode::kConstant, 0, ctx_); },
                                    {"Pad", "3 values", "2 * rank = 4", "x1_begin"});
  const int64_t deep[] = {0, 3, 0, 0};
  ExpectError<TensorShapeException>([&] { ops::Pad(x, deep, ops::PadMode::kReflect, 0, ctx_); },
                                    {"Pad", "axis 1", "reflect", "below", "edge or constant"});
  const int64_t crop[] = {-2, 0, -1, 0};
  ExpectError<TensorShapeException>([&] { ops::Pad(x, crop, ops::PadMode::kConstant, 0, ctx_); },
                                    {"Pad", "axis 0", "crop more"});
  const int64_t grow[] = {1, 0, 0, 0};
  ExpectError<TensorShapeException>(
      [&] {
        ops::Pad(Filled(Shape{0, 2}, 1), grow, ops::PadMode::kEdge, 0, ctx_);
      },
      {"Pad", "empty", "constant padding"});
  ExpectError<TensorException>([] { ops::ParsePadMode("mirror"); },
                               {"mirror", "constant, reflect, edge or wrap"});
}

// ---- Tile ----

TEST_F(ReduceShapeOpsTest, TileRepeatsEachAxisAndSumsTheTilesGradients) {
  const Tensor x = Vec({1, 2, 3, 4}, Shape{2, 2});
  const int64_t reps[] = {2, 3};
  const Tensor t = ops::Tile(x, reps, ctx_);
  EXPECT_EQ(t.shape(), (Shape{4, 6}));
  EXPECT_EQ(Values(t).size(), 24u);
  EXPECT_EQ(Values(ops::Tile(x.Transpose(0, 1), reps, ctx_)).front(), 1);
  const int64_t twice[] = {1, 2};
  EXPECT_EQ(Values(ops::Tile(Vec({1, 2, 3}, Shape{1, 3}), twice, ctx_)), (F{1, 2, 3, 1, 2, 3}));
  // g = 1..6 over (1, 6): [1 + 4, 2 + 5, 3 + 6].
  EXPECT_EQ(GradOf(Vec({1, 2, 3}, Shape{1, 3}),
                   [&](const Tensor& v) { return ops::Tile(v, twice, ctx_); }),
            (F{5, 7, 9}));
  const int64_t reversed[] = {2};  // {3, 2, 1} twice
  EXPECT_EQ(Values(ops::Tile(Vec({1, 2, 3}, Shape{3}).Slice(0, 2, -4, -1), reversed, ctx_)),
            (F{3, 2, 1, 3, 2, 1}));
  const int64_t zero[] = {0, 2};
  EXPECT_EQ(ops::Tile(x, zero, ctx_).shape(), (Shape{0, 4}));
  EXPECT_EQ(GradOf(x, [&](const Tensor& v) { return ops::Tile(v, zero, ctx_); }), (F{0, 0, 0, 0}));
}

TEST_F(ReduceShapeOpsTest, TileRefusesAWrongCountOrANegativeRepeat) {
  const Tensor x = Filled(Shape{2, 2}, 1);
  const int64_t one[] = {2}, negative[] = {1, -1};
  ExpectError<TensorShapeException>([&] { ops::Tile(x, one, ctx_); },
                                    {"Tile", "1 values", "one per axis (2)"});
  ExpectError<TensorShapeException>([&] { ops::Tile(x, negative, ctx_); },
                                    {"Tile", "axis 1", "-1", "from 0"});
}

// ---- CumSum ----

TEST_F(ReduceShapeOpsTest, CumSumExclusiveAndReverseMatchTheirTables) {
  const Tensor x = Vec({1, 2, 3, 4}, Shape{4});
  EXPECT_EQ(Values(ops::CumSum(x, 0, false, false, ctx_)), (F{1, 3, 6, 10}));
  EXPECT_EQ(Values(ops::CumSum(x, 0, true, false, ctx_)), (F{0, 1, 3, 6}));
  EXPECT_EQ(Values(ops::CumSum(x, -1, false, true, ctx_)), (F{10, 9, 7, 4}));
  EXPECT_EQ(Values(ops::CumSum(x, 0, true, true, ctx_)), (F{9, 7, 4, 0}));
  const Tensor m = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(Values(ops::CumSum(m, 0, false, false, ctx_)), (F{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(Values(ops::CumSum(m.Transpose(0, 1), 0, false, false, ctx_)), (F{1, 4, 3, 9, 6, 15}));
  EXPECT_EQ(Values(ops::CumSum(m.Slice(1, 2, -4, -1), 1, false, false, ctx_)),
            (F{3, 5, 6, 6, 11, 15}));
  ExpectSameFloats(Values(ops::CumSum(Vec({1, kNaN, 2}, Shape{3}), 0, false, false, ctx_)),
                   F{1, kNaN, kNaN});
}

// A scalar has no axis: the message says so instead of "valid: 0 to -1".
TEST_F(ReduceShapeOpsTest, AnAxisOfAScalarIsRefusedAsAScalar) {
  ExpectError<TensorShapeException>(
      [&] { ops::CumSum(Filled(Shape{}, 1), 0, false, false, ctx_); },
      {"CumSum: axis 0 does not exist: the input is a scalar (rank 0)", "Reshape it to [1]"});
}

TEST_F(ReduceShapeOpsTest, CumSumAccumulatesInDouble) {
  // In float, 1e8 + 1 rounds to 1e8 and the third sum would be 0; in double it is 1.
  const Tensor x = Vec({1e8f, 1, -1e8f, 1}, Shape{4});
  EXPECT_EQ(Values(ops::CumSum(x, 0, false, false, ctx_)), (F{1e8f, 1e8f, 1, 2}));
}

TEST_F(ReduceShapeOpsTest, CumSumGradientRunsTheOtherWayAndTakesEmptyInputs) {
  const Tensor x = Vec({1, 2, 3, 4}, Shape{4});
  // g = 1, 2, 3, 4.
  EXPECT_EQ(GradOf(x, [&](const Tensor& t) { return ops::CumSum(t, 0, false, false, ctx_); }),
            (F{10, 9, 7, 4}));
  EXPECT_EQ(GradOf(x, [&](const Tensor& t) { return ops::CumSum(t, 0, true, false, ctx_); }),
            (F{9, 7, 4, 0}));
  EXPECT_EQ(GradOf(x, [&](const Tensor& t) { return ops::CumSum(t, 0, false, true, ctx_); }),
            (F{1, 3, 6, 10}));
  EXPECT_EQ(ops::CumSum(Filled(Shape{3, 0}, 1), 1, false, false, ctx_).shape(), (Shape{3, 0}));
  EXPECT_EQ(ops::CumSum(Filled(Shape{0, 3}, 1), 1, true, true, ctx_).shape(), (Shape{0, 3}));
  ExpectError<TensorShapeException>([&] { ops::CumSum(x, 1, false, false, ctx_); },
                                    {"CumSum", "axis 1", "out of range"});
}

// ---- finite differences ----

TEST_F(ReduceShapeOpsTest, GradientsMatchFiniteDifferences) {
  using ops_test::ExpectGradientsMatch;
  const Tensor x = Distinct(Shape{2, 3, 4});
  const std::vector<std::vector<int>> axes = {{}, {0}, {1, 2}, {-1}};
  for (const auto& ax : axes) {
    for (bool keep : {false, true}) {
      const auto max = [&](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::ReduceMax(in[0], ax, keep, c);
      };
      const auto min = [&](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::ReduceMin(in[0], ax, keep, c);
      };
      ExpectGradientsMatch("ReduceMax", max, {x}, ctx_, rng_);
      ExpectGradientsMatch("ReduceMin", min, {x.Transpose(0, 2).Slice(1, 2, -4, -1)}, ctx_, rng_);
    }
  }
  const Tensor r = ops_test::Random(Shape{3, 4}, rng_, pool_);
  for (ops::PadMode mode : {ops::PadMode::kConstant, ops::PadMode::kReflect, ops::PadMode::kEdge,
                            ops::PadMode::kWrap}) {
    ExpectGradientsMatch(
        "Pad",
        [mode](const std::vector<Tensor>& in, const OpContext& c) {
          const int64_t pads[] = {2, -1, 1, 2};
          return ops::Pad(in[0], pads, mode, 0.5f, c);
        },
        {r.Slice(1, 3, -5, -1)}, ctx_, rng_);
  }
  ExpectGradientsMatch(
      "Tile",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const int64_t reps[] = {2, 1, 3};
        return ops::Tile(in[0], reps, c);
      },
      {x.Transpose(0, 1)}, ctx_, rng_);
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      ExpectGradientsMatch(
          "CumSum",
          [=](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::CumSum(in[0], 1, exclusive, reverse, c);
          },
          {r.Transpose(0, 1)}, ctx_, rng_);
    }
  }
}

}  // namespace
}  // namespace onemodel
