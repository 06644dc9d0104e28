// MaxPool2d tests (spec 9).
//
// Over the variant table (kernel_variants.h). Edge cases (first NaN, later NaN, ties and
// signed zeros, windows next to padding, stride greater than kernel, every pad below the
// kernel) are checked against an oracle that restates the rule independently, for the
// reference and for every fast variant, NCHW and NHWC, with and without indices. Differential
// tests run every fast variant this CPU supports (each SIMD target forced, with a 1- and a
// 2-thread pool) against the reference on random shapes,
// parameters and layouts; outputs and indices are views inside bigger buffers pre-filled with
// a sentinel that must survive outside the view. The backward scatter (MaxPool2dBackward) is
// checked against an exact oracle and, fast variants, bit for bit against the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/memory/buffer_pool.h"
#include "tests/core/kernels/kernel_test_util.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

using kernel_test::kSentinelBits;

constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t Bits(float v) { return std::bit_cast<uint32_t>(v); }
uint32_t Bits(int32_t v) { return static_cast<uint32_t>(v); }

// A quiet NaN with the given payload (distinct payloads tell NaNs apart).
float QuietNaN(uint32_t payload, bool negative = false) {
  return std::bit_cast<float>((negative ? 0xFFC00000u : 0x7FC00000u) | (payload & 0x3FFFFFu));
}

// Calls f(n, c, y, x, offset) for every element of a rank-4 tensor (offset into its storage).
template <typename F>
void ForEachElement(const Tensor& t, F&& f) {
  const Shape& s = t.shape();
  const Strides& st = t.strides();
  for (int64_t n = 0; n < s[0]; ++n) {
    for (int64_t c = 0; c < s[1]; ++c) {
      for (int64_t y = 0; y < s[2]; ++y) {
        for (int64_t x = 0; x < s[3]; ++x) {
          f(n, c, y, x, t.offset() + n * st[0] + c * st[1] + y * st[2] + x * st[3]);
        }
      }
    }
  }
}

// Writes gen(n, c, y, x) to every element of `t` (through any strides).
template <typename Gen>
void FillWith(Tensor& t, Gen&& gen) {
  std::span<float> data = t.MutableStorage<float>();
  ForEachElement(t, [&](int64_t n, int64_t c, int64_t y, int64_t x, int64_t at) {
    data[static_cast<size_t>(at)] = gen(n, c, y, x);
  });
}

// ---- placement inside sentinel memory ----

struct Placed {
  Tensor view;   // what the kernel sees
  Tensor whole;  // the 1-D buffer around it, kSentinelBits outside the view
};

// A rank-4 tensor of logical `shape` inside a larger buffer of sentinels. Logical dimension
// `inner` (0-3) is stored innermost with stride 1; the others in random order, with random
// gaps (steps of 2, padding), some reversed. inner = -1: every dimension may be anywhere,
// reversed or stepped.
Placed Place(const Shape& shape, DType dtype, int inner, std::mt19937& rng, Allocator& alloc) {
  std::vector<int> order = {0, 1, 2, 3};  // physical order of the logical dimensions
  std::shuffle(order.begin(), order.end(), rng);
  if (inner >= 0) {
    order.erase(std::find(order.begin(), order.end(), inner));
    order.push_back(inner);
  }
  std::vector<int64_t> extent(4), step(4);
  std::vector<bool> reversed(4);
  int64_t total = 1;
  for (size_t k = 0; k < 4; ++k) {
    const int d = order[k];
    const bool unit = d == inner;
    step[k] = unit ? 1 : 1 + static_cast<int64_t>(rng() % 2);
    reversed[k] = !unit && rng() % 3 == 0;
    extent[k] = shape[d] * step[k] + static_cast<int64_t>(rng() % 2);
    total *= extent[k];
  }
  const int64_t margin = 1 + static_cast<int64_t>(rng() % 20);
  Placed p;
  p.whole = Tensor::Empty(Shape{total + 2 * margin}, dtype, alloc);
  if (dtype == DType::kFloat) {
    p.whole.Fill(std::bit_cast<float>(kSentinelBits));
  } else {
    p.whole.Fill(static_cast<int32_t>(kSentinelBits));
  }
  Tensor v = p.whole.Slice(0, margin, margin + total).TryReshape(extent).value();
  for (size_t k = 0; k < 4; ++k) {
    const int i = static_cast<int>(k);
    const int64_t used = shape[order[k]] * step[k];
    v = reversed[k] ? v.Slice(i, used - 1, -extent[k] - 1, -step[k]) : v.Slice(i, 0, used, step[k]);
  }
  std::vector<int> perm(4);
  for (size_t k = 0; k < 4; ++k) perm[static_cast<size_t>(order[k])] = static_cast<int>(k);
  p.view = v.Permute(perm);
  return p;
}

// Elements of p.whole outside p.view that lost the sentinel.
int64_t SentinelDamage(const Placed& p) {
  std::vector<char> inside(static_cast<size_t>(p.whole.ElementCount()), 0);
  ForEachElement(p.view, [&](int64_t, int64_t, int64_t, int64_t, int64_t at) {
    inside[static_cast<size_t>(at)] = 1;
  });
  int64_t damaged = 0;
  const auto check = [&](auto data) {
    for (size_t i = 0; i < data.size(); ++i)
      damaged += !inside[i] && Bits(data[i]) != kSentinelBits;
  };
  if (p.whole.dtype() == DType::kFloat) {
    check(p.whole.Data<float>());
  } else {
    check(p.whole.Data<int32_t>());
  }
  return damaged;
}

Shape OutputShape(const Shape& in, const MaxPool2dParams& p) {
  return Shape{in[0], in[1],
               PoolOutputExtent(in[2], p.kernel_h, p.stride_h, p.pad_h, p.dilation_h, p.ceil_mode),
               PoolOutputExtent(in[3], p.kernel_w, p.stride_w, p.pad_w, p.dilation_w, p.ceil_mode)};
}

std::string Describe(const MaxPool2dParams& p) {
  return "kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) + " stride " +
         std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + " pad " +
         std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) + " dilation " +
         std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w) +
         (p.ceil_mode ? " ceil_mode" : "") + (p.relu ? " relu" : "");
}

// ---- the oracle: spec 9 restated ----

struct Pick {
  float value;
  int32_t index;
};

// The in-bounds positions of window (oy, ox) in scan order; the first NaN among them if any,
// else the first one equal to their maximum. relu: 0 at -1 unless that maximum is positive.
Pick Oracle(const Tensor& x, int64_t n, int64_t c, int64_t oy, int64_t ox,
            const MaxPool2dParams& p) {
  const int64_t h = x.shape()[2], w = x.shape()[3];
  std::vector<Pick> seen;
  for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
    for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
      const int64_t y = oy * p.stride_h - p.pad_h + ky * p.dilation_h;
      const int64_t xx = ox * p.stride_w - p.pad_w + kx * p.dilation_w;
      if (y >= 0 && y < h && xx >= 0 && xx < w) {
        seen.push_back({x.At<float>({n, c, y, xx}), static_cast<int32_t>(y * w + xx)});
      }
    }
  }
  if (seen.empty()) return {0.0f, -1};
  for (const Pick& s : seen) {
    if (std::isnan(s.value)) return s;
  }
  float top = -kInf;
  for (const Pick& s : seen) top = std::max(top, s.value);
  if (p.relu && !(top > 0.0f)) return {0.0f, -1};
  for (const Pick& s : seen) {
    if (s.value == top) return s;
  }
  return seen.front();
}

// One row of the variant table (kernel_variants.h): every variant, the reference included.
class MaxPool2dTest : public ::testing::TestWithParam<kernel_test::Variant> {
 protected:
  struct Run {
    std::string label;  // "fast-avx2, 2 threads"
    const TensorKernels* kernels;
  };

  // This row's variant with a 1-thread pool, and with a 2-thread pool if it has threads and
  // that is asked for (inputs too small to split run the same code either way).
  std::vector<Run> Runs(bool with_two_threads = true) const {
    const std::string name(GetParam().name());
    if (!GetParam().target) return {{name, on_one_.get()}};
    std::vector<Run> runs = {{name + ", 1 thread", on_one_.get()}};
    if (with_two_threads) runs.push_back({name + ", 2 threads", on_two_.get()});
    return runs;
  }

  // Pools each of `inputs` (the same values, in any layouts) with `run`, with and without
  // indices: every output's bits and every index must equal the reference kernels' on
  // inputs[0].
  void ExpectReferenceBits(const Run& run, const MaxPool2dParams& p,
                           std::initializer_list<const Tensor*> inputs) {
    const Tensor& first = **inputs.begin();
    const Shape out_shape = OutputShape(first.shape(), p);
    Tensor ref_out = Tensor::Empty(out_shape, DType::kFloat, pool_);
    Tensor ref_idx = Tensor::Empty(out_shape, DType::kInt32, pool_);
    reference_.MaxPool2d(first, p, ref_out, &ref_idx);
    const auto ro = ref_out.Data<float>();
    const auto ri = ref_idx.Data<int32_t>();
    for (const Tensor* in : inputs) {
      for (bool with_indices : {false, true}) {
        Tensor out = Tensor::Empty(out_shape, DType::kFloat, pool_);
        Tensor idx = Tensor::Empty(out_shape, DType::kInt32, pool_);
        run.kernels->MaxPool2d(*in, p, out, with_indices ? &idx : nullptr);
        const auto o = out.Data<float>();
        const auto ix = idx.Data<int32_t>();
        const std::string what = run.label + " " + Describe(p) + " input " + in->Describe();
        for (size_t e = 0; e < ro.size(); ++e) {
          ASSERT_EQ(Bits(o[e]), Bits(ro[e])) << what << " output #" << e;
          if (with_indices) {
            ASSERT_EQ(ix[e], ri[e]) << what << " index #" << e;
          }
        }
      }
    }
  }

  // Pools `nchw` (contiguous NCHW) with the variant, in NCHW and in NHWC, with and without
  // indices, for each of `params`; every output and index must equal the oracle's.
  void ExpectOracle(const Tensor& nchw, const std::vector<MaxPool2dParams>& params) {
    const Tensor nhwc = nchw.ToLayout(Layout::kNhwc, pool_);
    ASSERT_TRUE(nchw.shape()[1] == 1 || nhwc.strides()[1] == 1);
    for (const MaxPool2dParams& p : params) {
      const Shape out_shape = OutputShape(nchw.shape(), p);
      if (out_shape.IsEmpty()) continue;
      std::vector<Pick> expected;
      for (int64_t n = 0; n < out_shape[0]; ++n) {
        for (int64_t c = 0; c < out_shape[1]; ++c) {
          for (int64_t oy = 0; oy < out_shape[2]; ++oy) {
            for (int64_t ox = 0; ox < out_shape[3]; ++ox) {
              expected.push_back(Oracle(nchw, n, c, oy, ox, p));
            }
          }
        }
      }
      for (const Run& v : Runs(/*with_two_threads=*/false)) {
        for (const Tensor* x : {&nchw, &nhwc}) {
          for (bool with_indices : {false, true}) {
            Tensor out = Tensor::Empty(out_shape, DType::kFloat, pool_);
            Tensor idx = Tensor::Empty(out_shape, DType::kInt32, pool_);
            v.kernels->MaxPool2d(*x, p, out, with_indices ? &idx : nullptr);
            const auto o = out.Data<float>();
            const auto ix = idx.Data<int32_t>();
            for (size_t i = 0; i < expected.size(); ++i) {
              ASSERT_EQ(Bits(o[i]), Bits(expected[i].value))
                  << v.label << " " << LayoutName(x->layout()) << " " << Describe(p) << " input "
                  << nchw.shape().ToString() << " output #" << i << ": got " << o[i] << ", oracle "
                  << expected[i].value;
              if (with_indices) {
                ASSERT_EQ(ix[i], expected[i].index)
                    << v.label << " " << LayoutName(x->layout()) << " " << Describe(p) << " input "
                    << nchw.shape().ToString() << " index #" << i;
              }
            }
          }
        }
      }
    }
  }

  BufferPool pool_;
  ThreadPool one_{1};
  ThreadPool two_{2};
  const TensorKernels& reference_ = KernelSet::Get(KernelChoice::kExact);
  const std::unique_ptr<TensorKernels> on_one_ = GetParam().On(one_);
  const std::unique_ptr<TensorKernels> on_two_ = GetParam().On(two_);
};

// The fast variants: the differential tests against the reference.
class MaxPool2dFastTest : public MaxPool2dTest {};

// Square kernels 1-4, strides 1-3, every pad 0 .. kernel-1, and some rectangular ones.
std::vector<MaxPool2dParams> SmallParams() {
  std::vector<MaxPool2dParams> all;
  for (int32_t k = 1; k <= 4; ++k) {
    for (int32_t s = 1; s <= 3; ++s) {
      for (int32_t pad = 0; pad < k; ++pad) all.push_back({k, k, s, s, pad, pad});
    }
  }
  all.push_back({1, 3, 1, 2, 0, 2});
  all.push_back({3, 2, 2, 1, 1, 0});
  all.push_back({2, 4, 3, 1, 1, 3});
  // Each again dilated, rounded up (ceil_mode: last windows running into or past the padding)
  // and fused with Relu.
  const size_t plain = all.size();
  for (size_t i = 0; i < plain; ++i) {
    MaxPool2dParams p = all[i];
    p.dilation_h = 2;
    p.dilation_w = 1 + static_cast<int32_t>(i % 3);
    all.push_back(p);
    p = all[i];
    p.ceil_mode = true;
    all.push_back(p);
    p.dilation_h = 3;
    p.relu = true;
    all.push_back(p);
    p = all[i];
    p.relu = true;
    all.push_back(p);
  }
  return all;
}

// Wide enough for every vector width and stride to have whole vectors, odd to leave tails;
// more channels than an AVX-512 vector, not a multiple of it.
const Shape kEdgeShape{1, 19, 5, 67};

TEST_P(MaxPool2dTest, TheFirstNaNInScanOrderIsReported) {
  Tensor x = Tensor::Empty(kEdgeShape, DType::kFloat, pool_);
  std::mt19937 rng(11);
  uint32_t payload = 1;
  FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) {  // half NaNs, each payload distinct
    return rng() % 2 ? QuietNaN(payload++, rng() % 2) : static_cast<float>(int(rng() % 7) - 3);
  });
  x.Set<float>({0, 0, 0, 0}, QuietNaN(111));
  x.Set<float>({0, 0, 0, 1}, QuietNaN(222));
  x.Set<float>({0, 0, 1, 0}, QuietNaN(333));
  const MaxPool2dParams k2{2, 2, 1, 1, 0, 0};
  const Pick first = Oracle(x, 0, 0, 0, 0, k2);
  EXPECT_EQ(Bits(first.value), Bits(QuietNaN(111)));
  EXPECT_EQ(first.index, 0);
  ExpectOracle(x, SmallParams());
}

TEST_P(MaxPool2dTest, ANaNAfterTheMaximumStillWins) {
  Tensor x = Tensor::Empty(kEdgeShape, DType::kFloat, pool_);
  std::mt19937 rng(12);
  uint32_t payload = 1;
  FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) {  // rare NaNs after frequent +inf
    const uint32_t r = rng() % 20;
    return r == 0 ? QuietNaN(payload++, rng() % 2)
                  : (r < 5 ? kInf : static_cast<float>(int(rng() % 7) - 3));
  });
  for (int64_t y = 0; y < 3; ++y) {
    for (int64_t xx = 0; xx < 3; ++xx) x.Set<float>({0, 0, y, xx}, 1.0f);
  }
  x.Set<float>({0, 0, 0, 0}, kInf);
  x.Set<float>({0, 0, 1, 1}, QuietNaN(444));
  x.Set<float>({0, 0, 2, 0}, QuietNaN(555));
  const Pick pick = Oracle(x, 0, 0, 0, 0, {3, 3, 1, 1, 0, 0});
  EXPECT_EQ(Bits(pick.value), Bits(QuietNaN(444)));
  EXPECT_EQ(pick.index, 1 * 67 + 1);
  ExpectOracle(x, SmallParams());
}

TEST_P(MaxPool2dTest, TiesAndSignedZerosGoToTheFirstPosition) {
  Tensor x = Tensor::Empty(kEdgeShape, DType::kFloat, pool_);
  std::mt19937 rng(13);
  const float choices[] = {-0.0f, 0.0f, -1.0f, 1.0f, 1.0f, 2.0f};
  FillWith(x,
           [&](int64_t, int64_t, int64_t, int64_t) { return choices[rng() % std::size(choices)]; });
  x.Set<float>({0, 0, 0, 0}, -0.0f);
  x.Set<float>({0, 0, 0, 1}, 0.0f);
  x.Set<float>({0, 0, 1, 0}, 0.0f);
  x.Set<float>({0, 0, 1, 1}, -1.0f);
  const Pick zero = Oracle(x, 0, 0, 0, 0, {2, 2, 2, 2, 0, 0});
  EXPECT_EQ(Bits(zero.value), Bits(-0.0f));
  EXPECT_EQ(zero.index, 0);
  ExpectOracle(x, SmallParams());
}

TEST_P(MaxPool2dTest, PaddingNeverWinsEvenInWindowsThatAreMostlyPadding) {
  std::mt19937 rng(14);
  for (const Shape& shape : {Shape{1, 19, 1, 1}, Shape{2, 3, 1, 2}, Shape{1, 17, 2, 1},
                             Shape{1, 5, 3, 3}, Shape{1, 2, 4, 67}, Shape{1, 18, 2, 3}}) {
    Tensor x = Tensor::Empty(shape, DType::kFloat, pool_);
    FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) {  // all negative: a padded 0 would win
      return -1.0f - static_cast<float>(rng() % 100);
    });
    std::vector<MaxPool2dParams> params;
    for (int32_t k = 1; k <= 4; ++k) {
      for (int32_t s = 1; s <= 3; ++s) params.push_back({k, k, s, s, k - 1, k - 1});
    }
    ExpectOracle(x, params);
    for (const MaxPool2dParams& p : params) {
      const Shape out_shape = OutputShape(shape, p);
      if (out_shape.IsEmpty()) continue;
      for (const Run& r : Runs()) {
        Tensor out = Tensor::Empty(out_shape, DType::kFloat, pool_);
        Tensor idx = Tensor::Empty(out_shape, DType::kInt32, pool_);
        r.kernels->MaxPool2d(x, p, out, &idx);
        for (float v : out.Data<float>()) ASSERT_LT(v, 0.0f) << r.label << " " << Describe(p);
        for (int32_t i : idx.Data<int32_t>()) ASSERT_GE(i, 0) << r.label << " " << Describe(p);
      }
    }
  }
}

TEST_P(MaxPool2dTest, StrideAboveKernelSkipsUncoveredElements) {
  std::vector<MaxPool2dParams> params;
  for (int32_t k = 1; k <= 3; ++k) {
    for (int32_t s = k + 1; s <= 6; ++s) {
      for (int32_t pad = 0; pad < k; ++pad) params.push_back({k, k, s, s, pad, pad});
    }
  }
  for (const MaxPool2dParams& p : params) {
    // Elements no window covers hold NaN, which would win anywhere it was read.
    Tensor x = Tensor::Empty(kEdgeShape, DType::kFloat, pool_);
    std::mt19937 rng(15);
    const auto covered = [&](int64_t i, int64_t stride) {
      const int64_t r = (i + p.pad_h) % stride;
      return r < p.kernel_h;
    };
    FillWith(x, [&](int64_t, int64_t, int64_t y, int64_t xx) {
      return covered(y, p.stride_h) && covered(xx, p.stride_w)
                 ? static_cast<float>(int(rng() % 9) - 4)
                 : QuietNaN(7);
    });
    ExpectOracle(x, {p});
    for (const Run& r : Runs(/*with_two_threads=*/false)) {
      Tensor out = Tensor::Empty(OutputShape(kEdgeShape, p), DType::kFloat, pool_);
      r.kernels->MaxPool2d(x, p, out, nullptr);
      for (float v : out.Data<float>()) ASSERT_FALSE(std::isnan(v)) << r.label << Describe(p);
    }
  }
}

TEST_P(MaxPool2dTest, EveryPadFromZeroToKernelMinusOne) {
  std::mt19937 rng(16);
  Tensor x = Tensor::Empty(Shape{1, 17, 7, 41}, DType::kFloat, pool_);
  FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) {
    return rng() % 50 == 0 ? QuietNaN(static_cast<uint32_t>(rng()))
                           : static_cast<float>(rng() % 16);
  });
  std::vector<MaxPool2dParams> params;
  for (int32_t kh = 1; kh <= 4; ++kh) {
    for (int32_t kw = 1; kw <= 4; ++kw) {
      for (int32_t ph = 0; ph < kh; ++ph) {
        for (int32_t pw = 0; pw < kw; ++pw) {
          params.push_back({kh, kw, 1 + (kh + pw) % 3, 1 + (kw + ph) % 3, ph, pw});
        }
      }
    }
  }
  ExpectOracle(x, params);
}

TEST(PoolOutputExtentTest, CeilModeAndDilationAsOnnxAndPyTorch) {
  EXPECT_EQ(PoolOutputExtent(5, 2, 2, 0), 2);
  EXPECT_EQ(PoolOutputExtent(5, 2, 2, 0, 1, true), 3);  // last window starts at 4, inside
  EXPECT_EQ(PoolOutputExtent(4, 3, 2, 1, 1, true), 3);  // last window starts at 3, inside
  // ceil(4 / 3) + 1 = 3 windows, but the third would start at 5, in the right padding.
  EXPECT_EQ(PoolOutputExtent(4, 2, 3, 1, 1, true), 2);
  EXPECT_EQ(PoolOutputExtent(7, 3, 1, 0, 2), 3);  // extent 5
  EXPECT_EQ(PoolOutputExtent(4, 3, 1, 0, 2), 0);  // extent 5 > 4
  EXPECT_EQ(PoolOutputExtent(8, 3, 2, 1, 2, true), 4);
  // A window longer than the padded input by less than a stride: one output in ceil_mode
  // (ONNX: ceil(span / stride + 1) with span -2, -1 and -3; PyTorch's shapes), none in floor
  // mode, and none when it is a whole stride longer.
  EXPECT_EQ(PoolOutputExtent(1, 3, 4, 1, 2, true), 1);  // extent 5, padded input 3
  EXPECT_EQ(PoolOutputExtent(1, 3, 4, 1, 2), 0);
  EXPECT_EQ(PoolOutputExtent(1, 2, 2, 0, 1, true), 1);  // a 2x2 window over a 1x1 input
  EXPECT_EQ(PoolOutputExtent(2, 3, 4, 0, 2, true), 1);
  EXPECT_EQ(PoolOutputExtent(1, 3, 4, 0, 2, true), 0);  // span -4: a whole stride short
}

TEST_P(MaxPool2dTest, ReluWindowsWithoutAPositiveElementGiveZeroAndIndexMinusOne) {
  Tensor x = Tensor::Empty(Shape{1, 1, 2, 4}, DType::kFloat, pool_);
  const float values[] = {-1.0f, -0.0f, 2.0f, 0.0f, -3.0f, 0.0f, 2.0f, -5.0f};
  FillWith(x, [&](int64_t, int64_t, int64_t y, int64_t xx) { return values[y * 4 + xx]; });
  MaxPool2dParams p{2, 2, 2, 2, 0, 0};
  p.relu = true;
  for (const Run& r : Runs()) {
    Tensor out = Tensor::Empty(Shape{1, 1, 1, 2}, DType::kFloat, pool_);
    Tensor idx = Tensor::Empty(Shape{1, 1, 1, 2}, DType::kInt32, pool_);
    r.kernels->MaxPool2d(x, p, out, &idx);
    EXPECT_EQ(Bits(out.At<float>({0, 0, 0, 0})), Bits(0.0f)) << r.label;  // +0, not -0
    EXPECT_EQ(idx.At<int32_t>({0, 0, 0, 0}), -1) << r.label;
    EXPECT_EQ(out.At<float>({0, 0, 0, 1}), 2.0f) << r.label;
    EXPECT_EQ(idx.At<int32_t>({0, 0, 0, 1}), 2) << r.label;  // the first 2 wins the tie
  }
}

// ---- the differential test ----

struct Case {
  Shape in;
  MaxPool2dParams p;
  Shape out;
};

Case RandomCase(std::mt19937& rng) {
  for (;;) {
    Case k;
    const auto kernel = [&] { return static_cast<int32_t>(1 + rng() % 4); };
    const auto stride = [&] {
      return static_cast<int32_t>(rng() % 12 == 0 ? 4 + rng() % 2 : 1 + rng() % 3);
    };
    k.p.kernel_h = kernel();
    k.p.kernel_w = kernel();
    k.p.stride_h = stride();
    k.p.stride_w = stride();
    k.p.pad_h = static_cast<int32_t>(rng() % static_cast<uint32_t>(k.p.kernel_h));
    k.p.pad_w = static_cast<int32_t>(rng() % static_cast<uint32_t>(k.p.kernel_w));
    k.p.dilation_h = rng() % 4 == 0 ? static_cast<int32_t>(2 + rng() % 2) : 1;
    k.p.dilation_w = rng() % 4 == 0 ? static_cast<int32_t>(2 + rng() % 2) : 1;
    k.p.ceil_mode = rng() % 3 == 0;
    k.p.relu = rng() % 3 == 0;
    const int64_t n = 1 + rng() % 2;
    const int64_t c = 1 + rng() % (rng() % 3 == 0 ? 40 : 6);
    const int64_t h = 1 + rng() % 9;
    const int64_t w = rng() % 3 == 0 ? 40 + rng() % 60 : 1 + rng() % 12;
    k.in = Shape{n, c, h, w};
    k.out = OutputShape(k.in, k.p);
    if (!k.out.IsEmpty()) return k;
  }
}

// Values for one case: ordinary, heavy on ties and signed zeros, with NaNs (quiet and
// signalling, any sign and payload) and infinities, or ordinary with a rare NaN (so some rows
// hold a NaN and others do not).
constexpr int kFlavours = 4;
float RandomValue(std::mt19937& rng, int flavour) {
  switch (flavour) {
    case 0:
      return std::uniform_real_distribution<float>(-100, 100)(rng);
    case 3:
      return rng() % 300 == 0 ? QuietNaN(static_cast<uint32_t>(rng()))
                              : std::uniform_real_distribution<float>(-100, 100)(rng);
    case 1:
      return static_cast<float>(int(rng() % 5) - 2) * (rng() % 2 ? 1.0f : -1.0f);  // ties, ±0
    default:
      switch (rng() % 8) {
        case 0:
          return QuietNaN(static_cast<uint32_t>(rng()), rng() % 2);
        case 1:  // signalling NaN: quiet bit clear, payload not zero
          return std::bit_cast<float>(0x7F800001u | (static_cast<uint32_t>(rng()) & 0x803FFFFEu));
        case 2:
          return rng() % 2 ? kInf : -kInf;
        default:
          return static_cast<float>(int(rng() % 7) - 3);
      }
  }
}

// Input layouts: NCHW-like (x stride 1), NHWC-like (channel stride 1), anything.
constexpr int kLayoutInner[] = {3, 1, -1};

TEST_P(MaxPool2dFastTest, MatchesTheReferenceOnRandomShapesAndLayouts) {
  constexpr int kCasesPerRun = 300;
  std::mt19937 rng(17);
  int checked = 0;
  for (const Run& run : Runs()) {
    for (int i = 0; i < kCasesPerRun; ++i) {
      const Case k = RandomCase(rng);
      const int layout = static_cast<int>(rng() % 4);
      Placed x = layout < 3
                     ? Place(k.in, DType::kFloat, kLayoutInner[layout], rng, pool_)
                     : [&] {  // may broadcast: stride 0
                         kernel_test::Placed b = kernel_test::RandomLayout(k.in, rng, pool_, true);
                         return Placed{b.view, b.whole};
                       }();
      const int flavour = static_cast<int>(rng() % kFlavours);
      FillWith(x.view,
               [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, flavour); });
      const bool with_indices = rng() % 2;
      Placed out = Place(k.out, DType::kFloat, kLayoutInner[rng() % 3], rng, pool_);
      Placed idx = Place(k.out, DType::kInt32, kLayoutInner[rng() % 3], rng, pool_);
      Tensor ref_out = Tensor::Empty(k.out, DType::kFloat, pool_);
      Tensor ref_idx = Tensor::Empty(k.out, DType::kInt32, pool_);
      reference_.MaxPool2d(x.view, k.p, ref_out, with_indices ? &ref_idx : nullptr);
      run.kernels->MaxPool2d(x.view, k.p, out.view, with_indices ? &idx.view : nullptr);

      const std::string what = run.label + " " + Describe(k.p) + " input " + x.view.Describe() +
                               " output " + out.view.Describe() +
                               (with_indices ? " indices " + idx.view.Describe() : "");
      ASSERT_EQ(SentinelDamage(out), 0) << what;
      ASSERT_EQ(SentinelDamage(idx), 0) << what;
      const auto o = out.view.Storage<float>();
      const auto ix = idx.view.Storage<int32_t>();
      const auto ro = ref_out.Data<float>();
      const auto ri = ref_idx.Data<int32_t>();
      size_t i_ref = 0;
      ForEachElement(out.view, [&](int64_t n, int64_t c, int64_t y, int64_t xx, int64_t at) {
        ASSERT_EQ(Bits(o[static_cast<size_t>(at)]), Bits(ro[i_ref]))
            << what << " at " << n << "," << c << "," << y << "," << xx;
        ++i_ref;
      });
      if (with_indices) {
        i_ref = 0;
        ForEachElement(idx.view, [&](int64_t n, int64_t c, int64_t y, int64_t xx, int64_t at) {
          ASSERT_EQ(ix[static_cast<size_t>(at)], ri[i_ref])
              << what << " index at " << n << "," << c << "," << y << "," << xx;
          ++i_ref;
        });
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * kCasesPerRun);
}

TEST_P(MaxPool2dFastTest, LargeInputsSplitOverThreadsGiveTheReferenceResults) {
  std::mt19937 rng(18);
  const Shape shape{2, 16, 45, 53};
  Tensor nchw = Tensor::Empty(shape, DType::kFloat, pool_);
  FillWith(nchw, [&](int64_t, int64_t c, int64_t, int64_t) {  // one flavour per channel
    return RandomValue(rng, static_cast<int>(c % kFlavours));
  });
  const Tensor nhwc = nchw.ToLayout(Layout::kNhwc, pool_);
  Tensor swapped = Tensor::Empty(Shape{2, 16, 53, 45}, DType::kFloat, pool_);
  Tensor strided = swapped.Transpose(2, 3);  // logical (2, 16, 45, 53), x stride 45
  strided.CopyFrom(nchw);
  ASSERT_EQ(strided.layout(), Layout::kStrided);
  // Each visits 150 000 to 1.4 million window positions: enough to be split over two threads.
  const MaxPool2dParams params[] = {
      {3, 3, 2, 2, 1, 1}, {2, 3, 1, 2, 0, 1}, {3, 3, 1, 1, 1, 1}, {4, 4, 3, 3, 2, 2}};
  for (const MaxPool2dParams& p : params) {
    for (const Run& run : Runs()) {
      ExpectReferenceBits(run, p, {&std::as_const(nchw), &nhwc, &std::as_const(strided)});
      if (HasFatalFailure()) return;
    }
  }
}

// Contiguous NCHW inputs, outputs and indices without padding whose output rows are at most
// half a vector wide take the planes loop (several output rows or whole planes per vector,
// windows gathered; maxpool_simd.cc); up to 72 planes leave partial last vectors. Bit for bit
// the reference, indices too, with every value flavour (NaN first or later, ties, signed
// zeros, infinities), relu, dilation, strides other than the kernel and ceil_mode (whose
// windows past the input keep the call on the other loops). The same values through a view
// reversed along H and one with a gap after every row (the rows loop) give the same results.
TEST_P(MaxPool2dFastTest, NarrowOutputRowsOfContiguousPlanesGiveTheReferenceResults) {
  std::mt19937 rng(19);
  for (const Run& run : Runs()) {
    for (int i = 0; i < 250; ++i) {
      MaxPool2dParams p;
      p.kernel_h = static_cast<int32_t>(1 + rng() % 3);
      p.kernel_w = static_cast<int32_t>(1 + rng() % 3);
      p.stride_h = rng() % 2 ? p.kernel_h : static_cast<int32_t>(1 + rng() % 3);
      p.stride_w = rng() % 2 ? p.kernel_w : static_cast<int32_t>(1 + rng() % 3);
      p.dilation_h = rng() % 4 == 0 ? 2 : 1;
      p.dilation_w = rng() % 4 == 0 ? 2 : 1;
      p.ceil_mode = rng() % 6 == 0;
      p.relu = rng() % 3 == 0;
      const auto n = static_cast<int64_t>(1 + rng() % 3), c = static_cast<int64_t>(1 + rng() % 24);
      const auto h = static_cast<int64_t>(1 + rng() % 12), w = static_cast<int64_t>(1 + rng() % 18);
      const Shape shape{n, c, h, w}, out_shape = OutputShape(shape, p);
      if (out_shape.IsEmpty()) continue;
      Tensor x = Tensor::Empty(shape, DType::kFloat, pool_);
      const int flavour = static_cast<int>(rng() % kFlavours);
      FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, flavour); });
      Tensor reversed = Tensor::Empty(shape, DType::kFloat, pool_).Slice(2, h - 1, -h - 1, -1);
      reversed.CopyFrom(x);
      Tensor gapped = Tensor::Empty(Shape{n, c, h, w + 1}, DType::kFloat, pool_).Slice(3, 0, w);
      gapped.CopyFrom(x);
      ExpectReferenceBits(run, p,
                          {&std::as_const(x), &std::as_const(reversed), &std::as_const(gapped)});
      if (HasFatalFailure()) return;
    }
  }
}

// 2x2 windows at stride 2 over contiguous planes that they tile (H = 2 OH, W = 2 OW) with
// output rows of 1, 2, 4 or 8 take the pairs loop where a vector holds whole output rows and
// rows and planes line up with vectors (maxpool_simd.cc); other widths, odd planes and the
// views below take the other loops. Bit for bit the reference, indices too, with every value
// flavour, relu and ceil_mode, up to 150 planes (partial last vectors, split over 2 threads).
TEST_P(MaxPool2dFastTest, TwoByTwoWindowsTilingThePlaneGiveTheReferenceResults) {
  std::mt19937 rng(20);
  const int64_t widths[] = {1, 2, 4, 8, 3, 16};
  for (const Run& run : Runs()) {
    for (int i = 0; i < 200; ++i) {
      MaxPool2dParams p{2, 2, 2, 2, 0, 0};
      p.ceil_mode = rng() % 4 == 0;
      p.relu = rng() % 3 == 0;
      const int64_t ow = widths[rng() % 6], oh = static_cast<int64_t>(1 + rng() % 9);
      const auto n = static_cast<int64_t>(1 + rng() % 3), c = static_cast<int64_t>(1 + rng() % 50);
      const int64_t h = 2 * oh + (rng() % 8 == 0), w = 2 * ow;
      const Shape shape{n, c, h, w};
      Tensor x = Tensor::Empty(shape, DType::kFloat, pool_);
      const int flavour = static_cast<int>(rng() % kFlavours);
      FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, flavour); });
      Tensor reversed = Tensor::Empty(shape, DType::kFloat, pool_).Slice(2, h - 1, -h - 1, -1);
      reversed.CopyFrom(x);
      ExpectReferenceBits(run, p, {&std::as_const(x), &std::as_const(reversed)});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(MaxPool2dTest, EachCallBumpsOutputAndIndexVersionsOnce) {
  Tensor x = Tensor::Empty(Shape{1, 3, 9, 40}, DType::kFloat, pool_, /*zero=*/true);
  const MaxPool2dParams p{3, 3, 2, 2, 1, 1};
  for (const Run& v : Runs()) {
    Tensor out = Tensor::Empty(OutputShape(x.shape(), p), DType::kFloat, pool_);
    Tensor idx = Tensor::Empty(OutputShape(x.shape(), p), DType::kInt32, pool_);
    const uint64_t out_version = out.version(), idx_version = idx.version();
    v.kernels->MaxPool2d(x, p, out, &idx);
    EXPECT_EQ(out.version(), out_version + 1) << v.label;
    EXPECT_EQ(idx.version(), idx_version + 1) << v.label;
    v.kernels->MaxPool2d(x, p, out, nullptr);
    EXPECT_EQ(out.version(), out_version + 2) << v.label;
    EXPECT_EQ(idx.version(), idx_version + 1) << v.label;
  }
}

TEST_P(MaxPool2dTest, AnEmptyBatchWritesNothing) {
  Tensor x = Tensor::Empty(Shape{0, 3, 8, 8}, DType::kFloat, pool_);
  const MaxPool2dParams p{2, 2, 2, 2, 0, 0};
  for (const Run& v : Runs()) {
    Tensor out = Tensor::Empty(Shape{0, 3, 4, 4}, DType::kFloat, pool_);
    Tensor idx = Tensor::Empty(Shape{0, 3, 4, 4}, DType::kInt32, pool_);
    v.kernels->MaxPool2d(x, p, out, &idx);
    EXPECT_EQ(out.ElementCount(), 0) << v.label;
  }
}

// ---- backward: scatter of the output gradient to the argmax positions ----

// gx = zeros, then g added at each index: restated with doubles (exact for the small integer
// gradients the oracle test uses).
std::vector<double> ScatterOracle(const Tensor& g, const Tensor& idx, const Shape& in) {
  const int64_t plane = in[2] * in[3];
  std::vector<double> gx(static_cast<size_t>(in.ElementCount()), 0.0);
  ForEachElement(g, [&](int64_t n, int64_t c, int64_t y, int64_t x, int64_t) {
    const int32_t k = idx.At<int32_t>({n, c, y, x});
    if (k >= 0) {
      gx[static_cast<size_t>((n * in[1] + c) * plane + k)] += g.At<float>({n, c, y, x});
    }
  });
  return gx;
}

// Bits equal, except that any NaN matches any NaN: where two NaN gradients meet at one
// position, which payload survives the addition is the compiler's choice of operand order.
bool SameGradient(float a, float b) {
  return (std::isnan(a) && std::isnan(b) && Bits(a) != kSentinelBits && Bits(b) != kSentinelBits) ||
         Bits(a) == Bits(b);
}

// A gradient buffer full of sentinels (NaN bits), so an element the kernel skips shows.
Tensor SentinelGrad(const Shape& in, Allocator& alloc) {
  Tensor gx = Tensor::Empty(in, DType::kFloat, alloc);
  gx.Fill(std::bit_cast<float>(kSentinelBits));
  return gx;
}

TEST_P(MaxPool2dTest, BackwardAddsEachGradientAtItsArgmaxAndZerosTheRest) {
  std::mt19937 rng(31);
  // Overlapping windows (stride < kernel) make positions collect several gradients; stride
  // above the kernel leaves positions no window covers.
  const MaxPool2dParams params[] = {{3, 3, 1, 1, 1, 1}, {3, 3, 2, 2, 1, 1}, {2, 2, 3, 3, 0, 0}};
  for (const MaxPool2dParams& p : params) {
    const Shape in{2, 5, 7, 9};
    Tensor x = Tensor::Empty(in, DType::kFloat, pool_);
    FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, 1); });  // ties
    const Shape out = OutputShape(in, p);
    Tensor y = Tensor::Empty(out, DType::kFloat, pool_);
    Tensor idx = Tensor::Empty(out, DType::kInt32, pool_);
    reference_.MaxPool2d(x, p, y, &idx);
    Tensor g = Tensor::Empty(out, DType::kFloat, pool_);
    FillWith(g, [&](int64_t, int64_t, int64_t, int64_t) {
      return static_cast<float>(static_cast<int>(rng() % 9) - 4);
    });
    const std::vector<double> expected = ScatterOracle(g, idx, in);
    for (const Run& v : Runs()) {
      Tensor gx = SentinelGrad(in, pool_);
      const uint64_t version = gx.version();
      v.kernels->MaxPool2dBackward(g, idx, gx);
      EXPECT_EQ(gx.version(), version + 1) << v.label;
      const auto got = gx.Data<float>();
      for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_EQ(static_cast<double>(got[i]), expected[i])
            << v.label << " " << Describe(p) << " element #" << i;
      }
    }
  }
}

// Random shapes, parameters, input values (NaNs, ties, signed zeros), gradient values (NaNs,
// infinities, signed zeros) and gradient and index layouts: every fast variant must give the
// reference's bits (NaNs: NaN), every element written over a sentinel-filled buffer.
TEST_P(MaxPool2dFastTest, BackwardMatchesTheReferenceBitForBit) {
  constexpr int kCases = 120;
  std::mt19937 rng(32);
  int checked = 0;
  for (int i = 0; i < kCases; ++i) {
    const Case k = RandomCase(rng);
    Tensor x = Tensor::Empty(k.in, DType::kFloat, pool_);
    const int flavour = static_cast<int>(rng() % kFlavours);
    FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, flavour); });
    Tensor y = Tensor::Empty(k.out, DType::kFloat, pool_);
    Tensor ref_idx = Tensor::Empty(k.out, DType::kInt32, pool_);
    reference_.MaxPool2d(x, k.p, y, &ref_idx);
    Placed idx = Place(k.out, DType::kInt32, kLayoutInner[rng() % 3], rng, pool_);
    idx.view.CopyFrom(ref_idx);
    Placed g = Place(k.out, DType::kFloat, kLayoutInner[rng() % 3], rng, pool_);
    const int g_flavour = static_cast<int>(rng() % kFlavours);
    FillWith(g.view,
             [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, g_flavour); });
    Tensor ref = SentinelGrad(k.in, pool_);
    reference_.MaxPool2dBackward(g.view, idx.view, ref);
    const auto r = ref.Data<float>();
    for (size_t e = 0; e < r.size(); ++e) ASSERT_NE(Bits(r[e]), kSentinelBits) << e;
    for (const Run& v : Runs()) {
      Tensor gx = SentinelGrad(k.in, pool_);
      v.kernels->MaxPool2dBackward(g.view, idx.view, gx);
      const auto o = gx.Data<float>();
      for (size_t e = 0; e < r.size(); ++e) {
        ASSERT_TRUE(SameGradient(o[e], r[e]))
            << Bits(o[e]) << " vs " << Bits(r[e]) << " " << v.label << " " << Describe(k.p)
            << " input " << k.in.ToString() << " gradient " << g.view.Describe() << " indices "
            << idx.view.Describe() << " element #" << e;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * kCases);
}

// More planes than tasks, odd plane sizes, an uneven split: large enough for the 2-thread
// pool to split the planes (several per task), with NaN ties in the input, NaNs and signed
// zeros in the gradient, NCHW and NHWC gradients.
TEST_P(MaxPool2dFastTest, BackwardSplitOverThreadsGivesTheReferenceBits) {
  std::mt19937 rng(33);
  const Shape in{2, 45, 61, 67};
  const MaxPool2dParams p{3, 3, 2, 2, 1, 1};
  const Shape out = OutputShape(in, p);
  Tensor x = Tensor::Empty(in, DType::kFloat, pool_);
  FillWith(x, [&](int64_t, int64_t c, int64_t, int64_t) {
    return RandomValue(rng, static_cast<int>(c % kFlavours));
  });
  Tensor y = Tensor::Empty(out, DType::kFloat, pool_);
  Tensor idx = Tensor::Empty(out, DType::kInt32, pool_);
  reference_.MaxPool2d(x, p, y, &idx);
  Tensor g_nchw = Tensor::Empty(out, DType::kFloat, pool_);
  FillWith(g_nchw, [&](int64_t, int64_t c, int64_t, int64_t) {
    return RandomValue(rng, static_cast<int>((c + 1) % kFlavours));
  });
  const Tensor g_nhwc = g_nchw.ToLayout(Layout::kNhwc, pool_);
  Tensor ref = SentinelGrad(in, pool_);
  reference_.MaxPool2dBackward(g_nchw, idx, ref);
  const auto r = ref.Data<float>();
  for (const Run& v : Runs()) {
    for (const Tensor* g : {&std::as_const(g_nchw), &g_nhwc}) {
      Tensor gx = SentinelGrad(in, pool_);
      v.kernels->MaxPool2dBackward(*g, idx, gx);
      const auto o = gx.Data<float>();
      for (size_t e = 0; e < r.size(); ++e) {
        ASSERT_TRUE(SameGradient(o[e], r[e]))
            << Bits(o[e]) << " vs " << Bits(r[e]) << " " << v.label << " gradient "
            << LayoutName(g->layout()) << " element #" << e;
      }
    }
  }
}

// Gradients of planes tiled by 2x2 cells (H = 2 OH, W = 2 OW), contiguous: written cell by
// cell where each index lies in its own cell (pairs_grad), scattered where one does not.
// Indices from 2x2 pools at stride 2 (relu too: -1), from 3x3 pools at stride 2 with pad 1 (the
// same shapes, argmaxes often in a neighbour's cell), and from 2x2 pools with one index moved
// to a neighbour's cell deep in a large batch: every element the reference's bits (exactly:
// no cell takes two gradients here unless an index left its cell).
TEST_P(MaxPool2dFastTest, BackwardOverTwoByTwoCellsGivesTheReferenceBits) {
  std::mt19937 rng(34);
  const int64_t widths[] = {1, 2, 4, 8, 3};
  for (int i = 0; i < 120; ++i) {
    const int64_t ow = widths[rng() % 5], oh = static_cast<int64_t>(1 + rng() % 9);
    const bool large = i % 10 == 0;
    const auto n = large ? int64_t{64} : static_cast<int64_t>(1 + rng() % 3);
    const auto c = large ? int64_t{16} : static_cast<int64_t>(1 + rng() % 40);
    const Shape in{n, c, 2 * oh, 2 * ow}, out{n, c, oh, ow};
    const int kind = static_cast<int>(rng() % 3);  // 2x2, 3x3 pad 1, 2x2 with a stray index
    MaxPool2dParams p =
        kind == 1 ? MaxPool2dParams{3, 3, 2, 2, 1, 1} : MaxPool2dParams{2, 2, 2, 2, 0, 0};
    p.relu = rng() % 3 == 0;
    ASSERT_EQ(OutputShape(in, p), out);
    Tensor x = Tensor::Empty(in, DType::kFloat, pool_);
    const int flavour = static_cast<int>(rng() % kFlavours);
    FillWith(x, [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, flavour); });
    Tensor y = Tensor::Empty(out, DType::kFloat, pool_);
    Tensor idx = Tensor::Empty(out, DType::kInt32, pool_);
    reference_.MaxPool2d(x, p, y, &idx);
    if (kind == 2 &&
        ow > 1) {  // the last plane's first output points into its right neighbour's cell
      idx.MutableData<int32_t>()[static_cast<size_t>((n * c - 1) * oh * ow)] = 2;
    }
    Tensor g = Tensor::Empty(out, DType::kFloat, pool_);
    const int g_flavour = static_cast<int>(rng() % kFlavours);
    FillWith(g, [&](int64_t, int64_t, int64_t, int64_t) { return RandomValue(rng, g_flavour); });
    Tensor ref = SentinelGrad(in, pool_);
    reference_.MaxPool2dBackward(g, idx, ref);
    const auto r = ref.Data<float>();
    for (const Run& v : Runs()) {
      Tensor gx = SentinelGrad(in, pool_);
      v.kernels->MaxPool2dBackward(g, idx, gx);
      const auto o = gx.Data<float>();
      for (size_t e = 0; e < r.size(); ++e) {
        ASSERT_TRUE(kind == 0 ? Bits(o[e]) == Bits(r[e]) : SameGradient(o[e], r[e]))
            << Bits(o[e]) << " vs " << Bits(r[e]) << " " << v.label << " kind " << kind << " input "
            << in.ToString() << " relu " << p.relu << " element #" << e;
      }
    }
  }
}

TEST_P(MaxPool2dTest, BackwardOfAnEmptyBatchWritesNothing) {
  Tensor g = Tensor::Empty(Shape{0, 3, 4, 4}, DType::kFloat, pool_);
  Tensor idx = Tensor::Empty(Shape{0, 3, 4, 4}, DType::kInt32, pool_);
  for (const Run& v : Runs()) {
    Tensor gx = Tensor::Empty(Shape{0, 3, 8, 8}, DType::kFloat, pool_);
    v.kernels->MaxPool2dBackward(g, idx, gx);
    EXPECT_EQ(gx.ElementCount(), 0) << v.label;
  }
}

INSTANTIATE_TEST_SUITE_P(All, MaxPool2dTest, ::testing::ValuesIn(kernel_test::AllVariants()),
                         kernel_test::ParamName);
INSTANTIATE_TEST_SUITE_P(Fast, MaxPool2dFastTest, ::testing::ValuesIn(kernel_test::FastVariants()),
                         kernel_test::ParamName);

}  // namespace
}  // namespace onemodel
