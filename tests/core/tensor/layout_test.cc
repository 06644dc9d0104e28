// Tests of layouts (spec 5): LayoutOf from strides, ToLayout between NCHW, NHWC and the two
// blocked families, channel blocks and weight blocks (values and logical shape preserved, the
// blocked physical order and zero tail), and what blocked tensors refuse.
#include "core/tensor/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/exceptions.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/shape/shape.h"
#include "core/shape/strides.h"
#include "core/tensor/tensor.h"
#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel {
namespace {

using tensor_test::Iota;
using tensor_test::Values;

using Floats = std::vector<float>;

// Where the blocked element (n, c, h, w) lives in the physical span: Blocked's order N,
// ceil(C/B), H, W, B, or BlockedWeights' order ceil(K/B), C, KH, KW, B with (n, c, h, w) read
// as (k, c, i, j).
int64_t BlockedIndex(const Shape& nchw, int64_t block, Layout family, int64_t n, int64_t c,
                     int64_t h, int64_t w) {
  const int64_t height = nchw[2], width = nchw[3];
  if (family == Layout::kBlockedWeights) {
    return ((n / block * nchw[1] + c) * height + h) * width * block + w * block + n % block;
  }
  const int64_t blocks = (nchw[1] + block - 1) / block;
  return ((n * blocks + c / block) * height + h) * width * block + w * block + c % block;
}

// Checks that `blocked` holds `plain`'s logical values in the physical order of `family`,
// with zeros in the tail lanes of the last block.
void ExpectBlockedHolds(const Tensor& blocked, const Tensor& plain, int32_t block,
                        Layout family = Layout::kBlocked) {
  const Shape& s = plain.shape();
  ASSERT_EQ(blocked.shape(), s);
  ASSERT_EQ(blocked.layout(), family);
  ASSERT_EQ(blocked.block_size(), block);
  const int64_t physical = family == Layout::kBlockedWeights
                               ? (s[0] + block - 1) / block * s[1] * s[2] * s[3] * block
                               : (s[1] + block - 1) / block * s[0] * s[2] * s[3] * block;
  const std::span<const float> data = blocked.Data<float>();
  ASSERT_EQ(static_cast<int64_t>(data.size()), physical);
  std::vector<bool> seen(data.size(), false);
  for (int64_t n = 0; n < s[0]; ++n) {
    for (int64_t c = 0; c < s[1]; ++c) {
      for (int64_t h = 0; h < s[2]; ++h) {
        for (int64_t w = 0; w < s[3]; ++w) {
          const size_t at = static_cast<size_t>(BlockedIndex(s, block, family, n, c, h, w));
          ASSERT_EQ(data[at], plain.At<float>({n, c, h, w}))
              << "element (" << n << ", " << c << ", " << h << ", " << w << ")";
          seen[at] = true;
        }
      }
    }
  }
  for (size_t i = 0; i < data.size(); ++i) {
    if (!seen[i]) {
      ASSERT_EQ(data[i], 0.0f) << "tail element " << i;
    }
  }
}

// --- LayoutOf -----------------------------------------------------------------------------------

TEST(LayoutOf, ContiguousRankFourIsNchw) {
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{60, 20, 5, 1}), Layout::kNchw);
}

TEST(LayoutOf, ChannelsLastStridesAreNhwc) {
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{60, 1, 15, 3}), Layout::kNhwc);
  EXPECT_EQ(NhwcStrides(Shape{2, 3, 4, 5}), (Strides{60, 1, 15, 3}));
}

TEST(LayoutOf, ExtentOneDimensionsAreIgnored) {
  // N = 1: any batch stride.
  EXPECT_EQ(LayoutOf(Shape{1, 3, 4, 5}, Strides{999, 20, 5, 1}), Layout::kNchw);
  EXPECT_EQ(LayoutOf(Shape{1, 3, 4, 5}, Strides{-7, 1, 15, 3}), Layout::kNhwc);
  // W = 1 in NHWC: the W stride is free.
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 1}, Strides{12, 1, 3, 42}), Layout::kNhwc);
}

TEST(LayoutOf, BothMatchingPatternsReportNchw) {
  // C = 1: NCHW and NHWC are the same memory order.
  EXPECT_EQ(LayoutOf(Shape{2, 1, 4, 5}, Strides{20, 20, 5, 1}), Layout::kNchw);
  EXPECT_EQ(LayoutOf(Shape{2, 1, 4, 5}, NhwcStrides(Shape{2, 1, 4, 5})), Layout::kNchw);
  // H = W = 1: likewise.
  EXPECT_EQ(LayoutOf(Shape{2, 3, 1, 1}, Strides{3, 1, 1, 1}), Layout::kNchw);
  EXPECT_EQ(LayoutOf(Shape{2, 3, 1, 1}, NhwcStrides(Shape{2, 3, 1, 1})), Layout::kNchw);
  // All ones.
  EXPECT_EQ(LayoutOf(Shape{1, 1, 1, 1}, Strides{5, 6, 7, 8}), Layout::kNchw);
}

TEST(LayoutOf, OtherRanksAreStrided) {
  EXPECT_EQ(LayoutOf(Shape{3, 4, 5}, Strides{20, 5, 1}), Layout::kStrided);
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5, 6}, Strides{360, 120, 30, 6, 1}), Layout::kStrided);
  EXPECT_EQ(LayoutOf(Shape{}, Strides{}), Layout::kStrided);
  EXPECT_EQ(LayoutOf(Shape{6}, Strides{1}), Layout::kStrided);
}

TEST(LayoutOf, OtherStridesAreStrided) {
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{60, 20, 1, 4}), Layout::kStrided);   // H, W swapped
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{60, 20, -5, 1}), Layout::kStrided);  // H flipped
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{120, 40, 10, 2}), Layout::kStrided);  // every other
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{0, 20, 5, 1}), Layout::kStrided);     // broadcast N
  EXPECT_EQ(LayoutOf(Shape{2, 3, 4, 5}, Strides{80, 1, 20, 4}), Layout::kStrided);    // C of 4
}

TEST(LayoutOf, EmptyRankFourIsNchw) {
  EXPECT_EQ(LayoutOf(Shape{2, 0, 4, 5}, Strides{1, 2, 3, 4}), Layout::kNchw);
}

TEST(LayoutName, NamesEveryLayout) {
  EXPECT_EQ(LayoutName(Layout::kNchw), "NCHW");
  EXPECT_EQ(LayoutName(Layout::kNhwc), "NHWC");
  EXPECT_EQ(LayoutName(Layout::kStrided), "Strided");
  EXPECT_EQ(LayoutName(Layout::kBlocked), "Blocked");
  EXPECT_EQ(LayoutName(Layout::kBlockedWeights), "BlockedWeights");
}

TEST(LayoutBlockedElementCount, RoundsChannelsUpToWholeBlocks) {
  EXPECT_EQ(BlockedElementCount(Shape{2, 3, 4, 5}, 16), 1 * 2 * 4 * 5 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{2, 16, 4, 5}, 16), 1 * 2 * 4 * 5 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{2, 17, 4, 5}, 16), 2 * 2 * 4 * 5 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{1, 9, 1, 1}, 4), 3 * 4);
  EXPECT_EQ(BlockedElementCount(Shape{1, 0, 3, 3}, 8), 0);
}

TEST(LayoutBlockedElementCount, WeightsRoundOutputChannelsUpToWholeBlocks) {
  const Layout weights = Layout::kBlockedWeights;
  EXPECT_EQ(BlockedElementCount(Shape{20, 3, 3, 3}, 16, weights), 2 * 3 * 3 * 3 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{16, 3, 3, 3}, 16, weights), 1 * 3 * 3 * 3 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{1, 9, 1, 1}, 4, weights), 1 * 9 * 4);
  EXPECT_EQ(BlockedElementCount(Shape{0, 3, 3, 3}, 8, weights), 0);
  EXPECT_EQ(BlockedElementCount(Shape{5, 0, 3, 3}, 8, weights), 0);
}

TEST(TensorLayout, ReportedFromTheTensorsStrides) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 3, 4, 5}, pool);
  EXPECT_EQ(x.layout(), Layout::kNchw);
  // A channels-last buffer (N, H, W, C) viewed as (N, C, H, W).
  const Tensor nhwc = Iota<float>(Shape{2, 4, 5, 3}, pool).Permute({0, 3, 1, 2});
  EXPECT_EQ(nhwc.layout(), Layout::kNhwc);
  EXPECT_EQ(x.Transpose(2, 3).layout(), Layout::kStrided);
  EXPECT_EQ(x.Slice(1, 0, 2).layout(), Layout::kStrided);  // 2 of 3 channels
  EXPECT_EQ(x.Slice(0, 1, 2).layout(), Layout::kNchw);     // one image: N = 1
  EXPECT_EQ(nhwc.Slice(0, 1, 2).layout(), Layout::kNhwc);
  EXPECT_EQ(Iota<float>(Shape{2, 1, 4, 5}, pool).layout(), Layout::kNchw);  // C = 1: both match
  // One channel of three: the batch stride still skips three channels, so neither matches.
  EXPECT_EQ(x.Slice(1, 1, 2).layout(), Layout::kStrided);
  EXPECT_EQ(x.Reshape({2, 3, 20}, pool).layout(), Layout::kStrided);
}

// --- ToLayout -----------------------------------------------------------------------------------

TEST(ToLayout, NchwToNhwcMovesDataKeepsValuesAndShape) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 3, 2, 2}, pool);
  const Tensor y = x.ToLayout(Layout::kNhwc, pool);
  EXPECT_NE(y.buffer(), x.buffer());
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(y.layout(), Layout::kNhwc);
  EXPECT_EQ(y.strides(), (Strides{12, 1, 6, 3}));
  EXPECT_EQ(Values<float>(y), Values<float>(x));
  // Physically channels-last: element (0, c, 0, 0) for c = 0, 1, 2 are neighbours.
  EXPECT_EQ(y.Storage<float>()[0], 0.0f);
  EXPECT_EQ(y.Storage<float>()[1], 4.0f);
  EXPECT_EQ(y.Storage<float>()[2], 8.0f);
}

TEST(ToLayout, NhwcToNchwIsContiguous) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 4, 5, 3}, pool).Permute({0, 3, 1, 2});
  const Tensor y = x.ToLayout(Layout::kNchw, pool);
  EXPECT_EQ(y.layout(), Layout::kNchw);
  EXPECT_TRUE(y.IsContiguous());
  EXPECT_EQ(Values<float>(y), Values<float>(x));
}

TEST(ToLayout, ToTheCurrentLayoutReturnsTheSameBuffer) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 3, 4, 5}, pool);
  const Tensor nhwc = x.ToLayout(Layout::kNhwc, pool);
  const Tensor blocked = x.ToLayout(Layout::kBlocked, pool, 8);
  const int64_t rented = pool.Stats().rented_buffers;
  EXPECT_EQ(x.ToLayout(Layout::kNchw, pool).buffer(), x.buffer());
  EXPECT_EQ(nhwc.ToLayout(Layout::kNhwc, pool).buffer(), nhwc.buffer());
  const Tensor same = blocked.ToLayout(Layout::kBlocked, pool, 8);
  EXPECT_EQ(same.buffer(), blocked.buffer());
  EXPECT_EQ(same.block_size(), 8);
  EXPECT_EQ(pool.Stats().rented_buffers, rented);
}

TEST(ToLayout, StridedSourceToNchwCopies) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 3, 4, 5}, pool).Slice(3, 4, -6, -1);
  ASSERT_EQ(x.layout(), Layout::kStrided);
  const Tensor y = x.ToLayout(Layout::kNchw, pool);
  EXPECT_NE(y.buffer(), x.buffer());
  EXPECT_EQ(y.layout(), Layout::kNchw);
  EXPECT_EQ(Values<float>(y), Values<float>(x));
}

TEST(ToLayout, NhwcOfSingleChannelReportsNchw) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 1, 3, 3}, pool);
  const Tensor y = x.ToLayout(Layout::kNhwc, pool);
  EXPECT_EQ(y.layout(), Layout::kNchw);  // both patterns match: NCHW wins
  EXPECT_TRUE(y.IsContiguous());
  EXPECT_EQ(Values<float>(y), Values<float>(x));
}

TEST(ToLayout, BlockedPhysicalOrderAndZeroTail) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 5, 2, 3}, pool, 1.0f);
  const Tensor b = x.ToLayout(Layout::kBlocked, pool, 4);
  EXPECT_EQ(b.shape(), x.shape());
  EXPECT_EQ(b.block_size(), 4);
  const std::span<const float> data = b.Data<float>();
  ASSERT_EQ(data.size(), 2u * 2 * 2 * 3 * 4);  // Cb = 2
  // (n, c, h, w) = (1, 4, 1, 2) is in block 1, lane 0: ((1*2 + 1)*2 + 1)*3*4 + 2*4 + 0 = 92.
  EXPECT_EQ(data[92], x.At<float>({1, 4, 1, 2}));
  // Lanes 1-3 of block 1 are channels 5-7, which do not exist: zero.
  EXPECT_EQ(data[93], 0.0f);
  EXPECT_EQ(data[95], 0.0f);
  ExpectBlockedHolds(b, x, 4);
}

TEST(ToLayout, BlockedFromAStridedSource) {
  BufferPool pool;
  const Tensor x =
      Iota<float>(Shape{3, 2, 9, 4}, pool, 1.0f).Permute({0, 2, 3, 1}).Slice(2, -1, -5, -2);
  ASSERT_EQ(x.shape(), (Shape{3, 9, 2, 2}));
  const Tensor b = x.ToLayout(Layout::kBlocked, pool, 4);
  ExpectBlockedHolds(b, x, 4);
  const Tensor back = b.ToLayout(Layout::kNchw, pool);
  EXPECT_EQ(Values<float>(back), Values<float>(x));
}

TEST(ToLayout, BlockedOfOtherElementSizes) {
  BufferPool pool;
  const Tensor x = Iota<double>(Shape{1, 3, 2, 2}, pool, 1.0);
  const Tensor b = x.ToLayout(Layout::kBlocked, pool, 4);
  const std::span<const double> data = b.Data<double>();
  ASSERT_EQ(data.size(), 16u);
  EXPECT_EQ(data[4 * 3 + 2], x.At<double>({0, 2, 1, 1}));
  EXPECT_EQ(data[3], 0.0);
  EXPECT_EQ(Values<double>(b.ToLayout(Layout::kNhwc, pool)), Values<double>(x));
  const Tensor bytes = Iota<uint8_t>(Shape{2, 5, 1, 3}, pool, 1);
  EXPECT_EQ(
      Values<uint8_t>(bytes.ToLayout(Layout::kBlocked, pool, 8).ToLayout(Layout::kNchw, pool)),
      Values<uint8_t>(bytes));
}

TEST(ToLayout, EmptyTensorsConvert) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{2, 0, 3, 3}, pool);
  const Tensor b = x.ToLayout(Layout::kBlocked, pool, 8);
  EXPECT_TRUE(b.Data<float>().empty());
  EXPECT_EQ(b.ToLayout(Layout::kNhwc, pool).shape(), x.shape());
  const Tensor y = Iota<float>(Shape{0, 3, 2, 2}, pool);
  EXPECT_TRUE(y.ToLayout(Layout::kBlocked, pool, 4).Data<float>().empty());
}

TEST(ToLayout, BlockedToAnotherBlockSize) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{1, 10, 2, 2}, pool, 1.0f);
  const Tensor b8 = x.ToLayout(Layout::kBlocked, pool, 8);
  const Tensor b4 = b8.ToLayout(Layout::kBlocked, pool, 4);
  EXPECT_NE(b4.buffer(), b8.buffer());
  ExpectBlockedHolds(b4, x, 4);
}

TEST(ToLayout, BlockedWeightsPhysicalOrderAndZeroTail) {
  BufferPool pool;
  // Weights (K, C, KH, KW) = (5, 2, 2, 3) in blocks of 4 output channels: Kb = 2.
  const Tensor w = Iota<float>(Shape{5, 2, 2, 3}, pool, 1.0f);
  const Tensor b = w.ToLayout(Layout::kBlockedWeights, pool, 4);
  EXPECT_EQ(b.shape(), w.shape());
  EXPECT_EQ(b.layout(), Layout::kBlockedWeights);
  EXPECT_EQ(b.block_size(), 4);
  const std::span<const float> data = b.Data<float>();
  ASSERT_EQ(data.size(), 2u * 2 * 2 * 3 * 4);
  // (k, c, i, j) = (1, 0, 0, 0) is lane 1 of the first vector: output channels innermost.
  EXPECT_EQ(data[1], w.At<float>({1, 0, 0, 0}));
  // (4, 1, 1, 2) is in block 1, lane 0: ((1*2 + 1)*2 + 1)*3*4 + 2*4 + 0 = 92.
  EXPECT_EQ(data[92], w.At<float>({4, 1, 1, 2}));
  // Lanes 1-3 of block 1 are output channels 5-7, which do not exist: zero.
  EXPECT_EQ(data[93], 0.0f);
  EXPECT_EQ(data[95], 0.0f);
  ExpectBlockedHolds(b, w, 4, Layout::kBlockedWeights);
}

TEST(ToLayout, BlockedWeightsBackToNchwIsBitIdentical) {
  BufferPool pool;
  std::mt19937 rng(16);
  // Every bit pattern survives, NaN payloads and negative zero included.
  Tensor w = Tensor::Empty(Shape{37, 3, 3, 3}, DType::kFloat, pool);
  const std::span<std::byte> raw = w.MutableRawData();
  for (std::byte& b : raw) b = static_cast<std::byte>(rng());
  const uint32_t negative_zero = 0x80000000u, nan_payload = 0x7FC00001u;
  std::memcpy(raw.data() + 5 * 4, &negative_zero, 4);
  std::memcpy(raw.data() + 6 * 4, &nan_payload, 4);
  for (int32_t block : {1, 4, 16, 64}) {
    SCOPED_TRACE("block " + std::to_string(block));
    const Tensor b = w.ToLayout(Layout::kBlockedWeights, pool, block);
    const Tensor back = b.ToLayout(Layout::kNchw, pool);
    EXPECT_TRUE(back.IsContiguous());
    EXPECT_EQ(back.layout(), Layout::kNchw);
    EXPECT_EQ(back.shape(), w.shape());
    const std::span<const std::byte> got = back.RawData(), want = w.RawData();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin()));
  }
}

TEST(ToLayout, BlockedWeightsFromAStridedSource) {
  BufferPool pool;
  // A (K, C, KH, KW) = (9, 3, 2, 2) view with reversed and strided dimensions.
  const Tensor w =
      Iota<float>(Shape{3, 2, 9, 4}, pool, 1.0f).Permute({2, 0, 3, 1}).Slice(2, -1, -5, -2);
  ASSERT_EQ(w.shape(), (Shape{9, 3, 2, 2}));
  const Tensor b = w.ToLayout(Layout::kBlockedWeights, pool, 4);
  ExpectBlockedHolds(b, w, 4, Layout::kBlockedWeights);
  EXPECT_EQ(Values<float>(b.ToLayout(Layout::kNchw, pool)), Values<float>(w));
  EXPECT_EQ(Values<float>(b.ToLayout(Layout::kNhwc, pool)), Values<float>(w));
}

TEST(ToLayout, BetweenTheBlockedFamilies) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{6, 5, 2, 1}, pool, 1.0f);
  const Tensor channels = x.ToLayout(Layout::kBlocked, pool, 4);
  const Tensor weights = channels.ToLayout(Layout::kBlockedWeights, pool, 4);
  EXPECT_NE(weights.buffer(), channels.buffer());  // same block size, another family
  ExpectBlockedHolds(weights, x, 4, Layout::kBlockedWeights);
  ExpectBlockedHolds(weights.ToLayout(Layout::kBlocked, pool, 2), x, 2);
  EXPECT_EQ(weights.ToLayout(Layout::kBlockedWeights, pool, 4).buffer(), weights.buffer());
  ExpectBlockedHolds(weights.ToLayout(Layout::kBlockedWeights, pool, 8), x, 8,
                     Layout::kBlockedWeights);
}

TEST(ToLayout, BlockedWeightsRefuseOtherRanksAndBadBlocks) {
  BufferPool pool;
  EXPECT_THROW(Iota<float>(Shape{4, 3, 3}, pool).ToLayout(Layout::kBlockedWeights, pool),
               TensorLayoutException);
  const Tensor w = Iota<float>(Shape{4, 3, 3, 3}, pool);
  EXPECT_THROW(w.ToLayout(Layout::kBlockedWeights, pool, 0), TensorLayoutException);
  try {
    w.ToLayout(Layout::kBlockedWeights, pool, -2);
    ADD_FAILURE() << "block -2 was accepted";
  } catch (const TensorLayoutException& e) {
    EXPECT_NE(std::string(e.what()).find("ToLayout(BlockedWeights): block size must be positive"),
              std::string::npos)
        << e.what();
  }
}

TEST(ToLayout, BlocksBeyondTheBufferLimitThrowBeforeAllocating) {
  BufferPool pool;
  // (2^31 - 46339) broadcast doubles in one block of 2^30 + 23170 lanes: 2^61 + 67194
  // elements, whose 8-byte product wraps around 2^64 to a small size that a 64-bit
  // multiplication would let through (and the copy then write far past it).
  const Tensor one = Iota<double>(Shape{1, 1, 1, 1}, pool);
  const Tensor wide = one.Expand(Shape{1, 1, 2147437309, 1});
  for (Layout family : {Layout::kBlocked, Layout::kBlockedWeights}) {
    ASSERT_EQ(BlockedElementCount(wide.shape(), 1073764994, family), (int64_t{1} << 61) + 67194);
    try {
      wide.ToLayout(family, pool, 1073764994);
      ADD_FAILURE() << LayoutName(family) << " was accepted";
    } catch (const TensorShapeException& e) {
      EXPECT_NE(std::string(e.what()).find("needs 2305843009213761146 elements of 8 bytes, "
                                           "above the buffer limit of 2147483647 bytes"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(pool.Stats().rented_buffers, 1);
}

TEST(ToLayout, RankOtherThanFourThrows) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{3, 4, 5}, pool);
  EXPECT_THROW(x.ToLayout(Layout::kNhwc, pool), TensorLayoutException);
  EXPECT_THROW(x.ToLayout(Layout::kNchw, pool), TensorLayoutException);
  EXPECT_THROW(x.ToLayout(Layout::kBlocked, pool, 4), TensorLayoutException);
  EXPECT_THROW(Iota<float>(Shape{1, 2, 3, 4, 5}, pool).ToLayout(Layout::kNhwc, pool),
               TensorLayoutException);
}

TEST(ToLayout, StridedTargetAndBadBlockThrow) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{1, 2, 3, 4}, pool);
  EXPECT_THROW(x.ToLayout(Layout::kStrided, pool), TensorLayoutException);
  EXPECT_THROW(x.ToLayout(Layout::kBlocked, pool, 0), TensorLayoutException);
  EXPECT_THROW(x.ToLayout(Layout::kBlocked, pool, -4), TensorLayoutException);
}

TEST(ToLayout, StaleSourceThrows) {
  BufferPool pool;
  Tensor x = Iota<float>(Shape{1, 2, 3, 4}, pool);
  const Tensor b = x.ToLayout(Layout::kBlocked, pool, 4);
  Tensor(x).Dispose();
  EXPECT_THROW(x.ToLayout(Layout::kNhwc, pool), StaleTensorException);
  Tensor(b).Dispose();
  EXPECT_THROW(b.ToLayout(Layout::kNchw, pool), StaleTensorException);
  EXPECT_THROW(b.Data<float>(), StaleTensorException);
  EXPECT_EQ(b.shape(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(b.layout(), Layout::kBlocked);
}

// Random shapes through random sequences of layouts, each step checked against the source.
TEST(ToLayout, RoundTripsOnRandomShapes) {
  constexpr int kShapes = 150;
  std::mt19937_64 rng(5150);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const std::array<int32_t, 3> blocks{4, 8, 16};
  const std::array<std::vector<Layout>, 5> orders{{
      {Layout::kNhwc, Layout::kBlocked, Layout::kNchw},
      {Layout::kBlocked, Layout::kNhwc, Layout::kNchw},
      {Layout::kNhwc, Layout::kNchw, Layout::kBlocked, Layout::kNhwc, Layout::kBlocked,
       Layout::kNchw},
      {Layout::kBlocked, Layout::kBlocked, Layout::kNchw, Layout::kNhwc, Layout::kBlocked},
      {Layout::kBlockedWeights, Layout::kNchw, Layout::kBlocked, Layout::kBlockedWeights,
       Layout::kBlockedWeights, Layout::kNhwc, Layout::kBlockedWeights},
  }};
  BufferPool pool;
  Arena arena(pool);
  int not_divisible = 0;
  for (int i = 0; i < kShapes; ++i) {
    Allocator& allocator = i % 3 == 2 ? static_cast<Allocator&>(arena) : pool;
    const Shape shape{uniform(1, 37), uniform(1, 37), uniform(1, 4), uniform(1, 4)};
    // Values start at 1 so that the blocked tail's zeros stand out.
    Tensor source = Iota<float>(shape, allocator, 1.0f);
    if (uniform(0, 2) == 0) source = source.Slice(3, -1, -5, -1);  // a strided source
    const Floats expected = Values<float>(source);
    const std::vector<Layout>& order = orders[static_cast<size_t>(i) % orders.size()];
    Tensor t = source;
    std::ostringstream path;
    path << shape.ToString();
    for (Layout to : order) {
      const int32_t block = blocks[static_cast<size_t>(uniform(0, 2))];
      path << " -> " << LayoutName(to);
      if (IsBlocked(to)) path << block;
      SCOPED_TRACE(path.str());
      const Tensor previous = t;
      t = t.ToLayout(to, allocator, block);
      ASSERT_EQ(t.shape(), shape);
      if (IsBlocked(to)) {
        if (shape[BlockedDim(to)] % block != 0) ++not_divisible;
        ExpectBlockedHolds(t, source, block, to);
        if (previous.layout() == to && previous.block_size() == block) {
          EXPECT_EQ(t.buffer(), previous.buffer());
        }
        continue;
      }
      if (to == Layout::kNhwc && t.layout() == Layout::kNchw) {
        // Both patterns match (C = 1 or H = W = 1): NCHW wins, the strides are still NHWC's.
        EXPECT_TRUE(shape[1] == 1 || shape[2] * shape[3] == 1);
      } else {
        EXPECT_EQ(t.layout(), to);
      }
      if (to == Layout::kNhwc) {
        EXPECT_EQ(t.strides(), NhwcStrides(shape));
      }
      ASSERT_EQ(Values<float>(t), expected);
    }
    if (i % 3 == 2) arena.Reset();
  }
  EXPECT_GT(not_divisible, 100);
}

// --- Blocked tensors of either family refuse everything but ToLayout, Data and metadata -------

class BlockedTensor : public ::testing::TestWithParam<Layout> {
 protected:
  BlockedTensor()
      : plain_(Iota<float>(Shape{2, 5, 3, 2}, pool_, 1.0f)),
        blocked_(plain_.ToLayout(GetParam(), pool_, 4)) {}

  BufferPool pool_;
  Tensor plain_;
  Tensor blocked_;
};

TEST_P(BlockedTensor, MetadataWorks) {
  EXPECT_EQ(blocked_.shape(), (Shape{2, 5, 3, 2}));
  EXPECT_EQ(blocked_.layout(), GetParam());
  EXPECT_EQ(blocked_.block_size(), 4);
  EXPECT_EQ(blocked_.dtype(), DType::kFloat);
  EXPECT_EQ(blocked_.rank(), 4);
  EXPECT_FALSE(blocked_.IsContiguous());
  const std::string described = GetParam() == Layout::kBlocked
                                    ? "[2, 5, 3, 2] blocked by 4"
                                    : "[2, 5, 3, 2] weights blocked by 4";
  EXPECT_NE(blocked_.Describe().find(described), std::string::npos) << blocked_.Describe();
  EXPECT_EQ(plain_.block_size(), 0);
}

TEST_P(BlockedTensor, DataIsThePhysicalSpan) {
  // Blocked: N, ceil(5/4), H, W, 4; BlockedWeights: ceil(2/4), C, KH, KW, 4.
  const size_t physical = GetParam() == Layout::kBlocked ? 2 * 2 * 3 * 2 * 4 : 1 * 5 * 3 * 2 * 4;
  EXPECT_EQ(blocked_.Data<float>().size(), physical);
  EXPECT_THROW(blocked_.Data<double>(), TensorTypeException);
  const uint64_t before = blocked_.version();
  blocked_.MutableData<float>()[0] = -1.0f;  // element (0, 0, 0, 0)
  EXPECT_EQ(blocked_.version(), before + 1);
  EXPECT_EQ(blocked_.ToLayout(Layout::kNchw, pool_).At<float>({0, 0, 0, 0}), -1.0f);
}

TEST_P(BlockedTensor, ToLayoutWorks) {
  EXPECT_EQ(Values<float>(blocked_.ToLayout(Layout::kNchw, pool_)), Values<float>(plain_));
  const Tensor nhwc = blocked_.ToLayout(Layout::kNhwc, pool_);
  EXPECT_EQ(nhwc.layout(), Layout::kNhwc);
  EXPECT_EQ(Values<float>(nhwc), Values<float>(plain_));
}

TEST_P(BlockedTensor, ViewsThrowTensorLayoutException) {
  EXPECT_THROW(blocked_.Transpose(0, 1), TensorLayoutException);
  EXPECT_THROW(blocked_.Permute({0, 2, 3, 1}), TensorLayoutException);
  EXPECT_THROW(blocked_.Slice(1, 0, 4), TensorLayoutException);
  EXPECT_THROW(blocked_.Expand(Shape{3, 2, 5, 3, 2}), TensorLayoutException);
  EXPECT_THROW(blocked_.Squeeze(), TensorLayoutException);
  EXPECT_THROW(blocked_.Unsqueeze(0), TensorLayoutException);
  EXPECT_THROW(blocked_.TryReshape({2, 5, 6}), TensorLayoutException);
  EXPECT_THROW(blocked_.Reshape({-1}, pool_), TensorLayoutException);
}

TEST_P(BlockedTensor, ElementAccessThrowsTensorLayoutException) {
  EXPECT_THROW(blocked_.At<float>({0, 0, 0, 0}), TensorLayoutException);
  EXPECT_THROW(blocked_.Set<float>({0, 0, 0, 0}, 1.0f), TensorLayoutException);
  EXPECT_THROW(blocked_.Fill(1.0f), TensorLayoutException);
}

TEST_P(BlockedTensor, CopiesThrowTensorLayoutException) {
  EXPECT_THROW(blocked_.Contiguous(pool_), TensorLayoutException);
  EXPECT_THROW(blocked_.CopyFrom(plain_), TensorLayoutException);
  EXPECT_THROW(plain_.CopyFrom(blocked_), TensorLayoutException);
  const std::string message = [&] {
    try {
      blocked_.Contiguous(pool_);
    } catch (const TensorLayoutException& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(message.find("ToLayout"), std::string::npos) << message;
  // The wire spelling of the layout, as every other blocked refusal (not the C++ enumerator).
  EXPECT_NE(message.find("convert it with ToLayout(NCHW) first"), std::string::npos) << message;
}

TEST_P(BlockedTensor, RefusalsCountNoWrite) {
  const uint64_t before = blocked_.version();
  EXPECT_THROW(blocked_.Fill(1.0f), TensorLayoutException);
  EXPECT_THROW(blocked_.Set<float>({0, 0, 0, 0}, 1.0f), TensorLayoutException);
  EXPECT_THROW(blocked_.CopyFrom(plain_), TensorLayoutException);
  EXPECT_EQ(blocked_.version(), before);
  EXPECT_EQ(Values<float>(blocked_.ToLayout(Layout::kNchw, pool_)), Values<float>(plain_));
}

TEST_P(BlockedTensor, DisposeMakesItStale) {
  const Tensor copy = blocked_;
  blocked_.Dispose();
  EXPECT_TRUE(copy.IsStale());
  EXPECT_THROW(copy.Data<float>(), StaleTensorException);
  EXPECT_THROW(copy.ToLayout(Layout::kNchw, pool_), StaleTensorException);
  EXPECT_THROW(blocked_.Dispose(), StaleTensorException);
  EXPECT_EQ(copy.block_size(), 4);
  EXPECT_FALSE(plain_.IsStale());
}

TEST_P(BlockedTensor, ArenaBlockedTensorsGoStaleOnReset) {
  Arena arena(pool_);
  const Tensor b = plain_.ToLayout(GetParam(), arena, 16);
  ExpectBlockedHolds(b, plain_, 16, GetParam());
  arena.Reset();
  EXPECT_TRUE(b.IsStale());
  EXPECT_THROW(b.Data<float>(), StaleTensorException);
  EXPECT_FALSE(blocked_.IsStale());
}

INSTANTIATE_TEST_SUITE_P(BothFamilies, BlockedTensor,
                         ::testing::Values(Layout::kBlocked, Layout::kBlockedWeights),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(LayoutName(info.param));
                         });

}  // namespace
}  // namespace onemodel
