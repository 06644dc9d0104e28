// LayerNorm's rows in float (core/kernels/internal/layer_norm_rows.h): the header's definition
// bit for bit on every instruction set, with and without streaming stores, at every output
// offset and however the rows are split; close to the double reference, also where a row's
// mean is large against its spread; what the path applies to; FastKernels taking it.
#include "core/kernels/internal/layer_norm_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"

namespace onemodel::internal {
namespace {

constexpr NormIsa kIsas[] = {NormIsa::kBase, NormIsa::kAvx2, NormIsa::kAvx512};
// Row lengths around the 16 lanes and the 64 partial sums, and longer ones.
constexpr int64_t kLengths[] = {1, 2, 15, 16, 17, 63, 64, 65, 127, 301, 1024, 1031};

std::vector<float> Uniform(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// The bit patterns of v (so -0 and +0 differ).
std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

// The header's Sum, written as it reads: one partial per element index mod 64, then the tree.
template <typename F>
float DefinitionSum(const float* x, int64_t n, const F& f) {
  float p[64] = {};
  for (int64_t i = 0; i < n; ++i) p[i % 64] += f(x[i]);
  float q[16];
  for (int j = 0; j < 16; ++j) q[j] = (p[j] + p[16 + j]) + (p[32 + j] + p[48 + j]);
  for (int half = 8; half > 0; half /= 2) {
    for (int j = 0; j < half; ++j) q[j] += q[j + half];
  }
  return q[0];
}

// One row by the header's definition: y, xhat and rstd.
struct Row {
  std::vector<float> y, xhat;
  float rstd;
};
Row DefinitionRow(const float* x, int64_t n, const float* scale, const float* bias, float eps) {
  const float s = x[0];
  const float m = DefinitionSum(x, n, [s](float v) { return v - s; }) / static_cast<float>(n);
  const auto d = [s, m](float v) { return (v - s) - m; };
  const float var =
      DefinitionSum(x, n, [&](float v) { return d(v) * d(v); }) / static_cast<float>(n);
  Row r{{}, {}, static_cast<float>(1.0 / std::sqrt(double{var} + double{eps}))};
  for (int64_t i = 0; i < n; ++i) {
    const float h = d(x[i]) * r.rstd;
    r.xhat.push_back(h);
    r.y.push_back(h * (scale ? scale[i] : 1.0f) + (bias ? bias[i] : 0.0f));
  }
  return r;
}

// A run's outputs: y, xhat and rstd of `rows` rows of `cols`.
struct Outputs {
  std::vector<float> y, xhat, rstd;
};

// Runs rows [0, rows) in the pieces `cuts` on `isa`, y and xhat at the given offsets (in
// floats) into their buffers.
Outputs RunRows(NormIsa isa, bool stream, const std::vector<float>& x, int64_t rows, int64_t cols,
                const float* scale, const float* bias, const std::vector<int64_t>& cuts,
                size_t y_at = 0, size_t xhat_at = 0) {
  const size_t n = static_cast<size_t>(rows * cols);
  std::vector<float> y(n + 8), xhat(n + 8);
  Outputs o{{}, {}, std::vector<float>(static_cast<size_t>(rows))};
  const NormForwardArgs a{.layout = {.groups = rows, .block = cols, .group_stride = cols},
                          .x = x.data(),
                          .scale = scale,
                          .bias = bias,
                          .y = y.data() + y_at,
                          .xhat = xhat.data() + xhat_at,
                          .rstd = o.rstd.data()};
  for (size_t c = 0; c + 1 < cuts.size(); ++c)
    NormalizeRowsFloatOn(isa, a, cuts[c], cuts[c + 1], stream);
  o.y.assign(y.begin() + static_cast<int64_t>(y_at), y.begin() + static_cast<int64_t>(y_at + n));
  o.xhat.assign(xhat.begin() + static_cast<int64_t>(xhat_at),
                xhat.begin() + static_cast<int64_t>(xhat_at + n));
  return o;
}

TEST(LayerNormRowsTest, EveryInstructionSetStreamingOffsetAndSplitGiveTheDefinitionsBits) {
  std::mt19937 rng(7);
  constexpr int64_t kRows = 7;
  for (const int64_t cols : kLengths) {
    const size_t n = static_cast<size_t>(kRows * cols);
    const std::vector<float> x = Uniform(rng, n, -3, 3);
    const std::vector<float> scale = Uniform(rng, static_cast<size_t>(cols), -2, 2),
                             bias = Uniform(rng, static_cast<size_t>(cols), -2, 2);
    for (const bool affine : {true, false}) {
      const float* sc = affine ? scale.data() : nullptr;
      const float* bi = affine ? bias.data() : nullptr;
      Outputs want{{}, {}, {}};
      for (int64_t r = 0; r < kRows; ++r) {
        const Row row = DefinitionRow(x.data() + r * cols, cols, sc, bi, 1e-5f);
        want.y.insert(want.y.end(), row.y.begin(), row.y.end());
        want.xhat.insert(want.xhat.end(), row.xhat.begin(), row.xhat.end());
        want.rstd.push_back(row.rstd);
      }
      for (const NormIsa isa : kIsas) {
        if (!NormIsaSupported(isa)) continue;
        for (const bool stream : {false, true}) {
          // y on each offset from a 16-byte boundary; xhat aligned as y or not.
          for (size_t y_at = 0; y_at < 4; ++y_at) {
            for (const size_t xhat_at : {y_at + 4, (y_at + 1) % 4}) {
              const Outputs got =
                  RunRows(isa, stream, x, kRows, cols, sc, bi, {0, 1, 4, kRows}, y_at, xhat_at);
              const std::string where = "isa " + std::to_string(static_cast<int>(isa)) +
                                        " stream " + std::to_string(stream) + " cols " +
                                        std::to_string(cols) + " affine " + std::to_string(affine) +
                                        " y at " + std::to_string(y_at);
              EXPECT_EQ(Bits(got.y), Bits(want.y)) << where;
              EXPECT_EQ(Bits(got.xhat), Bits(want.xhat)) << where;
              EXPECT_EQ(Bits(got.rstd), Bits(want.rstd)) << where;
            }
          }
        }
      }
    }
  }
}

// Against the reference's double statistics (NormalizeGroupsOn): within a few float roundings
// of values of order 1, for spread-out rows and for rows whose mean is 10^3 to 10^5 times their
// spread (where a float mean would lose most of the deviation's bits).
TEST(LayerNormRowsTest, StaysWithinAFewRoundingsOfTheDoubleReference) {
  std::mt19937 rng(11);
  struct Case {
    float offset, spread;
  };
  for (const Case c :
       {Case{0, 3}, Case{1000, 1e-2f}, Case{1e4f, 1}, Case{-1, 1e-4f}, Case{0, 1e-30f}}) {
    for (const int64_t cols : {int64_t{301}, int64_t{1024}}) {
      constexpr int64_t kRows = 64;
      std::vector<float> x = Uniform(rng, static_cast<size_t>(kRows * cols), -1, 1);
      for (float& v : x) v = c.offset + c.spread * v;
      const std::vector<float> scale = Uniform(rng, static_cast<size_t>(cols), -1, 1),
                               bias = Uniform(rng, static_cast<size_t>(cols), -1, 1);
      const Outputs got =
          RunRows(BestNormIsa(), false, x, kRows, cols, scale.data(), bias.data(), {0, kRows});
      std::vector<float> y(x.size()), xhat(x.size()), rstd(kRows);
      NormalizeGroupsOn(NormIsa::kBase,
                        {.layout = {.groups = kRows, .block = cols, .group_stride = cols},
                         .x = x.data(),
                         .scale = scale.data(),
                         .bias = bias.data(),
                         .y = y.data(),
                         .xhat = xhat.data(),
                         .rstd = rstd.data()},
                        0, kRows, false);
      // Uniform rows give |xhat| < 2 and |y| < 3: 2^-20 is 4 units in the last place of
      // values in [1, 2), 2^-19 as many of values in [2, 4). Measured: 3.6e-7 and 4.8e-7.
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_NEAR(got.xhat[i], xhat[i], 0x1p-20) << "offset " << c.offset << " at " << i;
        ASSERT_NEAR(got.y[i], y[i], 0x1p-19) << "offset " << c.offset << " at " << i;
      }
      for (size_t r = 0; r < rstd.size(); ++r) {
        EXPECT_NEAR(got.rstd[r] / rstd[r], 1.0, 1e-6) << "offset " << c.offset << " row " << r;
      }
    }
  }
}

// A NaN or an infinity anywhere in a row makes that row's outputs NaN, as in the reference;
// the other rows are untouched by it.
TEST(LayerNormRowsTest, ANonFiniteElementMakesItsRowNaN) {
  std::mt19937 rng(3);
  constexpr int64_t kRows = 4, kCols = 100;
  const float kInf = std::numeric_limits<float>::infinity();
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf}) {
    for (const int64_t at : {int64_t{0}, int64_t{37}, kCols - 1}) {
      std::vector<float> x = Uniform(rng, kRows * kCols, -1, 1);
      x[static_cast<size_t>(kCols + at)] = bad;  // row 1
      const Outputs got =
          RunRows(BestNormIsa(), false, x, kRows, kCols, nullptr, nullptr, {0, kRows});
      for (int64_t i = 0; i < kRows * kCols; ++i) {
        EXPECT_EQ(std::isnan(got.y[static_cast<size_t>(i)]), i / kCols == 1)
            << "bad " << bad << " at " << at << ", element " << i;
      }
    }
  }
}

TEST(LayerNormRowsTest, AppliesToLayerNormShapedRowsOnly) {
  const float v[4] = {};
  float out[4];
  const NormForwardArgs rows{
      .layout = {.groups = 2, .block = 2, .group_stride = 2}, .x = v, .y = out};
  EXPECT_TRUE(FloatRowsApply(rows));
  NormForwardArgs a = rows;
  a.center = false;  // RMSNorm
  EXPECT_FALSE(FloatRowsApply(a));
  a = rows;
  a.mean = v;  // given statistics (BatchNorm2d in inference)
  a.var = v;
  EXPECT_FALSE(FloatRowsApply(a));
  a = rows;
  a.running_mean = out;  // BatchNorm2d in training
  a.running_var = out;
  EXPECT_FALSE(FloatRowsApply(a));
  a = rows;
  a.layout.blocks = 2;  // a group of several blocks
  a.layout.block_stride = 4;
  EXPECT_FALSE(FloatRowsApply(a));
  a = rows;
  a.layout.affine_per_group = true;
  EXPECT_FALSE(FloatRowsApply(a));
}

// FastKernels runs LayerNorm's rows through this path, split over its pool, streaming or not.
TEST(LayerNormRowsTest, FastKernelsGiveTheFloatRowsBits) {
  std::mt19937 rng(9);
  constexpr int64_t kRows = 67, kCols = 301;
  const std::vector<float> x = Uniform(rng, kRows * kCols, -3, 3);
  const std::vector<float> scale = Uniform(rng, kCols, -1, 1), bias = Uniform(rng, kCols, -1, 1);
  const Outputs want =
      RunRows(NormIsa::kBase, false, x, kRows, kCols, scale.data(), bias.data(), {0, kRows});
  for (const int64_t streaming_min_bytes : {int64_t{0}, int64_t{1} << 40}) {
    const FastKernels fast(BestTarget(), ThreadPool::Shared(), streaming_min_bytes);
    std::vector<float> y(kRows * kCols + 1);
    fast.Normalize({.layout = {.groups = kRows, .block = kCols, .group_stride = kCols},
                    .x = x.data(),
                    .scale = scale.data(),
                    .bias = bias.data(),
                    .y = y.data() + 1});
    y.erase(y.begin());
    EXPECT_EQ(Bits(y), Bits(want.y)) << "streaming from " << streaming_min_bytes << " bytes";
  }
}

}  // namespace
}  // namespace onemodel::internal
