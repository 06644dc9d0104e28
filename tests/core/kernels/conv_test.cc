// Conv2d kernels over the variant table (kernel_variants.h): forward, input gradient and
// weight gradient on random shapes, parameters (asymmetric pads, dilation, groups, depthwise,
// stride > kernel, 1x1 and 7x7, outputs cut short as ConvTranspose2d's) and layouts (permuted,
// reversed, with gaps). Every variant against a brute-force oracle written here (the forward sums
// in the reference's order, so the reference matches it bit for bit; the gradients scatter where
// the reference gathers); every fast variant against the reference within MatMulErrorBound over the
// terms each output sums (docs/kernels.md). Outputs sit inside sentinel memory that must survive.
// Every other problem is NHWC with keep_layout (activations and gradients dense NHWC, outputs
// too), which the fast kernels give to oneDNN.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "core/kernels/accuracy.h"
#include "core/kernels/conv_cache.h"
#include "core/kernels/internal/conv_planes.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/memory_budget.h"
#include "tests/core/kernels/kernel_test_util.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

using kernel_test::Placed;
using kernel_test::Variant;

// One random problem: parameters and the shapes they imply.
struct Problem {
  Conv2dParams p;
  int64_t n, c, h, w, k, kh, kw, oh, ow;
  bool bias;
  bool nhwc = false;       // x, the output gradient, y and grad_x dense NHWC; keep_layout = 1
  bool strided_x = false;  // with nhwc: x permuted, reversed or with gaps instead (im2col)
};

Problem RandomProblem(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  for (;;) {
    Problem q{};
    q.kh = rng() % 8 == 0 ? 7 : pick(1, 3);
    q.kw = rng() % 8 == 0 ? 7 : pick(1, 3);
    const int32_t groups = static_cast<int32_t>(rng() % 3 == 0 ? pick(2, 3) : 1);
    const bool depthwise = rng() % 5 == 0;
    q.c = depthwise ? pick(1, 4) : groups * pick(1, 3);
    q.p.groups = depthwise ? static_cast<int32_t>(q.c) : groups;
    q.k = q.p.groups * pick(1, 3);
    q.n = pick(1, 3);
    q.h = pick(1, 12);
    q.w = pick(1, 12);
    q.p.stride_h = static_cast<int32_t>(pick(1, 4));
    q.p.stride_w = static_cast<int32_t>(pick(1, 4));
    q.p.dilation_h = static_cast<int32_t>(rng() % 3 == 0 ? 2 : 1);
    q.p.dilation_w = static_cast<int32_t>(rng() % 3 == 0 ? 2 : 1);
    q.p.pad_top = static_cast<int32_t>(pick(0, 3));
    q.p.pad_left = static_cast<int32_t>(pick(0, 3));
    q.p.pad_bottom = static_cast<int32_t>(pick(0, 3));
    q.p.pad_right = static_cast<int32_t>(pick(0, 3));
    q.bias = rng() % 2 == 0;
    q.oh = ConvOutputExtent(q.h, static_cast<int32_t>(q.kh), q.p.stride_h, q.p.pad_top,
                            q.p.pad_bottom, q.p.dilation_h);
    q.ow = ConvOutputExtent(q.w, static_cast<int32_t>(q.kw), q.p.stride_w, q.p.pad_left,
                            q.p.pad_right, q.p.dilation_w);
    // Sometimes fewer output rows or columns than the formula gives: the kernels take the
    // output's extents (ConvTranspose2d with output_padding at or above the stride).
    if (q.oh >= 2 && rng() % 5 == 0) --q.oh;
    if (q.ow >= 2 && rng() % 5 == 0) --q.ow;
    q.nhwc = rng() % 2 == 0;
    q.p.keep_layout = q.nhwc ? 1 : 0;
    if (q.oh >= 1 && q.ow >= 1) return q;
  }
}

// Calls f(n, k, oy, ox, c, i, j, y, x) for every multiply-add of the convolution: output
// (n, k, oy, ox) reads input channel c (absolute) at (y, x) through tap (i, j).
template <typename F>
void ForEachTap(const Problem& q, F&& f) {
  const int64_t cg = q.c / q.p.groups, kg = q.k / q.p.groups;
  for (int64_t n = 0; n < q.n; ++n)
    for (int64_t k = 0; k < q.k; ++k)
      for (int64_t oy = 0; oy < q.oh; ++oy)
        for (int64_t ox = 0; ox < q.ow; ++ox)
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < q.kh; ++i)
              for (int64_t j = 0; j < q.kw; ++j) {
                const int64_t y = oy * q.p.stride_h + i * q.p.dilation_h - q.p.pad_top;
                const int64_t x = ox * q.p.stride_w + j * q.p.dilation_w - q.p.pad_left;
                if (y >= 0 && y < q.h && x >= 0 && x < q.w)
                  f(n, k, oy, ox, k / kg * cg + c, i, j, y, x);
              }
}

Placed Random(const Shape& shape, std::mt19937& rng, Allocator& pool) {
  Placed t = kernel_test::RandomLayout(shape, rng, pool, false);
  std::uniform_real_distribution<float> value(-1, 1);
  kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) { t.view.Set(i, value(rng)); });
  return t;
}

// A contiguous NCHW (nhwc: dense NHWC) output inside sentinel memory.
Placed Output(const Shape& shape, Allocator& pool, bool nhwc = false) {
  Placed t;
  t.whole = Tensor::Empty(Shape{shape.ElementCount() + 32}, DType::kFloat, pool);
  t.whole.Fill(std::bit_cast<float>(kernel_test::kSentinelBits));
  std::vector<int64_t> extents(shape.extents().begin(), shape.extents().end());
  if (nhwc) extents = {extents[0], extents[2], extents[3], extents[1]};
  t.view = t.whole.Slice(0, 16, 16 + shape.ElementCount()).TryReshape(extents).value();
  if (nhwc) t.view = t.view.Permute({0, 3, 1, 2});
  return t;
}

// A random dense NHWC tensor (no sentinels: inputs are only read).
Placed RandomNhwc(const Shape& shape, std::mt19937& rng, Allocator& pool) {
  Placed t = Output(shape, pool, true);
  std::uniform_real_distribution<float> value(-1, 1);
  kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) { t.view.Set(i, value(rng)); });
  return t;
}

// The three kernels' results for one problem and one variant.
struct Results {
  Placed y, gx, gw;
};

struct Inputs {
  Placed x, w, b, g;
};

Inputs RandomInputs(const Problem& q, std::mt19937& rng, Allocator& pool) {
  Inputs in;
  const Shape xs{q.n, q.c, q.h, q.w}, gs{q.n, q.k, q.oh, q.ow};
  in.x = q.nhwc && !q.strided_x ? RandomNhwc(xs, rng, pool) : Random(xs, rng, pool);
  in.w = Random(Shape{q.k, q.c / q.p.groups, q.kh, q.kw}, rng, pool);
  in.b = Random(Shape{q.k}, rng, pool);
  in.g = q.nhwc ? RandomNhwc(gs, rng, pool) : Random(gs, rng, pool);
  return in;
}

Results RunKernels(const TensorKernels& kernels, const Problem& q, const Inputs& in,
                   Allocator& pool) {
  const Shape xs{q.n, q.c, q.h, q.w}, ws{q.k, q.c / q.p.groups, q.kh, q.kw};
  // The scratch inside sentinel memory too: the kernels use no more than they asked for.
  Placed scratch = Output(Shape{kernels.Conv2dScratchFloats(xs, ws, q.p)}, pool);
  const std::span<float> floats = scratch.view.MutableData<float>();
  Results r{Output(Shape{q.n, q.k, q.oh, q.ow}, pool, q.nhwc), Output(xs, pool, q.nhwc),
            Output(ws, pool)};
  kernels.Conv2d(in.x.view, in.w.view, q.bias ? &in.b.view : nullptr, q.p, r.y.view, floats);
  kernels.Conv2dBackwardInput(in.g.view, in.w.view, q.p, r.gx.view, floats);
  kernels.Conv2dBackwardWeight(in.g.view, in.x.view, q.p, r.gw.view, floats);
  EXPECT_EQ(kernel_test::SentinelDamage(scratch), 0);
  EXPECT_EQ(kernel_test::SentinelDamage(r.y), 0);
  EXPECT_EQ(kernel_test::SentinelDamage(r.gx), 0);
  EXPECT_EQ(kernel_test::SentinelDamage(r.gw), 0);
  return r;
}

// The oracle's values (double) and magnitudes (sum of |terms|), as contiguous NCHW vectors.
struct Oracle {
  std::vector<double> y, gx, gw, y_mag, gx_mag, gw_mag;
};

Oracle Brute(const Problem& q, const Inputs& in) {
  const int64_t cg = q.c / q.p.groups;
  Oracle o;
  o.y.assign(static_cast<size_t>(q.n * q.k * q.oh * q.ow), 0);
  o.y_mag = o.y;
  o.gx.assign(static_cast<size_t>(q.n * q.c * q.h * q.w), 0);
  o.gx_mag = o.gx;
  o.gw.assign(static_cast<size_t>(q.k * cg * q.kh * q.kw), 0);
  o.gw_mag = o.gw;
  for (int64_t n = 0; n < q.n; ++n)
    for (int64_t k = 0; k < q.k; ++k)
      for (int64_t e = 0; e < q.oh * q.ow; ++e) {
        const double b = q.bias ? in.b.view.At<float>({k}) : 0.0;
        o.y[static_cast<size_t>((n * q.k + k) * q.oh * q.ow + e)] = b;
        o.y_mag[static_cast<size_t>((n * q.k + k) * q.oh * q.ow + e)] = std::fabs(b);
      }
  ForEachTap(q, [&](int64_t n, int64_t k, int64_t oy, int64_t ox, int64_t c, int64_t i, int64_t j,
                    int64_t y, int64_t x) {
    const double xv = in.x.view.At<float>({n, c, y, x});
    const double wv = in.w.view.At<float>({k, c % cg, i, j});
    const double gv = in.g.view.At<float>({n, k, oy, ox});
    const size_t yi = static_cast<size_t>(((n * q.k + k) * q.oh + oy) * q.ow + ox);
    const size_t xi = static_cast<size_t>(((n * q.c + c) * q.h + y) * q.w + x);
    const size_t wi = static_cast<size_t>(((k * cg + c % cg) * q.kh + i) * q.kw + j);
    o.y[yi] += xv * wv;
    o.y_mag[yi] += std::fabs(xv * wv);
    o.gx[xi] += gv * wv;
    o.gx_mag[xi] += std::fabs(gv * wv);
    o.gw[wi] += gv * xv;
    o.gw_mag[wi] += std::fabs(gv * xv);
  });
  return o;
}

// The elements in logical (N, C, H, W) order.
std::vector<float> Values(const Placed& t) {
  std::vector<float> v;
  kernel_test::ForEachIndex(t.view.shape(),
                            [&](std::span<const int64_t> i) { v.push_back(t.view.At<float>(i)); });
  return v;
}

class Conv2dTest : public ::testing::TestWithParam<Variant> {
 protected:
  const TensorKernels& kernels() const { return *GetParam().kernels; }
  BufferPool pool_;
};

TEST_P(Conv2dTest, ComputesAKnownConvolution) {
  // 1x1x3x3 input 1..9, one 2x2 kernel of ones, pad 1 on the top and left only, stride 2.
  const Problem q{{.stride_h = 2, .stride_w = 2, .pad_top = 1, .pad_left = 1},
                  1,
                  1,
                  3,
                  3,
                  1,
                  2,
                  2,
                  2,
                  2,
                  false};
  Inputs in;
  in.x = Output(Shape{1, 1, 3, 3}, pool_);
  for (int64_t i = 0; i < 9; ++i) in.x.view.Set({0, 0, i / 3, i % 3}, static_cast<float>(i + 1));
  in.w = Output(Shape{1, 1, 2, 2}, pool_);
  in.w.view.Fill(1.0f);
  in.g = Output(Shape{1, 1, 2, 2}, pool_);
  in.g.view.Fill(1.0f);
  const Results r = RunKernels(kernels(), q, in, pool_);
  EXPECT_EQ(Values(r.y), (std::vector<float>{1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9}));
  EXPECT_EQ(Values(r.gx), (std::vector<float>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(Values(r.gw), (std::vector<float>{5, 4 + 6, 2 + 8, 1 + 3 + 7 + 9}));
}

TEST_P(Conv2dTest, MatchesTheBruteForceOracleOnRandomProblems) {
  std::mt19937 rng(11);
  for (int t = 0; t < 150; ++t) {
    const Problem q = RandomProblem(rng);
    const Inputs in = RandomInputs(q, rng, pool_);
    const Results r = RunKernels(kernels(), q, in, pool_);
    const Oracle o = Brute(q, in);
    const bool exact = !GetParam().target;
    auto check = [&](const Placed& got, const std::vector<double>& want,
                     const std::vector<double>& mag, int64_t terms, bool bitwise,
                     const char* what) {
      const std::vector<float> v = Values(got);
      for (size_t e = 0; e < v.size(); ++e) {
        if (bitwise) {
          ASSERT_EQ(v[e], static_cast<float>(want[e])) << what << " element " << e;
          continue;
        }
        // The oracle's double sum is within 2^-40 * mag of the exact one; the reference adds
        // its own rounding to float, and a fast kernel the MatMul bound over its terms.
        const double allowed = exact ? std::ldexp(std::fabs(want[e]), -24) + std::ldexp(mag[e], -40)
                                     : *MatMulErrorBound(terms, mag[e]) + std::ldexp(mag[e], -40);
        ASSERT_LE(std::fabs(v[e] - want[e]), allowed) << what << " element " << e << " case " << t;
      }
    };
    const int64_t cg = q.c / q.p.groups, kg = q.k / q.p.groups;
    check(r.y, o.y, o.y_mag, cg * q.kh * q.kw + 1, exact, "y");
    check(r.gx, o.gx, o.gx_mag, kg * q.kh * q.kw, false, "grad_x");
    check(r.gw, o.gw, o.gw_mag, q.n * q.oh * q.ow, false, "grad_w");
  }
}

INSTANTIATE_TEST_SUITE_P(All, Conv2dTest, ::testing::ValuesIn(kernel_test::AllVariants()),
                         kernel_test::ParamName);

class Conv2dFastTest : public Conv2dTest {};

// Runs `problems` problems from make(rng) through the fast variant and the reference and
// checks each output within MatMulErrorBound over the terms it sums.
template <typename Make>
void ExpectFastWithinTheBound(const TensorKernels& kernels, Allocator& pool, uint32_t seed,
                              int problems, Make make) {
  std::mt19937 rng(seed);
  const TensorKernels& reference = KernelSet::Get(KernelChoice::kExact);
  for (int t = 0; t < problems; ++t) {
    const Problem q = make(rng);
    const Inputs in = RandomInputs(q, rng, pool);
    const Results fast = RunKernels(kernels, q, in, pool);
    const Results ref = RunKernels(reference, q, in, pool);
    const Oracle o = Brute(q, in);
    auto check = [&](const Placed& got, const Placed& want, const std::vector<double>& mag,
                     int64_t terms, const char* what) {
      const std::vector<float> a = Values(got), b = Values(want);
      for (size_t e = 0; e < a.size(); ++e) {
        ASSERT_LE(std::fabs(double{a[e]} - double{b[e]}), *MatMulErrorBound(terms, mag[e]))
            << what << " element " << e << " case " << t;
      }
    };
    const int64_t cg = q.c / q.p.groups, kg = q.k / q.p.groups;
    check(fast.y, ref.y, o.y_mag, cg * q.kh * q.kw + 1, "y");
    check(fast.gx, ref.gx, o.gx_mag, kg * q.kh * q.kw, "grad_x");
    check(fast.gw, ref.gw, o.gw_mag, q.n * q.oh * q.ow, "grad_w");
  }
}

TEST_P(Conv2dFastTest, WithinTheBoundOfTheReferenceOnRandomProblems) {
  ExpectFastWithinTheBound(kernels(), pool_, 12, 150, RandomProblem);
}

// A random problem of 5 to 12 images, each (K / groups) x (C / groups) x KH x KW x OH x OW
// multiply-adds between 2^18 / 5 and 2^18 / 2: im2col unfolds 2 to 4 images side by side for
// one sgemm (its batch work, 2^18, conv_fast.cc), the last batch partial. Half of the NHWC
// problems take a strided x, so im2col writes the NHWC output too.
Problem BatchedProblem(std::mt19937& rng) {
  for (;;) {
    Problem q = RandomProblem(rng);
    q.n = 5 + static_cast<int64_t>(rng() % 8);
    const int64_t cg = 4 + static_cast<int64_t>(rng() % 9),
                  kg = 4 + static_cast<int64_t>(rng() % 9);
    q.c = cg * q.p.groups;
    q.k = kg * q.p.groups;
    q.h = 6 + static_cast<int64_t>(rng() % 15);
    q.w = 6 + static_cast<int64_t>(rng() % 15);
    q.oh = ConvOutputExtent(q.h, static_cast<int32_t>(q.kh), q.p.stride_h, q.p.pad_top,
                            q.p.pad_bottom, q.p.dilation_h);
    q.ow = ConvOutputExtent(q.w, static_cast<int32_t>(q.kw), q.p.stride_w, q.p.pad_left,
                            q.p.pad_right, q.p.dilation_w);
    q.strided_x = q.nhwc && rng() % 2 == 0;
    const int64_t work = kg * cg * q.kh * q.kw * q.oh * q.ow;
    const int64_t images = work > 0 ? (int64_t{1} << 18) / work : 0;
    if (q.oh >= 1 && q.ow >= 1 && images >= 2 && images <= 4 && q.n % images != 0) return q;
  }
}

TEST_P(Conv2dFastTest, SeveralImagesToAGemmWithinTheBoundOfTheReference) {
  ExpectFastWithinTheBound(kernels(), pool_, 13, 8, BatchedProblem);
}

// A random NCHW problem of stride 1 whose pads keep the output the input's size (3x3 pad 1
// and the like): on dense rows im2col copies all rows of a tap at once and col2im adds them
// at once (conv_fast.cc); x and the output gradient take random layouts, dense ones included.
Problem SameSizeProblem(std::mt19937& rng) {
  Problem q = RandomProblem(rng);
  q.n = 1 + static_cast<int64_t>(rng() % 6);
  q.p.stride_h = q.p.stride_w = 1;
  q.p.pad_top = static_cast<int32_t>(rng() % q.kh) * q.p.dilation_h;
  q.p.pad_bottom = static_cast<int32_t>(q.kh - 1) * q.p.dilation_h - q.p.pad_top;
  q.p.pad_left = static_cast<int32_t>(rng() % q.kw) * q.p.dilation_w;
  q.p.pad_right = static_cast<int32_t>(q.kw - 1) * q.p.dilation_w - q.p.pad_left;
  q.oh = q.h;
  q.ow = q.w;
  q.nhwc = false;
  q.p.keep_layout = 0;
  return q;
}

TEST_P(Conv2dFastTest, SameSizeOutputsWithinTheBoundOfTheReference) {
  ExpectFastWithinTheBound(kernels(), pool_, 14, 60, SameSizeProblem);
}

// x, the output gradient and grad_x of a problem as contiguous NCHW (gap 0) or with `gap`
// unused floats after every row (row stride W + gap), inside sentinel memory.
Placed Rows(const Shape& shape, int64_t gap, Allocator& pool) {
  const Shape wide{shape[0], shape[1], shape[2], shape[3] + gap};
  Placed t = Output(wide, pool);
  t.view = t.view.Slice(3, 0, shape[3]);
  return t;
}

// Small dense images (at most 256 output positions each) of stride 1 and a same-size output
// unfold and fold tap by tap over a whole batch (conv_fast.cc's ShiftedTap); rows with a gap
// after them take the image-by-image im2col and col2im instead. Both give the same bits for
// the output and both gradients: the same products in the same order. Many images, so the
// batches hold several (the digits CNN's 1 -> 8 and 8 -> 16 channels on 8x8 and 4x4 images).
// Dense planes of at most 64 elements take the AVX-512 direct path instead for the output and
// the input gradient, and of at most 16 for the weight gradient (conv_planes.h, tested in
// conv_planes_test.cc): those results are not compared here on that variant.
TEST_P(Conv2dFastTest, SmallDenseImagesGiveTheBitsOfImageByImageUnfolding) {
  std::mt19937 rng(15);
  for (int t = 0; t < 40; ++t) {
    Problem q = SameSizeProblem(rng);
    q.n = 1 + static_cast<int64_t>(rng() % 40);
    q.h = 1 + static_cast<int64_t>(rng() % 16);
    q.w = 1 + static_cast<int64_t>(rng() % 16);
    q.oh = q.h;
    q.ow = q.w;
    const Shape xs{q.n, q.c, q.h, q.w}, ws{q.k, q.c / q.p.groups, q.kh, q.kw},
        ys{q.n, q.k, q.oh, q.ow};
    const Placed w = Random(ws, rng, pool_), b = Random(Shape{q.k}, rng, pool_);
    std::vector<float> x(static_cast<size_t>(xs.ElementCount())), g(ys.ElementCount());
    std::uniform_real_distribution<float> value(-1, 1);
    for (float& v : x) v = value(rng);
    for (float& v : g) v = value(rng);
    std::vector<float> got[2][3];  // [gap 0 / 1][y, grad_x, grad_w]
    for (int64_t gap : {0, 1}) {
      Placed px = Rows(xs, gap, pool_), pg = Rows(ys, gap, pool_);
      kernel_test::ForEachIndex(xs, [&](std::span<const int64_t> i) {
        px.view.Set(i, x[static_cast<size_t>(((i[0] * q.c + i[1]) * q.h + i[2]) * q.w + i[3])]);
      });
      kernel_test::ForEachIndex(ys, [&](std::span<const int64_t> i) {
        pg.view.Set(i, g[static_cast<size_t>(((i[0] * q.k + i[1]) * q.oh + i[2]) * q.ow + i[3])]);
      });
      Placed scratch = Output(Shape{kernels().Conv2dScratchFloats(xs, ws, q.p)}, pool_);
      const std::span<float> floats = scratch.view.MutableData<float>();
      Placed y = Output(ys, pool_), gx = Rows(xs, gap, pool_), gw = Output(ws, pool_);
      kernels().Conv2d(px.view, w.view, q.bias ? &b.view : nullptr, q.p, y.view, floats);
      kernels().Conv2dBackwardInput(pg.view, w.view, q.p, gx.view, floats);
      kernels().Conv2dBackwardWeight(pg.view, px.view, q.p, gw.view, floats);
      for (const Placed* out : {&scratch, &y, &gx, &gw}) {
        EXPECT_EQ(kernel_test::SentinelDamage(*out), 0) << "case " << t;
      }
      got[gap][0] = Values(y);
      got[gap][1] = Values(gx);
      got[gap][2] = Values(gw);
    }
    const internal::ConvDims dims = internal::ConvDimsOf(xs, ws, ys, q.p);
    const bool planes = GetParam().target && internal::ConvPlanesApply(dims, *GetParam().target);
    const bool weight_planes =
        GetParam().target && internal::ConvPlanesWeightApply(dims, *GetParam().target);
    for (int r = planes ? 2 : 0; r < 3 && !weight_planes; ++r) {
      ASSERT_EQ(got[0][r].size(), got[1][r].size());
      for (size_t e = 0; e < got[0][r].size(); ++e) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[0][r][e]), std::bit_cast<uint32_t>(got[1][r][e]))
            << "result " << r << " element " << e << " case " << t;
      }
    }
  }
}

// NCHW batches of small images spread over the pool's threads (a slot of scratch each) and
// the weight gradient sums them in parts fixed by the shapes (conv_fast.cc): the output and
// both gradients have the same bits on pools of 1, 2 and 3 threads. BatchedProblem's 2 to 6
// batches give some threads none, one or several; the digits CNN's second layer on 64 images
// gives 5.
TEST_P(Conv2dFastTest, TheSameBitsOnAnyNumberOfThreads) {
  ThreadPool one(1), two(2), three(3);
  const std::unique_ptr<TensorKernels> on[] = {GetParam().On(one), GetParam().On(two),
                                               GetParam().On(three)};
  std::mt19937 rng(16);
  for (int t = 0; t < 10; ++t) {
    Problem q = BatchedProblem(rng);
    if (t == 0) {  // 64 images 8 -> 16 channels, 3x3 pad 1 on 4x4
      q = SameSizeProblem(rng);
      q.n = 64, q.c = 8, q.k = 16, q.h = q.w = q.oh = q.ow = 4, q.kh = q.kw = 3;
      q.p = Conv2dParams{};
      q.p.pad_top = q.p.pad_bottom = q.p.pad_left = q.p.pad_right = 1;
    }
    q.nhwc = q.strided_x = false;  // oneDNN's own threading is not this test's
    q.p.keep_layout = 0;
    const Inputs in = RandomInputs(q, rng, pool_);
    Results got[3];
    for (int i = 0; i < 3; ++i) got[i] = RunKernels(*on[i], q, in, pool_);
    for (int i = 1; i < 3; ++i) {
      for (const auto& [a, b, what] :
           {std::tuple{&got[0].y, &got[i].y, "y"}, std::tuple{&got[0].gx, &got[i].gx, "grad_x"},
            std::tuple{&got[0].gw, &got[i].gw, "grad_w"}}) {
        const std::vector<float> va = Values(*a), vb = Values(*b);
        ASSERT_EQ(va.size(), vb.size());
        for (size_t e = 0; e < va.size(); ++e) {
          ASSERT_EQ(std::bit_cast<uint32_t>(va[e]), std::bit_cast<uint32_t>(vb[e]))
              << what << " element " << e << " on " << i + 1 << " threads, case " << t;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fast, Conv2dFastTest, ::testing::ValuesIn(kernel_test::FastVariants()),
                         kernel_test::ParamName);

#ifndef __SANITIZE_THREAD__  // the TSan build leaves oneDNN out (docs/kernels.md)
// A random NHWC problem whose output has ConvOutputExtent's extents, which oneDNN takes.
Problem OneDnnProblem(std::mt19937& rng) {
  for (;;) {
    const Problem q = RandomProblem(rng);
    if (q.nhwc &&
        q.oh == ConvOutputExtent(q.h, static_cast<int32_t>(q.kh), q.p.stride_h, q.p.pad_top,
                                 q.p.pad_bottom, q.p.dilation_h) &&
        q.ow == ConvOutputExtent(q.w, static_cast<int32_t>(q.kw), q.p.stride_w, q.p.pad_left,
                                 q.p.pad_right, q.p.dilation_w)) {
      return q;
    }
  }
}

// A random problem that takes the oneDNN path, with its inputs, and the fast kernels.
class OneDnnCase {
 public:
  explicit OneDnnCase(uint32_t seed)
      : rng_(seed), q_(OneDnnProblem(rng_)), in_(RandomInputs(q_, rng_, pool_)) {}
  // pool, fast kernels, problem, inputs.
  std::tuple<BufferPool&, const TensorKernels&, const Problem&, const Inputs&> Parts() {
    return {pool_, *kernel_test::FastVariants().front().kernels, q_, in_};
  }

 private:
  BufferPool pool_;
  std::mt19937 rng_;
  Problem q_;
  Inputs in_;
};

TEST(Conv2dOneDnnTest, ASecondIdenticalRunHitsTheScopesCacheAndCreatesNothing) {
  OneDnnCase c(13);
  auto [pool, fast, q, in] = c.Parts();
  const ConvPrimitiveCacheStats process_wide = CurrentConvCache().Stats();
  ConvPrimitiveCache cache;
  {
    const ConvCacheScope scope(&cache);
    RunKernels(fast, q, in, pool);
    // Sizing the scratch creates four primitives (forward with and without bias, both
    // gradients); the passes oneDNN takes find theirs.
    const ConvPrimitiveCacheStats first = cache.Stats();
    EXPECT_EQ(first.misses, 4);
    EXPECT_GE(first.hits, 1) << "the forward pass runs on oneDNN";
    EXPECT_EQ(first.entries, 4);
    RunKernels(fast, q, in, pool);
    const ConvPrimitiveCacheStats second = cache.Stats();
    EXPECT_EQ(second.misses, first.misses) << "the second run created no primitive";
    EXPECT_EQ(second.hits, first.hits + first.hits + first.misses);
    EXPECT_EQ(second.entries, first.entries);
    EXPECT_EQ(second.evictions, 0);
  }
  const ConvPrimitiveCacheStats untouched = CurrentConvCache().Stats();
  EXPECT_EQ(untouched.hits + untouched.misses, process_wide.hits + process_wide.misses)
      << "the scope's runs used only the scope's cache";
  cache.Clear();
  EXPECT_EQ(cache.Stats().entries, 0);
  EXPECT_EQ(cache.Stats().misses, 4) << "Clear frees the primitives and keeps the counters";
}

TEST(Conv2dOneDnnTest, EachCacheCountsItsOwnLookups) {
  OneDnnCase c(14);
  auto [pool, fast, q, in] = c.Parts();
  ConvPrimitiveCache a, b;
  {
    const ConvCacheScope scope(&a);
    RunKernels(fast, q, in, pool);
  }
  {
    const ConvCacheScope scope(&b);
    RunKernels(fast, q, in, pool);
  }
  const ConvPrimitiveCacheStats sa = a.Stats(), sb = b.Stats();
  EXPECT_EQ(sa.misses, 4);
  EXPECT_EQ(sb.misses, 4) << "each cache creates its own primitives";
  EXPECT_EQ(sb.hits, sa.hits);
  EXPECT_EQ(sb.entries, 4);
}

TEST(Conv2dOneDnnTest, MoreShapesThanTheCapacityKeepTheCacheAtItsCapacity) {
  const TensorKernels& fast = *kernel_test::FastVariants().front().kernels;
  ConvPrimitiveCache cache;
  const ConvCacheScope scope(&cache);
  const int64_t shapes = ConvPrimitiveCache::kDefaultCapacity / 4 + 2;  // four entries each
  for (int64_t h = 1; h <= shapes; ++h) {
    fast.Conv2dScratchFloats(Shape{1, 2, h, 3}, Shape{2, 2, 1, 1}, {.keep_layout = 1});
  }
  const ConvPrimitiveCacheStats s = cache.Stats();
  EXPECT_EQ(s.capacity, ConvPrimitiveCache::kDefaultCapacity);
  EXPECT_EQ(s.entries, ConvPrimitiveCache::kDefaultCapacity);
  EXPECT_EQ(s.misses, 4 * shapes);
  EXPECT_EQ(s.evictions, 4 * shapes - ConvPrimitiveCache::kDefaultCapacity);
}

TEST(Conv2dOneDnnTest, ABudgetedCacheChargesEachPrimitiveAndMakesRoomWhenRefused) {
  const TensorKernels& fast = *kernel_test::FastVariants().front().kernels;
  const int64_t entry = ConvPrimitiveCache::EntryBytes(1, 1);
  MemoryBudget budget("test budget", 3 * entry + entry / 2);
  {
    ConvPrimitiveCache cache(ConvPrimitiveCache::kDefaultCapacity, &budget);
    const ConvCacheScope scope(&cache);
    fast.Conv2dScratchFloats(Shape{1, 2, 4, 4}, Shape{3, 2, 1, 1}, {.keep_layout = 1});
    const ConvPrimitiveCacheStats s = cache.Stats();
    EXPECT_EQ(s.misses, 4) << "forward +- bias and both gradients";
    EXPECT_EQ(s.entries, 3) << "the fourth one's charge made the oldest leave";
    EXPECT_EQ(s.evictions, 1);
    EXPECT_EQ(budget.used(), 3 * entry);
    cache.Clear();
    EXPECT_EQ(budget.used(), 0);
    fast.Conv2dScratchFloats(Shape{1, 2, 4, 4}, Shape{3, 2, 1, 1}, {.keep_layout = 1});
    EXPECT_EQ(budget.used(), 3 * entry);
  }
  EXPECT_EQ(budget.used(), 0) << "the destructor gives the charges back";
}

TEST(Conv2dOneDnnTest, ABudgetBelowOnePrimitiveRunsEachConvolutionUncachedWithTheSameBits) {
  OneDnnCase c(15);
  auto [pool, fast, q, in] = c.Parts();
  const Results cached = RunKernels(fast, q, in, pool);  // the process-wide cache's
  MemoryBudget budget("test budget", ConvPrimitiveCache::EntryBytes(q.kh, q.kw) - 1);
  ConvPrimitiveCache cache(ConvPrimitiveCache::kDefaultCapacity, &budget);
  {
    const ConvCacheScope scope(&cache);
    const Results uncached = RunKernels(fast, q, in, pool);
    EXPECT_EQ(Values(uncached.y), Values(cached.y));
    EXPECT_EQ(Values(uncached.gx), Values(cached.gx));
    EXPECT_EQ(Values(uncached.gw), Values(cached.gw));
  }
  const ConvPrimitiveCacheStats s = cache.Stats();
  EXPECT_EQ(s.entries, 0);
  EXPECT_EQ(s.hits, 0) << "every lookup created its primitive";
  EXPECT_GE(s.misses, 5);
  EXPECT_EQ(budget.used(), 0);
}

TEST(Conv2dOneDnnTest, APrimitivesChargeGrowsWithItsKernel) {
  // oneDNN 2.6's heap per primitive, measured (docs/kernels.md): up to 165 KiB at 7x7, 424 KiB
  // at 31x31, 826 KiB at 63x63, 2.6 MiB at 255x255.
  EXPECT_GE(ConvPrimitiveCache::EntryBytes(7, 7), 165 << 10);
  EXPECT_GE(ConvPrimitiveCache::EntryBytes(31, 31), 424 << 10);
  EXPECT_GE(ConvPrimitiveCache::EntryBytes(63, 63), 826 << 10);
  EXPECT_GE(ConvPrimitiveCache::EntryBytes(255, 255), 2617 << 10);
}
#endif

}  // namespace
}  // namespace onemodel
