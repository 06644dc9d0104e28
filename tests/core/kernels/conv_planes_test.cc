// Conv2d's direct path for planes of up to four AVX-512 vectors (core/kernels/internal/
// conv_planes.h): forward and both gradients against a brute-force oracle in double within
// MatMulErrorBound over the terms each element sums, on random strides, pads, dilations,
// groups, kernels and channel counts around the blocks of 16; the same bits on any number of
// threads; a NaN reaching exactly the outputs that read it; what the path applies to; the fast
// kernels taking it for dense NCHW operands. Skipped where the CPU has no AVX-512.
#include "core/kernels/internal/conv_planes.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/kernels/accuracy.h"
#include "core/kernels/fast_kernels.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"

namespace onemodel::internal {
namespace {

// A problem's parameters, dims and operands (dense NCHW, weights (K, C / groups, KH, KW)).
struct Problem {
  Conv2dParams p;
  ConvDims d;
  std::vector<float> x, w, bias, g;  // g: an output gradient
  int64_t bias_stride = 1;           // bias holds K * bias_stride floats
};

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

std::vector<float> Values(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = u(rng);
  return v;
}

// A random problem the path applies to: planes of 1 to 64 elements (one to four vectors), 1
// to 25 taps, channel counts per group from 1 to 5 or across the blocks of 16 (16, 17, 33).
Problem RandomProblem(std::mt19937& rng) {
  for (;;) {
    Problem q;
    ConvDims& d = q.d;
    d.h = Pick(rng, 1, 8);
    d.w = Pick(rng, 1, (rng() % 2 == 0 ? 16 : 64) / d.h);
    d.kh = rng() % 6 == 0 ? 5 : Pick(rng, 1, 3);
    d.kw = rng() % 6 == 0 ? 5 : Pick(rng, 1, 3);
    q.p.stride_h = static_cast<int32_t>(Pick(rng, 1, 3));
    q.p.stride_w = static_cast<int32_t>(Pick(rng, 1, 3));
    q.p.dilation_h = static_cast<int32_t>(rng() % 4 == 0 ? 2 : 1);
    q.p.dilation_w = static_cast<int32_t>(rng() % 4 == 0 ? 2 : 1);
    q.p.pad_top = static_cast<int32_t>(Pick(rng, 0, 2));
    q.p.pad_left = static_cast<int32_t>(Pick(rng, 0, 2));
    q.p.pad_bottom = static_cast<int32_t>(Pick(rng, 0, 2));
    q.p.pad_right = static_cast<int32_t>(Pick(rng, 0, 2));
    q.p.groups = static_cast<int32_t>(rng() % 3 == 0 ? Pick(rng, 2, 3) : 1);
    const int64_t wide[] = {16, 17, 33};
    d.groups = q.p.groups;
    d.cg = rng() % 5 == 0 ? wide[rng() % 3] : Pick(rng, 1, 5);
    d.kg = rng() % 4 == 0 ? wide[rng() % 3] : Pick(rng, 1, 5);
    d.c = d.cg * d.groups;
    d.k = d.kg * d.groups;
    d.n = Pick(rng, 1, 4);
    d.oh = ConvOutputExtent(d.h, static_cast<int32_t>(d.kh), q.p.stride_h, q.p.pad_top,
                            q.p.pad_bottom, q.p.dilation_h);
    d.ow = ConvOutputExtent(d.w, static_cast<int32_t>(d.kw), q.p.stride_w, q.p.pad_left,
                            q.p.pad_right, q.p.dilation_w);
    if (!ConvPlanesApply(d, SimdTarget::kAvx3)) continue;
    q.bias_stride = rng() % 2 == 0 ? 1 : 3;
    q.x = Values(rng, d.n * d.c * d.h * d.w);
    q.w = Values(rng, d.k * d.cg * d.kh * d.kw);
    q.bias = Values(rng, d.k * q.bias_stride);
    q.g = Values(rng, d.n * d.k * d.oh * d.ow);
    return q;
  }
}

// The brute-force forward and input gradient in double, with each element's sum of the
// magnitudes of its terms (MatMulErrorBound's magnitude).
struct Oracle {
  std::vector<double> y, y_mag, gx, gx_mag, gw, gw_mag;
};

Oracle Brute(const Problem& q, bool with_bias) {
  const ConvDims& d = q.d;
  Oracle o{std::vector<double>(q.g.size()), std::vector<double>(q.g.size()),
           std::vector<double>(q.x.size()), std::vector<double>(q.x.size()),
           std::vector<double>(q.w.size()), std::vector<double>(q.w.size())};
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t k = 0; k < d.k; ++k) {
      const int64_t g = k / d.kg;
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          const size_t yi = static_cast<size_t>(((n * d.k + k) * d.oh + oy) * d.ow + ox);
          const double b = with_bias ? q.bias[static_cast<size_t>(k * q.bias_stride)] : 0;
          o.y[yi] = b;
          o.y_mag[yi] = std::fabs(b);
          for (int64_t c = 0; c < d.cg; ++c) {
            for (int64_t i = 0; i < d.kh; ++i) {
              for (int64_t j = 0; j < d.kw; ++j) {
                const int64_t iy = oy * q.p.stride_h - q.p.pad_top + i * q.p.dilation_h;
                const int64_t ix = ox * q.p.stride_w - q.p.pad_left + j * q.p.dilation_w;
                if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
                const size_t xi =
                    static_cast<size_t>(((n * d.c + g * d.cg + c) * d.h + iy) * d.w + ix);
                const size_t wi = static_cast<size_t>(((k * d.cg + c) * d.kh + i) * d.kw + j);
                const double wv = q.w[wi];
                o.y[yi] += wv * q.x[xi];
                o.y_mag[yi] += std::fabs(wv * q.x[xi]);
                o.gx[xi] += wv * q.g[yi];
                o.gx_mag[xi] += std::fabs(wv * q.g[yi]);
                o.gw[wi] += double{q.g[yi]} * q.x[xi];
                o.gw_mag[wi] += std::fabs(double{q.g[yi]} * q.x[xi]);
              }
            }
          }
        }
      }
    }
  }
  return o;
}

struct Outputs {
  std::vector<float> y, gx, gw;
};

Outputs RunOn(ThreadPool& pool, const Problem& q, bool with_bias) {
  Outputs r{std::vector<float>(q.g.size()), std::vector<float>(q.x.size()),
            std::vector<float>(q.w.size())};
  ConvPlanesForward(pool, q.d, q.p, q.x.data(), q.w.data(), with_bias ? q.bias.data() : nullptr,
                    q.bias_stride, r.y.data());
  ConvPlanesBackwardInput(pool, q.d, q.p, q.g.data(), q.w.data(), r.gx.data());
  if (ConvPlanesWeightApply(q.d, SimdTarget::kAvx3)) {
    ConvPlanesBackwardWeight(pool, q.d, q.p, q.g.data(), q.x.data(), r.gw.data());
  } else {
    r.gw.clear();  // planes of more than one vector: the unfolded path's
  }
  return r;
}

class ConvPlanesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TargetSupported(SimdTarget::kAvx3)) GTEST_SKIP() << "no AVX-512 on this CPU";
  }
};

TEST_F(ConvPlanesTest, ForwardAndGradientsWithinTheBoundOfABruteForceOracle) {
  std::mt19937 rng(21);
  ThreadPool pool(2);
  for (int t = 0; t < 300; ++t) {
    const Problem q = RandomProblem(rng);
    const bool with_bias = t % 2 == 0;
    const Outputs got = RunOn(pool, q, with_bias);
    const Oracle o = Brute(q, with_bias);
    const int64_t taps = q.d.kh * q.d.kw;
    for (size_t e = 0; e < got.y.size(); ++e) {
      ASSERT_LE(std::fabs(got.y[e] - o.y[e]), *MatMulErrorBound(q.d.cg * taps + 1, o.y_mag[e]))
          << "y element " << e << " case " << t;
    }
    for (size_t e = 0; e < got.gx.size(); ++e) {
      ASSERT_LE(std::fabs(got.gx[e] - o.gx[e]), *MatMulErrorBound(q.d.kg * taps, o.gx_mag[e]))
          << "grad_x element " << e << " case " << t;
    }
    for (size_t e = 0; e < got.gw.size(); ++e) {  // empty where the path does not apply
      ASSERT_LE(std::fabs(got.gw[e] - o.gw[e]),
                *MatMulErrorBound(q.d.n * q.d.oh * q.d.ow, o.gw_mag[e]))
          << "grad_w element " << e << " case " << t;
    }
  }
}

TEST_F(ConvPlanesTest, TheSameBitsOnAnyNumberOfThreads) {
  std::mt19937 rng(22);
  ThreadPool one(1), two(2), three(3);
  for (int t = 0; t < 20; ++t) {
    Problem q = RandomProblem(rng);
    q.d.n = 1 + static_cast<int64_t>(rng() % 70);
    q.x = Values(rng, q.d.n * q.d.c * q.d.h * q.d.w);
    q.g = Values(rng, q.d.n * q.d.k * q.d.oh * q.d.ow);
    const Outputs a = RunOn(one, q, true);
    for (ThreadPool* pool : {&two, &three}) {
      const Outputs b = RunOn(*pool, q, true);
      for (size_t e = 0; e < a.y.size(); ++e) {
        ASSERT_EQ(std::bit_cast<uint32_t>(a.y[e]), std::bit_cast<uint32_t>(b.y[e])) << e;
      }
      for (size_t e = 0; e < a.gx.size(); ++e) {
        ASSERT_EQ(std::bit_cast<uint32_t>(a.gx[e]), std::bit_cast<uint32_t>(b.gx[e])) << e;
      }
      for (size_t e = 0; e < a.gw.size(); ++e) {
        ASSERT_EQ(std::bit_cast<uint32_t>(a.gw[e]), std::bit_cast<uint32_t>(b.gw[e])) << e;
      }
    }
  }
}

// Padding reads +0, not a neighbour's lane: with one NaN in x, exactly the outputs whose
// window holds it and the weights whose taps reach it are NaN; with one NaN in the output
// gradient, exactly the input positions whose taps reach it. (A NaN in the output gradient
// makes every weight gradient of its channel NaN, padding included: +0 times NaN, as in the
// unfolded path.)
TEST_F(ConvPlanesTest, ANaNReachesExactlyTheElementsThatReadIt) {
  std::mt19937 rng(23);
  ThreadPool pool(2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto same_nans = [](const std::vector<float>& got, const std::vector<double>& want,
                            const char* what, int t) {
    for (size_t e = 0; e < got.size(); ++e) {
      ASSERT_EQ(std::isnan(got[e]), std::isnan(want[e])) << what << " " << e << " case " << t;
    }
  };
  for (int t = 0; t < 100; ++t) {
    Problem q = RandomProblem(rng);
    q.x[rng() % q.x.size()] = nan;
    Outputs got = RunOn(pool, q, true);
    Oracle o = Brute(q, true);
    same_nans(got.y, o.y, "y", t);
    if (!got.gw.empty()) same_nans(got.gw, o.gw, "grad_w", t);
    q = RandomProblem(rng);
    q.g[rng() % q.g.size()] = nan;
    got = RunOn(pool, q, true);
    o = Brute(q, true);
    same_nans(got.gx, o.gx, "grad_x", t);
  }
}

TEST(ConvPlanesApplyTest, PlanesOfUpToFourVectorsOnAvx512Only) {
  ConvDims d{.n = 1,
             .c = 8,
             .h = 4,
             .w = 4,
             .k = 16,
             .kh = 3,
             .kw = 3,
             .oh = 4,
             .ow = 4,
             .groups = 1,
             .cg = 8,
             .kg = 16};
  EXPECT_EQ(ConvPlanesApply(d, SimdTarget::kAvx3), TargetSupported(SimdTarget::kAvx3));
  EXPECT_FALSE(ConvPlanesApply(d, SimdTarget::kAvx2));
  EXPECT_FALSE(ConvPlanesApply(d, SimdTarget::kScalar));
  EXPECT_EQ(ConvPlanesWeightApply(d, SimdTarget::kAvx3), TargetSupported(SimdTarget::kAvx3));
  ConvDims e = d;
  e.h = e.w = e.oh = e.ow = 8;  // 64-element planes: four vectors; the weight gradient unfolds
  EXPECT_EQ(ConvPlanesApply(e, SimdTarget::kAvx3), TargetSupported(SimdTarget::kAvx3));
  EXPECT_FALSE(ConvPlanesWeightApply(e, SimdTarget::kAvx3));
  e.w = 9;  // a 72-element input plane
  e.ow = 9;
  EXPECT_FALSE(ConvPlanesApply(e, SimdTarget::kAvx3));
  e = d;
  e.h = e.w = 7;
  e.oh = e.ow = 9;  // an 81-element output plane (pads)
  EXPECT_FALSE(ConvPlanesApply(e, SimdTarget::kAvx3));
  e = d;
  e.kh = 5, e.kw = 10;  // 50 taps
  EXPECT_FALSE(ConvPlanesApply(e, SimdTarget::kAvx3));
  e = d;
  e.cg = e.c = 57;  // 57 x 9 = 513 weights per output plane
  EXPECT_FALSE(ConvPlanesApply(e, SimdTarget::kAvx3));
}

// FastKernels (AVX-512) takes the path for dense NCHW operands: the bits of the direct call.
TEST_F(ConvPlanesTest, TheFastKernelsTakeItForDenseNchw) {
  std::mt19937 rng(24);
  const FastKernels fast(SimdTarget::kAvx3, ThreadPool::Shared());
  BufferPool buffers;
  for (int t = 0; t < 20; ++t) {
    const Problem q = RandomProblem(rng);
    const ConvDims& d = q.d;
    const Shape xs{d.n, d.c, d.h, d.w}, ws{d.k, d.cg, d.kh, d.kw}, ys{d.n, d.k, d.oh, d.ow};
    const auto tensor = [&](const Shape& s, const std::vector<float>& v) {
      Tensor out = Tensor::Empty(s, DType::kFloat, buffers);
      std::copy(v.begin(), v.end(), out.MutableData<float>().begin());
      return out;
    };
    const Tensor x = tensor(xs, q.x), w = tensor(ws, q.w), g = tensor(ys, q.g);
    const Tensor bias =
        tensor(Shape{d.k}, std::vector<float>(q.bias.begin(), q.bias.begin() + d.k));
    Tensor y = Tensor::Empty(ys, DType::kFloat, buffers);
    Tensor gx = Tensor::Empty(xs, DType::kFloat, buffers);
    std::vector<float> scratch(static_cast<size_t>(fast.Conv2dScratchFloats(xs, ws, q.p)));
    fast.Conv2d(x, w, &bias, q.p, y, scratch);
    fast.Conv2dBackwardInput(g, w, q.p, gx, scratch);
    Tensor gw = Tensor::Empty(ws, DType::kFloat, buffers);
    fast.Conv2dBackwardWeight(g, x, q.p, gw, scratch);
    Problem unit_stride = q;
    unit_stride.bias_stride = 1;
    const Outputs want = RunOn(ThreadPool::Shared(), unit_stride, true);
    const auto bits = [](std::span<const float> v) {
      std::vector<uint32_t> b;
      for (float f : v) b.push_back(std::bit_cast<uint32_t>(f));
      return b;
    };
    EXPECT_EQ(bits(y.Data<float>()), bits(want.y)) << "case " << t;
    EXPECT_EQ(bits(gx.Data<float>()), bits(want.gx)) << "case " << t;
    if (!want.gw.empty()) EXPECT_EQ(bits(gw.Data<float>()), bits(want.gw)) << "case " << t;
  }
}

}  // namespace
}  // namespace onemodel::internal
