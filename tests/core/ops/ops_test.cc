// Forward results and input validation of the operations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/autograd/backward_record.h"
#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/accuracy.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/conv.h"
#include "core/ops/conversion.h"
#include "core/ops/elementwise.h"
#include "core/ops/linear.h"
#include "core/ops/pooling.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"

namespace onemodel {
namespace {

class OpsTest : public ::testing::Test {
 protected:
  Tensor Vec(const std::vector<float>& v, const Shape& s) {
    return ops_test::FloatTensor(v, s, pool_);
  }
  std::vector<float> Values(const Tensor& t) { return ops_test::FloatValues(t, pool_); }
  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Default()};
};

TEST_F(OpsTest, BinaryOpsBroadcastLikeNumpy) {
  const Tensor a = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor b = Vec({10, 20, 30}, Shape{3});
  EXPECT_EQ(Values(ops::Add(a, b, ctx_)), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  const Tensor col = Vec({100, 200}, Shape{2, 1});
  EXPECT_EQ(ops::Mul(b, col, ctx_).shape(), (Shape{2, 3}));
  ExpectError<TensorShapeException>(
      [&] {
        ops::Add(a, Vec({1, 2}, Shape{2}), ctx_);
      },
      {"[2, 3]", "[2]", "do not broadcast"});
}

TEST_F(OpsTest, OpsRunOnFloatAndSuggestACastForOtherTypes) {
  const Tensor i = Tensor::Empty(Shape{2}, DType::kInt32, pool_);
  ExpectError<TensorTypeException>([&] { ops::Exp(i, ctx_); }, {"Exp", "input x", "INT32", "Cast"});
  ExpectError<TensorTypeException>(
      [&] {
        ops::Add(Vec({1, 2}, Shape{2}), i, ctx_);
      },
      {"Add", "input b", "Cast"});
  const Tensor f = ops::Cast(i.Detach(), DType::kFloat, ctx_);
  EXPECT_EQ(f.dtype(), DType::kFloat);
}

TEST_F(OpsTest, StaleInputsAreRefusedByName) {
  Tensor a = Vec({1, 2}, Shape{2});
  a.Dispose();
  ExpectError<StaleTensorException>([&] { ops::Exp(a, ctx_); }, {"stale"});
}

TEST_F(OpsTest, MatMulFollowsNumpyShapes) {
  BufferPool& p = pool_;
  auto shape = [&](Shape sa, Shape sb) {
    return ops::MatMul(Tensor::Empty(sa, DType::kFloat, p, true),
                       Tensor::Empty(sb, DType::kFloat, p, true), ctx_)
        .shape();
  };
  EXPECT_EQ(shape(Shape{4}, Shape{4}), Shape{});
  EXPECT_EQ(shape(Shape{3, 4}, Shape{4}), Shape{3});
  EXPECT_EQ(shape(Shape{4}, Shape{4, 5}), Shape{5});
  EXPECT_EQ(shape(Shape{2, 1, 3, 4}, Shape{5, 4, 6}), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(Values(ops::MatMul(Vec({1, 2, 3, 4}, Shape{2, 2}), Vec({5, 6}, Shape{2}), ctx_)),
            (std::vector<float>{17, 39}));
  ExpectError<TensorShapeException>([&] { shape(Shape{3, 4}, Shape{5, 2}); }, {"MatMul", "inner"});
  ExpectError<TensorShapeException>([&] { shape(Shape{}, Shape{4}); }, {"MatMul", "at least one"});
}

TEST_F(OpsTest, MaxPool2dValidatesItsWindow) {
  const Tensor x = Tensor::Empty(Shape{1, 1, 4, 4}, DType::kFloat, pool_, true);
  ExpectError<TensorShapeException>([&] { ops::MaxPool2d(x, {2, 2, 1, 1, 2, 0}, ctx_); }, {"pad"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::MaxPool2d(x, {0, 2, 1, 1, 0, 0}, ctx_);
      },
      {"kernel"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::MaxPool2d(x, {5, 5, 1, 1, 0, 0}, ctx_);
      },
      {"too small"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::MaxPool2d(Tensor::Empty(Shape{4, 4}, DType::kFloat, pool_), {2, 2, 2, 2, 0, 0}, ctx_);
      },
      {"(N, C, H, W)"});
  EXPECT_EQ(ops::MaxPool2d(x, {3, 3, 2, 2, 1, 1}, ctx_).shape(), (Shape{1, 1, 2, 2}));
}

TEST_F(OpsTest, Conv2dValidatesItsArguments) {
  const Tensor x = Tensor::Empty(Shape{1, 4, 5, 5}, DType::kFloat, pool_, true);
  const Tensor w = Tensor::Empty(Shape{6, 2, 3, 3}, DType::kFloat, pool_, true);
  const Conv2dParams two_groups{.groups = 2};
  auto conv = [&](const Tensor& xi, const Tensor& wi, const Tensor* b, Conv2dParams p) {
    return [&, b, p] { ops::Conv2d(xi, wi, b, p, ctx_); };
  };
  ExpectError<TensorShapeException>(conv(x, w, nullptr, {}), {"weights", "C / groups = 4"});
  ExpectError<TensorShapeException>(conv(x, w, nullptr, {.groups = 3}), {"groups 3", "divide"});
  ExpectError<TensorShapeException>(conv(x, w, nullptr, {.stride_h = 0, .groups = 2}),
                                    {"strides and dilations must be >= 1"});
  ExpectError<TensorShapeException>(conv(x, w, nullptr, {.pad_right = -1, .groups = 2}), {"pads"});
  ExpectError<TensorShapeException>(conv(x, w, nullptr, {.dilation_w = 3, .groups = 2}),
                                    {"too small for the dilated kernel"});
  const Tensor b = Tensor::Empty(Shape{5}, DType::kFloat, pool_, true);
  ExpectError<TensorShapeException>(conv(x, w, &b, two_groups), {"bias must be (K) = (6)"});
  const Tensor flat = Tensor::Empty(Shape{4, 5}, DType::kFloat, pool_, true);
  ExpectError<TensorShapeException>(conv(flat, w, nullptr, two_groups), {"(N, C, H, W)"});
  const Tensor ints = Tensor::Empty(Shape{6, 2, 3, 3}, DType::kInt32, pool_, true);
  ExpectError<TensorTypeException>(conv(x, ints, nullptr, two_groups), {"Conv2d", "input w"});
  EXPECT_EQ(ops::Conv2d(x, w, nullptr, two_groups, ctx_).shape(), (Shape{1, 6, 3, 3}));
}

TEST_F(OpsTest, Conv2dSaysAnInputWithoutChannelsHasNoChannels) {
  // Before, C = 0 read "groups 1 must be >= 1 and divide the 0 input channels ...": the groups
  // were blamed for the input's empty channel dimension.
  const Tensor x = Tensor::Empty(Shape{1, 0, 5, 5}, DType::kFloat, pool_, true);
  const Tensor w = Tensor::Empty(Shape{6, 0, 3, 3}, DType::kFloat, pool_, true);
  for (const bool transposed : {false, true}) {
    ExpectError<TensorShapeException>(
        [&] {
          if (transposed) {
            ops::ConvTranspose2d(x, Tensor::Empty(Shape{0, 6, 3, 3}, DType::kFloat, pool_, true),
                                 nullptr, {}, ctx_);
          } else {
            ops::Conv2d(x, w, nullptr, {}, ctx_);
          }
        },
        {transposed ? "ConvTranspose2d: input x [1, 0, 5, 5] has 0 channels (C = 0)"
                    : "Conv2d: input x [1, 0, 5, 5] has 0 channels (C = 0)",
         "give it at least one channel"});
  }
}

TEST_F(OpsTest, Conv2dWithNoFiltersOrNoImagesGivesAnEmptyOutputAndZeroGradients) {
  // K = 0 filters or N = 0 images: an empty output, as PyTorch's conv2d gives, with every
  // kernel variant and layout, backward included (zeros for x and w). Before, the fast kernels'
  // oneDNN path (NHWC with keep_layout) failed INTERNAL: oneDNN refuses empty shapes.
  for (const auto& [xs, ws] : {std::pair{Shape{1, 4, 5, 5}, Shape{0, 4, 3, 3}},
                               std::pair{Shape{0, 4, 5, 5}, Shape{2, 4, 3, 3}}}) {
    const Tensor nchw = Vec(std::vector<float>(xs.ElementCount(), 1.0f), xs);
    const Tensor w = Vec(std::vector<float>(ws.ElementCount(), 1.0f), ws).WithRequiresGrad();
    const Shape ys{xs[0], ws[0], 3, 3};
    for (const int32_t keep : {0, 1}) {
      const Tensor x = (keep ? nchw.ToLayout(Layout::kNhwc, pool_) : nchw).WithRequiresGrad();
      for (const TensorKernels* kernels : KernelSet::Available()) {
        const OpContext ctx{pool_, *kernels};
        SCOPED_TRACE(std::string(kernels->name()) + " keep_layout " + std::to_string(keep) + " x " +
                     xs.ToString() + " w " + ws.ToString());
        const Tensor y = ops::Conv2d(x, w, nullptr, {.keep_layout = keep}, ctx);
        EXPECT_EQ(y.shape(), ys);
        // The transposed convolution back to (N, K, 5, 5) from an input of 4 channels.
        const Shape ts{xs[0], 4, 3, 3};
        const Tensor tx = Vec(std::vector<float>(ts.ElementCount(), 1.0f), ts);
        const Tensor t = ops::ConvTranspose2d(
            keep ? tx.ToLayout(Layout::kNhwc, pool_) : tx,
            Vec(std::vector<float>(4 * ws[0] * 9, 1.0f), Shape{4, ws[0], 3, 3}), nullptr,
            {.conv = {.keep_layout = keep}}, ctx);
        EXPECT_EQ(t.shape(), (Shape{xs[0], ws[0], 5, 5}));
        const Tensor g = Tensor::Empty(ys, DType::kFloat, pool_, true);
        const std::vector<Tensor> grads = Backward(y, &g, std::vector<Tensor>{x, w}, ctx);
        for (float v : Values(grads[0])) EXPECT_EQ(v, 0.0f);
        for (float v : Values(grads[1])) EXPECT_EQ(v, 0.0f);
        EXPECT_EQ(grads[1].shape(), ws);
      }
    }
  }
}

TEST_F(OpsTest, Conv2dWithPadsNear2To31GivesTheExactKernelsOutputWithEveryVariant) {
  // oneDNN cannot describe padded extents past 32 bits (it failed INTERNAL "could not create a
  // descriptor" on NHWC with keep_layout): the fast kernels compute these by im2col instead.
  constexpr int32_t kBig = std::numeric_limits<int32_t>::max();
  struct Case {
    Shape xs, ws;
    Conv2dParams p;
  };
  for (const Case& c :
       {Case{{1, 3, 5, 5}, {4, 3, 3, 3}, {.stride_h = kBig, .pad_top = kBig, .keep_layout = 1}},
        Case{{1, 3, 1, 1},
             {4, 3, 7, 7},
             {.stride_h = kBig, .stride_w = kBig, .pad_top = kBig, .pad_left = kBig,
              .pad_bottom = kBig, .pad_right = kBig, .keep_layout = 1}}}) {
    std::vector<float> xv(c.xs.ElementCount()), wv(c.ws.ElementCount());
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.125f * static_cast<float>(i % 5) - 0.25f;
    const Tensor x = Vec(xv, c.xs).ToLayout(Layout::kNhwc, pool_);
    const Tensor w = Vec(wv, c.ws);
    const OpContext exact{pool_, KernelSet::Get(KernelChoice::kExact)};
    const std::vector<float> expected = Values(ops::Conv2d(x, w, nullptr, c.p, exact));
    for (const TensorKernels* kernels : KernelSet::Available()) {
      SCOPED_TRACE(std::string(kernels->name()) + " x " + c.xs.ToString());
      const Tensor y = ops::Conv2d(x, w, nullptr, c.p, OpContext{pool_, *kernels});
      const std::vector<float> got = Values(y);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5f) << i;
    }
  }
}

TEST_F(OpsTest, Conv2dAddsTheBiasAndWritesNchw) {
  // x = 1..8 as (1, 2, 2, 2) in NHWC, w picks channel 1 of each position with weight 1.
  const Tensor x = Vec({1, 2, 3, 4, 5, 6, 7, 8}, Shape{1, 2, 2, 2}).ToLayout(Layout::kNhwc, pool_);
  const Tensor w = Vec({0, 1}, Shape{1, 2, 1, 1});
  const Tensor b = Vec({0.5f}, Shape{1});
  const Tensor y = ops::Conv2d(x, w, &b, {}, ctx_);
  EXPECT_TRUE(y.IsContiguous());
  EXPECT_EQ(Values(y), (std::vector<float>{5.5f, 6.5f, 7.5f, 8.5f}));
}

TEST_F(OpsTest, Conv2dKeepLayoutWritesAnNhwcInputsLayoutWithTheSameValues) {
  // Exact kernels: the NHWC output and the input gradient (from an NHWC output gradient) hold
  // the NCHW path's values bit for bit; an NCHW input keeps the NCHW output.
  const OpContext exact{pool_, KernelSet::Get(KernelChoice::kExact)};
  std::vector<float> xv(2 * 3 * 5 * 4), wv(6 * 3 * 3 * 2), gv(2 * 6 * 3 * 4);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::cos(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = std::sin(1.3f * static_cast<float>(i));
  const Tensor nchw = Vec(xv, Shape{2, 3, 5, 4}).WithRequiresGrad();
  const Tensor nhwc = nchw.ToLayout(Layout::kNhwc, pool_).WithRequiresGrad();
  const Tensor w = Vec(wv, Shape{6, 3, 3, 2});
  const Tensor b = Vec({1, 2, 3, 4, 5, 6}, Shape{6});
  const Conv2dParams p{.stride_h = 2, .pad_top = 1, .pad_left = 1, .pad_bottom = 1};
  Conv2dParams keep = p;
  keep.keep_layout = 1;
  const Tensor want = ops::Conv2d(nchw, w, &b, p, exact);
  const Tensor got = ops::Conv2d(nhwc, w, &b, keep, exact);
  EXPECT_EQ(got.layout(), Layout::kNhwc);
  EXPECT_EQ(Values(got), Values(want));
  EXPECT_TRUE(ops::Conv2d(nchw, w, &b, keep, exact).IsContiguous());
  const Tensor g = Vec(gv, want.shape());
  const Tensor g_nhwc = g.ToLayout(Layout::kNhwc, pool_);
  const std::vector<Tensor> want_grad = Backward(want, &g, std::vector<Tensor>{nchw}, exact);
  const std::vector<Tensor> got_grad = Backward(got, &g_nhwc, std::vector<Tensor>{nhwc}, exact);
  EXPECT_EQ(got_grad[0].layout(), Layout::kNhwc);
  EXPECT_EQ(Values(got_grad[0]), Values(want_grad[0]));
  ConvTranspose2dParams tkeep{.conv = keep};
  const Tensor wt = Vec(wv, Shape{3, 6, 3, 2});
  const Tensor t = ops::ConvTranspose2d(nhwc, wt, nullptr, tkeep, exact);
  EXPECT_EQ(t.layout(), Layout::kNhwc);
  EXPECT_EQ(Values(t), Values(ops::ConvTranspose2d(nchw, wt, nullptr, {.conv = p}, exact)));
  keep.keep_layout = 2;
  ExpectError<TensorShapeException>([&] { ops::Conv2d(nhwc, w, &b, keep, exact); },
                                    {"keep_layout must be 0", "got 2"});
}

TEST_F(OpsTest, ConvTranspose2dValidatesItsArguments) {
  const Tensor x = Tensor::Empty(Shape{1, 4, 3, 3}, DType::kFloat, pool_, true);
  const Tensor w = Tensor::Empty(Shape{4, 3, 2, 2}, DType::kFloat, pool_, true);
  auto convt = [&](const Tensor& wi, const Tensor* b, ConvTranspose2dParams p) {
    return [&, b, p] { ops::ConvTranspose2d(x, wi, b, p, ctx_); };
  };
  ExpectError<TensorShapeException>(convt(w, nullptr, {.conv = {}, .output_padding_h = 1}),
                                    {"ConvTranspose2d", "output_padding (1, 0)", "stride"});
  ExpectError<TensorShapeException>(convt(w, nullptr, {.conv = {}, .output_padding_w = -1}),
                                    {"output_padding (0, -1)", ">= 0"});
  const Tensor w5 = Tensor::Empty(Shape{5, 3, 2, 2}, DType::kFloat, pool_, true);
  ExpectError<TensorShapeException>(convt(w5, nullptr, {}), {"weights", "(C = 4, K / groups"});
  ExpectError<TensorShapeException>(convt(w, nullptr, {.conv = {.groups = 3}}),
                                    {"groups 3", "divide"});
  const Tensor b = Tensor::Empty(Shape{3}, DType::kFloat, pool_, true);
  ExpectError<TensorShapeException>(convt(w, &b, {.conv = {.groups = 2}}),
                                    {"bias must be (K) = (6)"});
  ExpectError<TensorShapeException>(convt(w, nullptr, {.conv = {.pad_top = 2, .pad_bottom = 2}}),
                                    {"pads remove the whole output", "use smaller pads"});
  // Below the dilation, an output_padding at the stride is allowed (as PyTorch).
  EXPECT_EQ(
      ops::ConvTranspose2d(x, w, nullptr, {.conv = {.dilation_h = 2}, .output_padding_h = 1}, ctx_)
          .shape(),
      (Shape{1, 3, 6, 4}));
}

TEST_F(OpsTest, ConvTranspose2dSpreadsEachInputOverItsWindowInEveryKernel) {
  const Tensor x = Vec({1, 2, 3, 4}, Shape{1, 1, 2, 2});
  const Tensor ones = Vec({1, 1, 1, 1}, Shape{1, 1, 2, 2});
  const Tensor b = Vec({0.5f}, Shape{1});
  for (const TensorKernels* kernels : KernelSet::Available()) {
    const OpContext ctx{pool_, *kernels};
    // Stride 2: each input fills its own 2x2 block; output_padding adds a row and a column
    // that only the bias reaches.
    const Tensor y = ops::ConvTranspose2d(
        x, ones, &b,
        {.conv = {.stride_h = 2, .stride_w = 2}, .output_padding_h = 1, .output_padding_w = 1},
        ctx);
    ASSERT_EQ(y.shape(), (Shape{1, 1, 5, 5})) << kernels->name();
    EXPECT_EQ(Values(y), (std::vector<float>{1.5f, 1.5f, 2.5f, 2.5f, 0.5f,  //
                                             1.5f, 1.5f, 2.5f, 2.5f, 0.5f,  //
                                             3.5f, 3.5f, 4.5f, 4.5f, 0.5f,  //
                                             3.5f, 3.5f, 4.5f, 4.5f, 0.5f,  //
                                             0.5f, 0.5f, 0.5f, 0.5f, 0.5f}))
        << kernels->name();
    // Dilation 2 with output_padding 1 at stride 1: taps land two apart, the extra row and
    // column stay zero (the kernels take the output's extents, not Conv2d's formula).
    const Tensor d = ops::ConvTranspose2d(
        x, ones, nullptr,
        {.conv = {.dilation_h = 2, .dilation_w = 2}, .output_padding_h = 1, .output_padding_w = 1},
        ctx);
    ASSERT_EQ(d.shape(), (Shape{1, 1, 5, 5})) << kernels->name();
    EXPECT_EQ(Values(d), (std::vector<float>{1, 2, 1, 2, 0,  //
                                             3, 4, 3, 4, 0,  //
                                             1, 2, 1, 2, 0,  //
                                             3, 4, 3, 4, 0,  //
                                             0, 0, 0, 0, 0}))
        << kernels->name();
  }
}

TEST_F(OpsTest, ConvTranspose2dFastIsWithinConv2dsInputGradientBoundOfTheReference) {
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> value(-1, 1);
  auto random = [&](const Shape& shape) {
    Tensor t = Tensor::Empty(shape, DType::kFloat, pool_);
    for (float& v : t.MutableData<float>()) v = value(rng);
    return t;
  };
  const OpContext exact{pool_, KernelSet::Get(KernelChoice::kExact)};
  for (int t = 0; t < 40; ++t) {
    const int32_t groups = 1 + static_cast<int32_t>(rng() % 2), s = 1 + rng() % 3,
                  dilation = 1 + rng() % 2, kh = 1 + rng() % 3, kw = 1 + rng() % 3;
    const ConvTranspose2dParams p{.conv = {.stride_h = s,
                                           .stride_w = s,
                                           .pad_top = static_cast<int32_t>(rng() % 2),
                                           .pad_left = 0,
                                           .pad_bottom = 0,
                                           .pad_right = static_cast<int32_t>(rng() % 2),
                                           .dilation_h = dilation,
                                           .dilation_w = dilation,
                                           .groups = groups},
                                  .output_padding_h = static_cast<int32_t>(rng() % s),
                                  .output_padding_w = 0};
    const int64_t c = groups * (1 + rng() % 3), kg = 1 + rng() % 3;
    const Tensor x = random(Shape{2, c, 2 + static_cast<int64_t>(rng() % 5), 3});
    const Tensor w = random(Shape{c, kg, kh, kw});
    const Tensor b = random(Shape{kg * groups});
    const Tensor want = ops::ConvTranspose2d(x, w, &b, p, exact);
    // S, each output's sum of |terms|: the same op over magnitudes (in double, rounded once).
    const Tensor mag =
        ops::ConvTranspose2d(ops::Abs(x, exact), ops::Abs(w, exact), nullptr, p, exact);
    for (const TensorKernels* kernels : KernelSet::Available()) {
      const Tensor got = ops::ConvTranspose2d(x, w, &b, p, OpContext{pool_, *kernels});
      const auto g = got.Data<float>(), r = want.Data<float>(), m = mag.Data<float>();
      for (size_t e = 0; e < g.size(); ++e) {
        const double bound = *MatMulErrorBound(c / groups * kh * kw, m[e] * (1 + 1e-6)) +
                             std::ldexp(std::fabs(double{r[e]}), -23);
        ASSERT_LE(std::fabs(double{g[e]} - r[e]), bound)
            << kernels->name() << " element " << e << " case " << t;
      }
    }
  }
}

TEST_F(OpsTest, Conv2dScratchComesFromTheArena) {
  // After one warm-up run, a run in the same arena rents nothing from the pool, with every
  // kernel variant (the fast ones need im2col scratch, or oneDNN's reordered weights and
  // scratchpad for NHWC with keep_layout), backward included.
  const Tensor nchw = Tensor::Empty(Shape{2, 8, 12, 12}, DType::kFloat, pool_, true);
  Tensor w = Tensor::Empty(Shape{16, 8, 3, 3}, DType::kFloat, pool_, true).WithRequiresGrad();
  const Tensor g = Tensor::Empty(Shape{2, 11, 11, 16}, DType::kFloat, pool_, true);
  const Tensor g_nhwc = g.Permute({0, 3, 1, 2});  // y's (2, 16, 11, 11), dense NHWC
  for (const int32_t keep : {0, 1}) {
    Tensor x = (keep ? nchw.ToLayout(Layout::kNhwc, pool_) : nchw).WithRequiresGrad();
    for (const TensorKernels* kernels : KernelSet::Available()) {
      Arena arena(pool_);
      const OpContext ctx{arena, *kernels};
      auto run = [&] {
        const Tensor y =
            ops::Conv2d(x, w, nullptr, {.pad_top = 1, .pad_left = 1, .keep_layout = keep}, ctx);
        const std::vector<Tensor> inputs{x, w};
        if (keep) {
          Backward(y, &g_nhwc, inputs, ctx);
        } else {
          Backward(ops::Sum(y, {}, false, ctx), nullptr, inputs, ctx);
        }
        arena.Reset();
      };
      run();
      const PoolStats before = pool_.Stats();
      run();
      const PoolStats after = pool_.Stats();
      EXPECT_EQ(after.hits + after.misses, before.hits + before.misses) << kernels->name();
    }
  }
}

TEST_F(OpsTest, PoolingOpsValidateDilationAndShapeTheirOutputs) {
  const Tensor x = Tensor::Empty(Shape{1, 1, 4, 4}, DType::kFloat, pool_, true);
  MaxPool2dParams dilated{2, 2, 1, 1, 0, 0};
  dilated.dilation_w = 0;
  ExpectError<TensorShapeException>([&] { ops::MaxPool2d(x, dilated, ctx_); },
                                    {"MaxPool2d", "width", "dilation 0"});
  ExpectError<TensorShapeException>([&] { ops::ReluMaxPool2d(x, dilated, ctx_); },
                                    {"ReluMaxPool2d", "dilation"});
  dilated.dilation_w = 4;  // extent 5 > 4
  ExpectError<TensorShapeException>([&] { ops::MaxPool2d(x, dilated, ctx_); }, {"too small"});
  MaxPool2dParams ceil{2, 2, 3, 3, 1, 1};
  ceil.ceil_mode = true;  // ceil(4 / 3) + 1 = 3, but the third window starts in the padding
  EXPECT_EQ(ops::MaxPool2d(x, ceil, ctx_).shape(), (Shape{1, 1, 2, 2}));
  ExpectError<TensorShapeException>(
      [&] {
        ops::AvgPool2d(x, {2, 2, 1, 1, 2, 0, false, false}, ctx_);
      },
      {"AvgPool2d", "pad"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::AvgPool2d(Tensor::Empty(Shape{4, 4}, DType::kFloat, pool_), {}, ctx_);
      },
      {"(N, C, H, W)"});
  EXPECT_EQ(ops::AvgPool2d(x, {3, 3, 2, 2, 1, 1, true, false}, ctx_).shape(), (Shape{1, 1, 3, 3}));
  ExpectError<TensorShapeException>(
      [&] {
        ops::GlobalAvgPool2d(Tensor::Empty(Shape{1, 2, 0, 3}, DType::kFloat, pool_), ctx_);
      },
      {"GlobalAvgPool2d", "height and width"});
  EXPECT_EQ(ops::GlobalAvgPool2d(x, ctx_).shape(), (Shape{1, 1, 1, 1}));
}

TEST_F(OpsTest, ReluMaxPool2dEqualsReluThenMaxPool2dAndRecordsMinusOne) {
  std::vector<float> v(2 * 3 * 6 * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(int(i * 37 % 23) - 15);
  const Tensor x = Vec(v, Shape{2, 3, 6, 7}).WithRequiresGrad();
  const MaxPool2dParams p{3, 2, 2, 2, 1, 1};
  const Tensor fused = ops::ReluMaxPool2d(x, p, ctx_);
  const Tensor apart = ops::MaxPool2d(ops::Unary(UnaryOp::kRelu, x, ctx_), p, ctx_);
  ASSERT_EQ(fused.shape(), apart.shape());
  const auto a = fused.Data<float>();
  const auto b = apart.Data<float>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << i;
  const auto* record = dynamic_cast<const BackwardRecord*>(fused.autograd_node().get());
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(OpKindName(record->op()), "ReluMaxPool2d");
  const auto idx = record->Owned(0).Data<int32_t>();
  int minus_one = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    EXPECT_EQ(idx[i] < 0, a[i] == 0.0f) << i;  // -1 exactly where no element is positive
    minus_one += idx[i] == -1;
  }
  EXPECT_GT(minus_one, 0);
}

TEST_F(OpsTest, ReductionsAndSoftmax) {
  const Tensor a = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const int axis0[] = {0}, axis1[] = {-1};
  EXPECT_EQ(Values(ops::Sum(a, axis0, false, ctx_)), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(ops::Sum(a, axis1, true, ctx_).shape(), (Shape{2, 1}));
  EXPECT_EQ(Values(ops::Mean(a, {}, false, ctx_)), (std::vector<float>{3.5f}));
  const int twice[] = {1, -1};
  ExpectError<TensorShapeException>([&] { ops::Sum(a, twice, false, ctx_); }, {"twice"});
  const Tensor s = ops::Softmax(a, 1, ctx_);
  const auto v = Values(s);
  EXPECT_NEAR(v[0] + v[1] + v[2], 1.0f, 1e-6);
  EXPECT_NEAR(std::exp(Values(ops::LogSoftmax(a, 1, ctx_))[2]), v[2], 1e-6);
  ExpectError<TensorShapeException>([&] { ops::Softmax(a, 2, ctx_); }, {"axis 2", "rank 2"});
}

TEST_F(OpsTest, CastBetweenIntegerTypesDoesNotRecord) {
  const Tensor x = Vec({1.5f, -2.5f}, Shape{2}).WithRequiresGrad();
  const Tensor i = ops::Cast(x, DType::kInt32, ctx_);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_EQ(i.At<int32_t>({1}), -2);
  EXPECT_TRUE(ops::Cast(x, DType::kFloat16, ctx_).requires_grad());
}

TEST_F(OpsTest, ToLayoutBlockedRefusesTensorsThatRequireGrad) {
  const Tensor x = Tensor::Empty(Shape{1, 3, 2, 2}, DType::kFloat, pool_, true).WithRequiresGrad();
  ExpectError<TensorLayoutException>([&] { ops::ToLayout(x, Layout::kBlocked, ctx_, 4); },
                                     {"cannot require gradients"});
  EXPECT_EQ(ops::ToLayout(x, Layout::kNhwc, ctx_).layout(), Layout::kNhwc);
}

TEST_F(OpsTest, ViewOpsShareTheBuffer) {
  const Tensor a = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(ops::Transpose(a, 0, 1, ctx_).buffer(), a.buffer());
  EXPECT_EQ(ops::Slice(a, 1, 0, 3, 2, ctx_).buffer(), a.buffer());
  const int64_t flat[] = {-1};
  EXPECT_EQ(ops::Reshape(a, flat, ctx_).buffer(), a.buffer());
  EXPECT_NE(ops::Reshape(ops::Transpose(a, 0, 1, ctx_), flat, ctx_).buffer(), a.buffer())
      << "a transposed reshape needs a copy";
}

TEST_F(OpsTest, CopyAlwaysMakesANewRowMajorBuffer) {
  const Tensor a = Vec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor same = ops::Copy(a, ctx_);
  EXPECT_NE(same.buffer(), a.buffer()) << "a contiguous input is copied too";
  EXPECT_EQ(same.Data<float>()[5], 6.0f);
  const Tensor t = ops::Copy(ops::Transpose(a, 0, 1, ctx_), ctx_);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_EQ(t.At<float>({2, 0}), 3.0f);
  EXPECT_EQ(t.At<float>({0, 1}), 4.0f);
}

}  // namespace
}  // namespace onemodel
