// Conv2d and ConvTranspose2d with weights pre-blocked in the BlockedWeights family (spec 5):
// the same bits as with plain weights in every kernel variant (groups, tail blocks, strided
// and channels-last inputs), the input gradient through blocked weights, and what blocked
// weights refuse (gradients, ordinary ops, the activation family as weights, stale handles).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/conv.h"
#include "core/ops/conversion.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/tensor/grad_mode.h"
#include "tests/core/ops/expect_error.h"

namespace onemodel {
namespace {

class ConvBlockedWeights : public ::testing::Test {
 protected:
  // A tensor of `shape` with values uniform in [-1, 1).
  Tensor Random(const Shape& shape) {
    Tensor t = Tensor::Empty(shape, DType::kFloat, pool_);
    std::uniform_real_distribution<float> value(-1, 1);
    for (float& v : t.MutableData<float>()) v = value(rng_);
    return t;
  }
  int32_t Pick(int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng_);
  }
  // x (N, C, H, W) as NCHW, NHWC or a reversed-width strided view, by `form` 0, 1, 2.
  Tensor Input(const Shape& shape, int form) {
    const Tensor x = Random(shape);
    if (form == 1) return x.ToLayout(Layout::kNhwc, pool_);
    if (form == 2) return x.Slice(3, -1, -static_cast<int64_t>(shape[3]) - 1, -1);
    return x;
  }

  BufferPool pool_;
  std::mt19937 rng_{1616};
};

// The bytes of a float tensor's values in row-major order.
std::vector<uint32_t> Bits(const Tensor& t, Allocator& allocator) {
  const Tensor c = t.Contiguous(allocator);
  const std::span<const std::byte> raw = c.RawData();
  std::vector<uint32_t> bits(raw.size() / 4);
  std::memcpy(bits.data(), raw.data(), raw.size());
  return bits;
}

TEST_F(ConvBlockedWeights, Conv2dGivesTheSameBitsAsPlainWeightsInEveryVariant) {
  int tails = 0, grouped = 0;
  for (int t = 0; t < 60; ++t) {
    const int32_t groups = Pick(1, 3), stride = Pick(1, 2), dilation = Pick(1, 2);
    const int32_t kh = Pick(1, 3), kw = Pick(1, 3), block = std::vector<int32_t>{4, 8, 16}[t % 3];
    const Conv2dParams p{.stride_h = stride,
                         .stride_w = Pick(1, 3),
                         .pad_top = Pick(0, 1),
                         .pad_left = Pick(0, 2),
                         .pad_bottom = Pick(0, 1),
                         .pad_right = 0,
                         .dilation_h = dilation,
                         .dilation_w = 1,
                         .groups = groups};
    const int64_t c = groups * Pick(1, 3), k = groups * Pick(1, 7);
    const Tensor x = Input(Shape{Pick(1, 2), c, Pick(5, 8), Pick(5, 8)}, t % 3);
    const Tensor w = Random(Shape{k, c / groups, kh, kw});
    const Tensor b = Random(Shape{k});
    const Tensor blocked = w.ToLayout(Layout::kBlockedWeights, pool_, block);
    tails += k % block != 0;
    grouped += groups > 1;
    const Tensor* bias = t % 2 ? &b : nullptr;
    for (const TensorKernels* kernels : KernelSet::Available()) {
      const OpContext ctx{pool_, *kernels};
      const Tensor want = ops::Conv2d(x, w, bias, p, ctx);
      const Tensor got = ops::Conv2d(x, blocked, bias, p, ctx);
      ASSERT_EQ(got.shape(), want.shape());
      ASSERT_EQ(Bits(got, pool_), Bits(want, pool_)) << kernels->name() << " case " << t;
    }
  }
  EXPECT_GT(tails, 40);
  EXPECT_GT(grouped, 30);
}

TEST_F(ConvBlockedWeights, ConvTranspose2dGivesTheSameBitsAsPlainWeightsInEveryVariant) {
  for (int t = 0; t < 30; ++t) {
    const int32_t groups = Pick(1, 2), stride = Pick(1, 3);
    const ConvTranspose2dParams p{
        .conv = {.stride_h = stride, .stride_w = 1, .pad_top = Pick(0, 1), .groups = groups},
        .output_padding_h = Pick(0, stride - 1),
        .output_padding_w = 0};
    // Weights (C, K / groups, KH, KW) are blocked along C, 5 to 15 of them in blocks of 4.
    const int64_t c = groups * Pick(3, 7);
    const Tensor x = Input(Shape{2, c, Pick(2, 5), 3}, t % 3);
    const Tensor w = Random(Shape{c, Pick(1, 3), Pick(1, 3), Pick(1, 2)});
    const Tensor b = Random(Shape{w.shape()[1] * groups});
    const Tensor blocked = w.ToLayout(Layout::kBlockedWeights, pool_, 4);
    for (const TensorKernels* kernels : KernelSet::Available()) {
      const OpContext ctx{pool_, *kernels};
      ASSERT_EQ(Bits(ops::ConvTranspose2d(x, blocked, &b, p, ctx), pool_),
                Bits(ops::ConvTranspose2d(x, w, &b, p, ctx), pool_))
          << kernels->name() << " case " << t;
    }
  }
}

TEST_F(ConvBlockedWeights, InputAndBiasGradientsFlowThroughBlockedWeights) {
  const Conv2dParams p{.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 2};
  const Tensor x = Random(Shape{2, 4, 5, 5}).WithRequiresGrad();
  const Tensor b = Random(Shape{6}).WithRequiresGrad();
  const Tensor w = Random(Shape{6, 2, 3, 3});
  const Tensor blocked = w.ToLayout(Layout::kBlockedWeights, pool_, 4);
  for (const TensorKernels* kernels : KernelSet::Available()) {
    const OpContext ctx{pool_, *kernels};
    const Tensor plain_out = ops::Conv2d(x, w, &b, p, ctx);
    const Tensor blocked_out = ops::Conv2d(x, blocked, &b, p, ctx);
    const Tensor g = Random(plain_out.shape());
    const std::vector<Tensor> want = Backward(plain_out, &g, std::vector<Tensor>{x, b}, ctx);
    const std::vector<Tensor> got = Backward(blocked_out, &g, std::vector<Tensor>{x, b}, ctx);
    EXPECT_EQ(Bits(got[0], pool_), Bits(want[0], pool_)) << kernels->name();
    EXPECT_EQ(Bits(got[1], pool_), Bits(want[1], pool_)) << kernels->name();
  }
}

TEST_F(ConvBlockedWeights, BlockedWeightsCannotRequireGradients) {
  const Tensor w = Random(Shape{5, 3, 3, 3});
  const Tensor blocked = w.ToLayout(Layout::kBlockedWeights, pool_, 4);
  EXPECT_THROW(blocked.WithRequiresGrad(), TensorLayoutException);
  const OpContext ctx{pool_, KernelSet::Default()};
  const Tensor leaf = w.WithRequiresGrad();
  ExpectError<TensorLayoutException>([&] { ops::ToLayout(leaf, Layout::kBlockedWeights, ctx, 4); },
                                     {"ToLayout(BlockedWeights)", "requires gradients", "NoGrad"});
  NoGrad no_grad;
  const Tensor packed = ops::ToLayout(leaf, Layout::kBlockedWeights, ctx, 4);
  EXPECT_EQ(packed.layout(), Layout::kBlockedWeights);
  EXPECT_FALSE(packed.requires_grad());
}

TEST_F(ConvBlockedWeights, OrdinaryOpsRefuseBlockedWeightsNamingTheWayBack) {
  const OpContext ctx{pool_, KernelSet::Default()};
  const Tensor blocked = Random(Shape{5, 3, 3, 3}).ToLayout(Layout::kBlockedWeights, pool_, 4);
  ExpectError<TensorLayoutException>([&] { ops::Add(blocked, blocked, ctx); },
                                     {"Add", "weights blocked by 4", "ToLayout(NCHW)"});
  ExpectError<TensorLayoutException>([&] { ops::Cast(blocked, DType::kDouble, ctx); },
                                     {"Cast", "ToLayout(NCHW)"});
  EXPECT_THROW(blocked.Contiguous(pool_), TensorLayoutException);
  // As Conv2d's input x, blocked weights are just a blocked tensor.
  const Tensor w = Random(Shape{2, 5, 1, 1});
  ExpectError<TensorLayoutException>([&] { ops::Conv2d(blocked, w, nullptr, {}, ctx); },
                                     {"Conv2d", "input x", "ToLayout(NCHW)"});
}

TEST_F(ConvBlockedWeights, ActivationBlocksAreNotWeights) {
  const OpContext ctx{pool_, KernelSet::Default()};
  const Tensor x = Random(Shape{1, 3, 4, 4});
  const Tensor channels = Random(Shape{5, 3, 3, 3}).ToLayout(Layout::kBlocked, pool_, 4);
  ExpectError<TensorLayoutException>(
      [&] { ops::Conv2d(x, channels, nullptr, {}, ctx); },
      {"Conv2d", "input w", "ToLayout(NCHW) or ToLayout(BlockedWeights)"});
}

TEST_F(ConvBlockedWeights, StaleBlockedWeightsThrow) {
  const OpContext ctx{pool_, KernelSet::Default()};
  const Tensor x = Random(Shape{1, 3, 4, 4});
  Tensor blocked = Random(Shape{5, 3, 3, 3}).ToLayout(Layout::kBlockedWeights, pool_, 4);
  const Tensor copy = blocked;
  blocked.Dispose();
  EXPECT_THROW(ops::Conv2d(x, copy, nullptr, {}, ctx), StaleTensorException);
  EXPECT_THROW(copy.ToLayout(Layout::kNchw, pool_), StaleTensorException);
}

TEST_F(ConvBlockedWeights, RewritingSavedBlockedWeightsFailsTheBackward) {
  const OpContext ctx{pool_, KernelSet::Default()};
  const Tensor x = Random(Shape{1, 3, 4, 4}).WithRequiresGrad();
  Tensor blocked = Random(Shape{5, 3, 3, 3}).ToLayout(Layout::kBlockedWeights, pool_, 4);
  const Tensor y = ops::Sum(ops::Conv2d(x, blocked, nullptr, {}, ctx), {}, false, ctx);
  blocked.MutableData<float>()[0] = 2.0f;  // the saved weights changed since the forward
  EXPECT_THROW(Backward(y, nullptr, std::vector<Tensor>{x}, ctx), TensorVersionException);
}

TEST_F(ConvBlockedWeights, UnblockingUsesTheRunsArenaAndStopsGrowingAfterWarmUp) {
  Arena arena(pool_);
  const OpContext ctx{arena, KernelSet::Default()};
  const Tensor x = Random(Shape{2, 4, 6, 6});
  const Tensor w = Random(Shape{20, 4, 3, 3});
  const Tensor blocked = w.ToLayout(Layout::kBlockedWeights, pool_, 16);
  const std::vector<uint32_t> want = Bits(ops::Conv2d(x, w, nullptr, {}, ctx), pool_);
  const int64_t plain_bytes = arena.Stats().used_bytes;
  arena.Reset();
  int64_t growth = 0;
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(Bits(ops::Conv2d(x, blocked, nullptr, {}, ctx), pool_), want);
    // The unblocked (20, 4, 3, 3) weights came from the arena, nowhere else.
    EXPECT_GE(arena.Stats().used_bytes - plain_bytes, 20 * 4 * 3 * 3 * 4);
    arena.Reset();
    if (run == 0) growth = arena.Stats().growth_events;
  }
  EXPECT_EQ(arena.Stats().growth_events, growth);
}

}  // namespace
}  // namespace onemodel
