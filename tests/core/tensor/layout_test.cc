// Tests of layouts (spec 5): LayoutOf from strides, ToLayout between NCHW, NHWC and channel
// blocks (values and logical shape preserved, the blocked physical order and zero tail), and
// what blocked tensors refuse.
#include "core/tensor/layout.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
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

// Where the blocked element (n, c, h, w) lives in the physical span.
int64_t BlockedIndex(const Shape& nchw, int64_t block, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t blocks = (nchw[1] + block - 1) / block;
  const int64_t height = nchw[2], width = nchw[3];
  return ((n * blocks + c / block) * height + h) * width * block + w * block + c % block;
}

// Checks that `blocked` holds `plain`'s logical values in the blocked physical order, with
// zeros in the tail channels of the last block.
void ExpectBlockedHolds(const Tensor& blocked, const Tensor& plain, int32_t block) {
  const Shape& s = plain.shape();
  ASSERT_EQ(blocked.shape(), s);
  ASSERT_EQ(blocked.layout(), Layout::kBlocked);
  ASSERT_EQ(blocked.block_size(), block);
  const int64_t blocks = (s[1] + block - 1) / block;
  const std::span<const float> data = blocked.Data<float>();
  ASSERT_EQ(static_cast<int64_t>(data.size()), blocks * s[0] * s[2] * s[3] * block);
  std::vector<bool> seen(data.size(), false);
  for (int64_t n = 0; n < s[0]; ++n) {
    for (int64_t c = 0; c < s[1]; ++c) {
      for (int64_t h = 0; h < s[2]; ++h) {
        for (int64_t w = 0; w < s[3]; ++w) {
          const size_t at = static_cast<size_t>(BlockedIndex(s, block, n, c, h, w));
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
}

TEST(LayoutBlockedElementCount, RoundsChannelsUpToWholeBlocks) {
  EXPECT_EQ(BlockedElementCount(Shape{2, 3, 4, 5}, 16), 1 * 2 * 4 * 5 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{2, 16, 4, 5}, 16), 1 * 2 * 4 * 5 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{2, 17, 4, 5}, 16), 2 * 2 * 4 * 5 * 16);
  EXPECT_EQ(BlockedElementCount(Shape{1, 9, 1, 1}, 4), 3 * 4);
  EXPECT_EQ(BlockedElementCount(Shape{1, 0, 3, 3}, 8), 0);
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
  const std::array<std::vector<Layout>, 4> orders{{
      {Layout::kNhwc, Layout::kBlocked, Layout::kNchw},
      {Layout::kBlocked, Layout::kNhwc, Layout::kNchw},
      {Layout::kNhwc, Layout::kNchw, Layout::kBlocked, Layout::kNhwc, Layout::kBlocked,
       Layout::kNchw},
      {Layout::kBlocked, Layout::kBlocked, Layout::kNchw, Layout::kNhwc, Layout::kBlocked},
  }};
  BufferPool pool;
  Arena arena(pool);
  int not_divisible = 0;
  for (int i = 0; i < kShapes; ++i) {
    Allocator& allocator = i % 3 == 2 ? static_cast<Allocator&>(arena) : pool;
    const Shape shape{uniform(1, 3), uniform(1, 37), uniform(1, 4), uniform(1, 4)};
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
      if (to == Layout::kBlocked) path << block;
      SCOPED_TRACE(path.str());
      const Tensor previous = t;
      t = t.ToLayout(to, allocator, block);
      ASSERT_EQ(t.shape(), shape);
      if (to == Layout::kBlocked) {
        if (shape[1] % block != 0) ++not_divisible;
        ExpectBlockedHolds(t, source, block);
        if (previous.layout() == Layout::kBlocked && previous.block_size() == block) {
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

// --- Blocked tensors refuse everything but ToLayout, Data and metadata -------------------------

class BlockedTensor : public ::testing::Test {
 protected:
  BlockedTensor()
      : plain_(Iota<float>(Shape{2, 5, 3, 2}, pool_, 1.0f)),
        blocked_(plain_.ToLayout(Layout::kBlocked, pool_, 4)) {}

  BufferPool pool_;
  Tensor plain_;
  Tensor blocked_;
};

TEST_F(BlockedTensor, MetadataWorks) {
  EXPECT_EQ(blocked_.shape(), (Shape{2, 5, 3, 2}));
  EXPECT_EQ(blocked_.layout(), Layout::kBlocked);
  EXPECT_EQ(blocked_.block_size(), 4);
  EXPECT_EQ(blocked_.dtype(), DType::kFloat);
  EXPECT_EQ(blocked_.rank(), 4);
  EXPECT_FALSE(blocked_.IsContiguous());
  EXPECT_NE(blocked_.Describe().find("blocked by 4"), std::string::npos);
  EXPECT_EQ(plain_.block_size(), 0);
}

TEST_F(BlockedTensor, DataIsThePhysicalSpan) {
  EXPECT_EQ(blocked_.Data<float>().size(), static_cast<size_t>(2 * 2 * 3 * 2 * 4));
  EXPECT_THROW(blocked_.Data<double>(), TensorTypeException);
  const uint64_t before = blocked_.version();
  blocked_.MutableData<float>()[0] = -1.0f;  // element (0, 0, 0, 0)
  EXPECT_EQ(blocked_.version(), before + 1);
  EXPECT_EQ(blocked_.ToLayout(Layout::kNchw, pool_).At<float>({0, 0, 0, 0}), -1.0f);
}

TEST_F(BlockedTensor, ToLayoutWorks) {
  EXPECT_EQ(Values<float>(blocked_.ToLayout(Layout::kNchw, pool_)), Values<float>(plain_));
  const Tensor nhwc = blocked_.ToLayout(Layout::kNhwc, pool_);
  EXPECT_EQ(nhwc.layout(), Layout::kNhwc);
  EXPECT_EQ(Values<float>(nhwc), Values<float>(plain_));
}

TEST_F(BlockedTensor, ViewsThrowTensorLayoutException) {
  EXPECT_THROW(blocked_.Transpose(0, 1), TensorLayoutException);
  EXPECT_THROW(blocked_.Permute({0, 2, 3, 1}), TensorLayoutException);
  EXPECT_THROW(blocked_.Slice(1, 0, 4), TensorLayoutException);
  EXPECT_THROW(blocked_.Expand(Shape{3, 2, 5, 3, 2}), TensorLayoutException);
  EXPECT_THROW(blocked_.Squeeze(), TensorLayoutException);
  EXPECT_THROW(blocked_.Unsqueeze(0), TensorLayoutException);
  EXPECT_THROW(blocked_.TryReshape({2, 5, 6}), TensorLayoutException);
  EXPECT_THROW(blocked_.Reshape({-1}, pool_), TensorLayoutException);
}

TEST_F(BlockedTensor, ElementAccessThrowsTensorLayoutException) {
  EXPECT_THROW(blocked_.At<float>({0, 0, 0, 0}), TensorLayoutException);
  EXPECT_THROW(blocked_.Set<float>({0, 0, 0, 0}, 1.0f), TensorLayoutException);
  EXPECT_THROW(blocked_.Fill(1.0f), TensorLayoutException);
}

TEST_F(BlockedTensor, CopiesThrowTensorLayoutException) {
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
}

TEST_F(BlockedTensor, RefusalsCountNoWrite) {
  const uint64_t before = blocked_.version();
  EXPECT_THROW(blocked_.Fill(1.0f), TensorLayoutException);
  EXPECT_THROW(blocked_.Set<float>({0, 0, 0, 0}, 1.0f), TensorLayoutException);
  EXPECT_THROW(blocked_.CopyFrom(plain_), TensorLayoutException);
  EXPECT_EQ(blocked_.version(), before);
  EXPECT_EQ(Values<float>(blocked_.ToLayout(Layout::kNchw, pool_)), Values<float>(plain_));
}

TEST_F(BlockedTensor, DisposeMakesItStale) {
  const Tensor copy = blocked_;
  blocked_.Dispose();
  EXPECT_TRUE(copy.IsStale());
  EXPECT_THROW(copy.Data<float>(), StaleTensorException);
  EXPECT_THROW(copy.ToLayout(Layout::kNchw, pool_), StaleTensorException);
  EXPECT_THROW(blocked_.Dispose(), StaleTensorException);
  EXPECT_EQ(copy.block_size(), 4);
  EXPECT_FALSE(plain_.IsStale());
}

TEST_F(BlockedTensor, ArenaBlockedTensorsGoStaleOnReset) {
  Arena arena(pool_);
  const Tensor b = plain_.ToLayout(Layout::kBlocked, arena, 16);
  ExpectBlockedHolds(b, plain_, 16);
  arena.Reset();
  EXPECT_TRUE(b.IsStale());
  EXPECT_THROW(b.Data<float>(), StaleTensorException);
  EXPECT_FALSE(blocked_.IsStale());
}

}  // namespace
}  // namespace onemodel
