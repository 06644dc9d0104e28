// AvgPool2d tests (kernels.h, AvgPool2dParams): every variant against an oracle that restates
// the rule (float sum from +0 in row-major window order, divided by the divisor counted over
// the window clipped to the padded input or to the input), bit for bit, on random shapes,
// parameters and layouts (NCHW-like, NHWC-like, permuted, reversed, broadcast), outputs inside
// sentinel memory (NaN payloads aside: where two NaNs meet, which survives is the compiler's
// operand order); hand-computed ceil_mode / count_include_pad divisors; the backward against
// its oracle bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/reference_kernels.h"
#include "core/memory/buffer_pool.h"
#include "tests/core/kernels/kernel_test_util.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

uint32_t Bits(float v) { return std::bit_cast<uint32_t>(v); }

Shape OutputShape(const Shape& in, const AvgPool2dParams& p) {
  return Shape{in[0], in[1],
               PoolOutputExtent(in[2], p.kernel_h, p.stride_h, p.pad_h, 1, p.ceil_mode),
               PoolOutputExtent(in[3], p.kernel_w, p.stride_w, p.pad_w, 1, p.ceil_mode)};
}

std::string Describe(const AvgPool2dParams& p) {
  return "kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) + " stride " +
         std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + " pad " +
         std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) +
         (p.ceil_mode ? " ceil_mode" : "") + (p.count_include_pad ? " count_include_pad" : "");
}

// The positions of window (oy, ox) counted for its divisor: those in the input, or
// (count_include_pad) those before the padded input's end.
float Divisor(const Shape& in, int64_t oy, int64_t ox, const AvgPool2dParams& p) {
  int64_t count = 0;
  for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
    for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
      const int64_t y = oy * p.stride_h - p.pad_h + ky, xx = ox * p.stride_w - p.pad_w + kx;
      const bool inside = y >= 0 && y < in[2] && xx >= 0 && xx < in[3];
      count += p.count_include_pad ? y < in[2] + p.pad_h && xx < in[3] + p.pad_w : inside;
    }
  }
  return static_cast<float>(count);
}

// +0 plus the in-bounds positions of window (oy, ox) of plane (n, c), over the divisor.
float Oracle(const Tensor& x, int64_t n, int64_t c, int64_t oy, int64_t ox,
             const AvgPool2dParams& p) {
  float sum = 0.0f;
  for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
    for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
      const int64_t y = oy * p.stride_h - p.pad_h + ky, xx = ox * p.stride_w - p.pad_w + kx;
      if (y >= 0 && y < x.shape()[2] && xx >= 0 && xx < x.shape()[3]) {
        sum += x.At<float>({n, c, y, xx});
      }
    }
  }
  return sum / Divisor(x.shape(), oy, ox, p);
}

class AvgPool2dTest : public ::testing::TestWithParam<kernel_test::Variant> {
 protected:
  BufferPool pool_;
  ThreadPool two_{2};
  const std::unique_ptr<TensorKernels> kernels_ = GetParam().On(two_);
};

AvgPool2dParams RandomParams(std::mt19937& rng) {
  AvgPool2dParams p;
  p.kernel_h = static_cast<int32_t>(1 + rng() % 4);
  p.kernel_w = static_cast<int32_t>(1 + rng() % 4);
  p.stride_h = static_cast<int32_t>(1 + rng() % 3);
  p.stride_w = static_cast<int32_t>(1 + rng() % 3);
  p.pad_h = static_cast<int32_t>(rng() % static_cast<uint32_t>(p.kernel_h));
  p.pad_w = static_cast<int32_t>(rng() % static_cast<uint32_t>(p.kernel_w));
  p.ceil_mode = rng() % 2;
  p.count_include_pad = rng() % 2;
  return p;
}

TEST_P(AvgPool2dTest, MatchesTheOracleOnRandomShapesParametersAndLayouts) {
  std::mt19937 rng(21);
  for (int i = 0; i < 300; ++i) {
    const AvgPool2dParams p = RandomParams(rng);
    const Shape in{1 + static_cast<int64_t>(rng() % 2),
                   1 + static_cast<int64_t>(rng() % (rng() % 3 == 0 ? 300 : 6)),
                   1 + static_cast<int64_t>(rng() % 9),
                   1 + static_cast<int64_t>(rng() % (rng() % 3 == 0 ? 80 : 12))};
    const Shape out_shape = OutputShape(in, p);
    if (out_shape.IsEmpty()) continue;
    kernel_test::Placed x = kernel_test::RandomLayout(in, rng, pool_, true);
    kernel_test::FillRandom(x.view, rng);
    kernel_test::Placed out = kernel_test::RandomLayout(out_shape, rng, pool_, false);
    kernels_->AvgPool2d(x.view, p, out.view);
    const std::string what = std::string(GetParam().name()) + " " + Describe(p) + " input " +
                             x.view.Describe() + " output " + out.view.Describe();
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << what;
    for (int64_t n = 0; n < out_shape[0]; ++n) {
      for (int64_t c = 0; c < out_shape[1]; ++c) {
        for (int64_t oy = 0; oy < out_shape[2]; ++oy) {
          for (int64_t ox = 0; ox < out_shape[3]; ++ox) {
            const float want = Oracle(x.view, n, c, oy, ox, p);
            const float got = out.view.At<float>({n, c, oy, ox});
            if (std::isnan(got) && std::isnan(want)) continue;  // payloads: see kernels.h
            ASSERT_EQ(Bits(got), Bits(want)) << what << " at " << n << "," << c << "," << oy << ","
                                             << ox << ": got " << got << ", oracle " << want;
          }
        }
      }
    }
  }
}

// NHWC inputs (channel stride 1) take the per-target row loop, which prefetches kAvgAhead
// output columns ahead, into the next output row at a row's end: every channel count around
// the vector groups, rows narrower and wider than kAvgAhead, pads, count_include_pad,
// ceil_mode, strides wider than the window, dense and channel-sliced inputs (column stride
// above C), NHWC and NCHW outputs; bit for bit with the reference, on 1 and 2 threads and with
// streaming stores (whole-line NHWC outputs: C a multiple of 16).
TEST_P(AvgPool2dTest, NhwcRowsMatchTheReferenceOnEveryChannelCountAndWindow) {
  std::mt19937 rng(23);
  ThreadPool one(1);
  const std::unique_ptr<TensorKernels> single = GetParam().On(one);
  // Every output streamed (threshold 0), where the variant streams at all.
  const std::unique_ptr<TensorKernels> streaming =
      GetParam().target ? std::make_unique<FastKernels>(*GetParam().target, two_, 0)
                        : GetParam().On(two_);
  const ReferenceKernels reference;
  const AvgPool2dParams params[] = {{3, 3, 2, 2, 1, 1},
                                    {3, 3, 2, 2, 1, 1, true, true},
                                    {2, 3, 1, 2, 1, 0, false, true},
                                    {1, 1, 3, 3, 0, 0},
                                    {4, 2, 2, 1, 2, 1, true, false}};
  for (const int64_t c : {1, 3, 7, 16, 17, 63, 64, 65, 131}) {
    for (const int64_t w : {1, 5, 9, 30}) {
      for (const AvgPool2dParams& p : params) {
        for (const int64_t extra : {0, 3}) {
          const Shape in{2, c, 7, w};
          const Shape out_shape = OutputShape(in, p);
          if (out_shape.IsEmpty()) continue;
          // (N, H, W, C + extra) in memory, channels [0, c) seen as (N, C, H, W).
          Tensor whole = Tensor::Empty(Shape{2, 7, w, c + extra}, DType::kFloat, pool_);
          kernel_test::FillRandom(whole, rng);
          const Tensor x = whole.Slice(3, 0, c).Permute({0, 3, 1, 2});
          const bool nhwc_out = extra == 0;
          Tensor want = Tensor::Empty(out_shape, DType::kFloat, pool_);
          reference.AvgPool2d(x, p, want);
          for (TensorKernels* k : {kernels_.get(), single.get(), streaming.get()}) {
            Tensor got = nhwc_out ? Tensor::Empty(Shape{2, out_shape[2], out_shape[3], c},
                                                  DType::kFloat, pool_)
                                        .Permute({0, 3, 1, 2})
                                  : Tensor::Empty(out_shape, DType::kFloat, pool_);
            k->AvgPool2d(x, p, got);
            const Tensor dense = got.Contiguous(pool_);
            const auto a = dense.Data<float>();
            const auto b = want.Data<float>();
            for (size_t i = 0; i < a.size(); ++i) {
              if (std::isnan(a[i]) && std::isnan(b[i])) continue;  // payloads: see kernels.h
              ASSERT_EQ(Bits(a[i]), Bits(b[i]))
                  << GetParam().name() << " " << Describe(p) << " C " << c << " W " << w
                  << " extra " << extra << " #" << i;
            }
          }
        }
      }
    }
  }
}

TEST_P(AvgPool2dTest, CeilModeWindowsDivideByThePaddedOrInBoundsCount) {
  // 4x4 ones, 3x3 window, stride 2, pad 1, ceil_mode: 3x3 outputs; the last window starts at
  // 3 (inside the input), covers 3..5, of which 3 is in bounds and 3..4 inside the padding.
  Tensor x = Tensor::Empty(Shape{1, 1, 4, 4}, DType::kFloat, pool_);
  x.Fill(1.0f);
  AvgPool2dParams p{3, 3, 2, 2, 1, 1, true, true};
  ASSERT_EQ(OutputShape(x.shape(), p), (Shape{1, 1, 3, 3}));
  Tensor out = Tensor::Empty(Shape{1, 1, 3, 3}, DType::kFloat, pool_);
  kernels_->AvgPool2d(x, p, out);
  EXPECT_EQ(out.At<float>({0, 0, 0, 0}), 4.0f / 9.0f);  // 2x2 in bounds of a 3x3 padded window
  EXPECT_EQ(out.At<float>({0, 0, 2, 2}), 0.25f);        // 1 in bounds of 2x2 before the end
  EXPECT_EQ(out.At<float>({0, 0, 0, 2}), 2.0f / 6.0f);
  p.count_include_pad = false;
  kernels_->AvgPool2d(x, p, out);
  for (float v : out.Data<float>()) EXPECT_EQ(v, 1.0f);
}

TEST_P(AvgPool2dTest, BackwardSpreadsEachGradientOverItsWindow) {
  std::mt19937 rng(22);
  for (int i = 0; i < 100; ++i) {
    const AvgPool2dParams p = RandomParams(rng);
    const Shape in{1 + static_cast<int64_t>(rng() % 2), 1 + static_cast<int64_t>(rng() % 5),
                   1 + static_cast<int64_t>(rng() % 9), 1 + static_cast<int64_t>(rng() % 30)};
    const Shape out_shape = OutputShape(in, p);
    if (out_shape.IsEmpty()) continue;
    kernel_test::Placed g = kernel_test::RandomLayout(out_shape, rng, pool_, true);
    kernel_test::FillRandom(g.view, rng);
    Tensor want = Tensor::Empty(in, DType::kFloat, pool_, /*zero=*/true);
    for (int64_t n = 0; n < in[0]; ++n) {
      for (int64_t c = 0; c < in[1]; ++c) {
        for (int64_t oy = 0; oy < out_shape[2]; ++oy) {
          for (int64_t ox = 0; ox < out_shape[3]; ++ox) {
            const float share = g.view.At<float>({n, c, oy, ox}) / Divisor(in, oy, ox, p);
            for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
              for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
                const int64_t y = oy * p.stride_h - p.pad_h + ky;
                const int64_t xx = ox * p.stride_w - p.pad_w + kx;
                if (y < 0 || y >= in[2] || xx < 0 || xx >= in[3]) continue;
                want.Set<float>({n, c, y, xx}, want.At<float>({n, c, y, xx}) + share);
              }
            }
          }
        }
      }
    }
    Tensor got = Tensor::Empty(in, DType::kFloat, pool_);
    got.Fill(7.0f);  // every element is written
    kernels_->AvgPool2dBackward(g.view, p, got);
    const auto a = got.Data<float>();
    const auto b = want.Data<float>();
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isnan(a[k]) && std::isnan(b[k])) continue;  // payload of two NaNs meeting
      ASSERT_EQ(Bits(a[k]), Bits(b[k])) << GetParam().name() << " " << Describe(p) << " #" << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, AvgPool2dTest, ::testing::ValuesIn(kernel_test::AllVariants()),
                         kernel_test::ParamName);

}  // namespace
}  // namespace onemodel
