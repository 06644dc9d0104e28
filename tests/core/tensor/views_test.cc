// Tests of the view operations of Tensor (spec 4): Transpose, Permute, Slice, Expand, Squeeze
// and Unsqueeze. Every view shares the buffer and moves no data.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
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

using Ints = std::vector<int32_t>;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Checks that `view` is over the same buffer as `base`, allocated nothing, and that a write
// through the view is visible in the base at the element the view's metadata names.
void ExpectSharesBuffer(const Tensor& base, Tensor view, const BufferPool& pool,
                        int64_t rented_before) {
  EXPECT_EQ(view.buffer(), base.buffer());
  EXPECT_EQ(view.Storage<int32_t>().data(), base.Storage<int32_t>().data());
  EXPECT_EQ(pool.Stats().rented_buffers, rented_before);
  if (view.ElementCount() == 0) return;
  std::vector<int64_t> last(static_cast<size_t>(view.rank()));
  int64_t at = view.offset();
  for (int d = 0; d < view.rank(); ++d) {
    last[static_cast<size_t>(d)] = view.shape()[d] - 1;
    at += int64_t{view.shape()[d] - 1} * view.strides()[d];
  }
  view.Set<int32_t>(last, -77);
  EXPECT_EQ(base.Storage<int32_t>()[static_cast<size_t>(at)], -77);
}

// --- Transpose and Permute ----------------------------------------------------------------------

TEST(ViewTranspose, SwapsExtentsAndStrides) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  const Tensor v = t.Transpose(0, 2);
  EXPECT_EQ(v.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(v.strides(), (Strides{1, 4, 12}));
  EXPECT_EQ(v.offset(), 0);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(v.At<int32_t>({i, j, k}), t.At<int32_t>({k, j, i}));
    }
  }
}

TEST(ViewTranspose, NegativeDimensionsCountFromTheEnd) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  EXPECT_EQ(t.Transpose(-1, -3).strides(), t.Transpose(2, 0).strides());
  EXPECT_EQ(t.Transpose(-2, 2).shape(), (Shape{2, 4, 3}));
}

TEST(ViewTranspose, SameDimensionIsTheIdentity) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  const Tensor v = t.Transpose(1, -1);
  EXPECT_EQ(v.shape(), t.shape());
  EXPECT_EQ(v.strides(), t.strides());
}

TEST(ViewTranspose, OutOfRangeDimensionThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  EXPECT_THROW(t.Transpose(0, 2), TensorShapeException);
  EXPECT_THROW(t.Transpose(-3, 0), TensorShapeException);
  const Tensor scalar = Iota<int32_t>(Shape{}, pool);
  EXPECT_THROW(scalar.Transpose(0, 0), TensorShapeException);
}

TEST(ViewTranspose, TwiceRestoresTheTensor) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool).Slice(1, 2, -4, -1);
  const Tensor back = t.Transpose(0, 1).Transpose(1, 0);
  EXPECT_EQ(back.strides(), t.strides());
  EXPECT_EQ(back.offset(), t.offset());
  EXPECT_EQ(Values<int32_t>(back), Values<int32_t>(t));
}

TEST(ViewPermute, ReordersDimensions) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  const Tensor v = t.Permute({1, 2, 0});
  EXPECT_EQ(v.shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(v.strides(), (Strides{4, 1, 12}));
  EXPECT_EQ(v.At<int32_t>({2, 1, 1}), t.At<int32_t>({1, 2, 1}));
  EXPECT_EQ(Values<int32_t>(t.Permute({2, 0, 1})).front(), 0);
  EXPECT_EQ(Values<int32_t>(t.Permute({2, 0, 1}))[1], 4);  // (0, 0, 1) -> element (0, 1, 0)
}

TEST(ViewPermute, AcceptsNegativeDimensions) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  const Tensor v = t.Permute({-1, 0, -2});
  EXPECT_EQ(v.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(v.strides(), (Strides{1, 12, 4}));
}

TEST(ViewPermute, DuplicateDimensionThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  EXPECT_THROW(t.Permute({0, 0, 1}), TensorShapeException);
  EXPECT_THROW(t.Permute({2, 1, -1}), TensorShapeException);  // -1 is 2
}

TEST(ViewPermute, WrongCountThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  EXPECT_THROW(t.Permute({0, 1}), TensorShapeException);
  EXPECT_THROW(t.Permute({0, 1, 2, 3}), TensorShapeException);
  EXPECT_THROW(t.Permute({}), TensorShapeException);
}

TEST(ViewPermute, OutOfRangeDimensionThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  EXPECT_THROW(t.Permute({0, 2}), TensorShapeException);
  EXPECT_THROW(t.Permute({-3, 0}), TensorShapeException);
}

TEST(ViewPermute, ScalarTakesTheEmptyPermutation) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{}, pool, 5);
  EXPECT_EQ(t.Permute({}).At<int32_t>({}), 5);
}

// --- Slice --------------------------------------------------------------------------------------

struct SliceCase {
  int64_t extent;
  int64_t start;
  int64_t stop;
  int64_t step;
  Ints expected;  // python: list(range(extent))[start:stop:step]
};

std::ostream& operator<<(std::ostream& os, const SliceCase& c) {
  return os << "range(" << c.extent << ")[" << c.start << ":" << c.stop << ":" << c.step << "]";
}

class ViewSliceTable : public ::testing::TestWithParam<SliceCase> {};

TEST_P(ViewSliceTable, MatchesPythonSlicing) {
  const SliceCase& c = GetParam();
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{c.extent}, pool);
  const Tensor v = t.Slice(0, c.start, c.stop, c.step);
  EXPECT_EQ(v.shape(), (Shape{static_cast<int64_t>(c.expected.size())}));
  EXPECT_EQ(Values<int32_t>(v), c.expected);
  EXPECT_EQ(v.buffer(), t.buffer());
}

// Expected lists computed by hand with Python's slice semantics.
INSTANTIATE_TEST_SUITE_P(
    Python, ViewSliceTable,
    ::testing::Values(
        SliceCase{6, 0, 6, 1, {0, 1, 2, 3, 4, 5}}, SliceCase{6, 1, 5, 2, {1, 3}},
        SliceCase{6, 0, 6, 4, {0, 4}}, SliceCase{6, -4, -1, 1, {2, 3, 4}},
        SliceCase{6, -100, 100, 1, {0, 1, 2, 3, 4, 5}}, SliceCase{6, 2, 100, 3, {2, 5}},
        SliceCase{6, 5, 0, -1, {5, 4, 3, 2, 1}}, SliceCase{6, 5, -7, -1, {5, 4, 3, 2, 1, 0}},
        SliceCase{6, -1, -7, -2, {5, 3, 1}}, SliceCase{6, 100, -100, -3, {5, 2}},
        SliceCase{6, 4, 1, -2, {4, 2}}, SliceCase{6, 3, 3, 1, {}}, SliceCase{6, 4, 2, 1, {}},
        SliceCase{6, 2, 4, -1, {}}, SliceCase{6, -1, -2, 1, {}}, SliceCase{6, 10, 20, 1, {}},
        SliceCase{6, -20, -10, 1, {}}, SliceCase{6, -20, -10, -1, {}}, SliceCase{6, 10, 20, -1, {}},
        SliceCase{6, 0, -1, 1, {0, 1, 2, 3, 4}}, SliceCase{6, -1, -1, -1, {}},
        SliceCase{6, 5, -100, -5, {5, 0}}, SliceCase{6, 5, -100, -6, {5}},
        SliceCase{0, 0, 5, 1, {}}, SliceCase{0, -1, -5, -1, {}}, SliceCase{1, 0, 1, 1, {0}},
        SliceCase{1, -1, -2, -1, {0}}, SliceCase{6, kInt64Min, kInt64Max, 1, {0, 1, 2, 3, 4, 5}},
        SliceCase{6, kInt64Max, kInt64Min, -1, {5, 4, 3, 2, 1, 0}}, SliceCase{6, 0, 6, 6, {0}},
        SliceCase{6, 0, 6, 1000, {0}}, SliceCase{6, 0, 6, kInt64Max, {0}},
        SliceCase{6, 5, -7, kInt64Min, {5}}, SliceCase{6, 3, kInt64Min, -(int64_t{1} << 40), {3}}));

TEST(ViewSlice, SetsOffsetAndStride) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{4, 5}, pool);
  const Tensor v = t.Slice(1, 4, 0, -2);
  EXPECT_EQ(v.shape(), (Shape{4, 2}));
  EXPECT_EQ(v.strides(), (Strides{5, -2}));
  EXPECT_EQ(v.offset(), 4);
  EXPECT_EQ(Values<int32_t>(v), (Ints{4, 2, 9, 7, 14, 12, 19, 17}));
}

TEST(ViewSlice, MiddleDimensionOfRankThree) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 2}, pool);
  const Tensor v = t.Slice(-2, -1, -4, -2);  // dimension 1, rows 2 and 0
  EXPECT_EQ(v.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(Values<int32_t>(v), (Ints{4, 5, 0, 1, 10, 11, 6, 7}));
}

TEST(ViewSlice, OfASliceComposes) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{10}, pool);
  const Tensor v = t.Slice(0, -1, -11, -2).Slice(0, 1, 4, 2);  // [9 7 5 3 1][1:4:2]
  EXPECT_EQ(Values<int32_t>(v), (Ints{7, 3}));
  EXPECT_EQ(v.strides(), (Strides{-4}));
  EXPECT_EQ(v.offset(), 7);
}

TEST(ViewSlice, EmptyResultKeepsOtherDimensions) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  const Tensor v = t.Slice(1, 3, 1);
  EXPECT_EQ(v.shape(), (Shape{3, 0}));
  EXPECT_EQ(v.ElementCount(), 0);
  EXPECT_TRUE(Values<int32_t>(v).empty());
  EXPECT_EQ(v.Slice(0, 1, 3).shape(), (Shape{2, 0}));
  EXPECT_EQ(v.Slice(1, 0, 10).shape(), (Shape{3, 0}));
}

TEST(ViewSlice, StepZeroThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  EXPECT_THROW(t.Slice(0, 0, 3, 0), TensorShapeException);
  EXPECT_THROW(t.Slice(1, 0, 0, 0), TensorShapeException);
}

TEST(ViewSlice, OutOfRangeDimensionThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  EXPECT_THROW(t.Slice(2, 0, 1), TensorShapeException);
  EXPECT_THROW(t.Slice(-3, 0, 1), TensorShapeException);
  EXPECT_NO_THROW(t.Slice(-2, 0, 1));
}

TEST(ViewSlice, OfABroadcastDimensionKeepsStrideZero) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 3}, pool);
  const Tensor v = t.Expand(Shape{5, 3}).Slice(0, 4, 0, -2);
  EXPECT_EQ(v.shape(), (Shape{2, 3}));
  EXPECT_EQ(v.strides()[0], 0);
  EXPECT_EQ(Values<int32_t>(v), (Ints{0, 1, 2, 0, 1, 2}));
}

// --- Expand -------------------------------------------------------------------------------------

TEST(ViewExpand, BroadcastsExtentOneWithStrideZero) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 1}, pool);
  const Tensor v = t.Expand(Shape{3, 4});
  EXPECT_EQ(v.shape(), (Shape{3, 4}));
  EXPECT_EQ(v.strides(), (Strides{1, 0}));
  EXPECT_EQ(Values<int32_t>(v), (Ints{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
}

TEST(ViewExpand, AddsLeadingDimensions) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3}, pool);
  const Tensor v = t.Expand(Shape{2, 1, 3});
  EXPECT_EQ(v.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(v.strides()[0], 0);
  EXPECT_EQ(v.strides()[2], 1);
  EXPECT_EQ(Values<int32_t>(v), (Ints{0, 1, 2, 0, 1, 2}));
}

TEST(ViewExpand, ScalarToAnyShape) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{}, pool, 9);
  const Tensor v = t.Expand(Shape{2, 3});
  EXPECT_EQ(v.strides(), (Strides{0, 0}));
  EXPECT_EQ(Values<int32_t>(v), Ints(6, 9));
}

TEST(ViewExpand, ExtentOneToZeroIsEmpty) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 2}, pool);
  EXPECT_EQ(t.Expand(Shape{0, 2}).ElementCount(), 0);
}

TEST(ViewExpand, SameShapeKeepsStrides) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool).Transpose(0, 1);
  const Tensor v = t.Expand(Shape{3, 2});
  EXPECT_EQ(v.strides(), t.strides());
}

TEST(ViewExpand, IncompatibleShapeThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 2}, pool);
  EXPECT_THROW(t.Expand(Shape{3, 4}), TensorShapeException);
  EXPECT_THROW(t.Expand(Shape{6, 2}), TensorShapeException);
  EXPECT_THROW(t.Expand(Shape{2}), TensorShapeException);     // fewer dimensions
  EXPECT_THROW(t.Expand(Shape{3, 1}), TensorShapeException);  // cannot shrink to 1
  EXPECT_THROW(t.Expand(Shape{2, 3, 3}), TensorShapeException);
}

TEST(ViewExpand, WritesToTheBaseShowInEveryRepeat) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{2}, pool);
  const Tensor v = t.Expand(Shape{3, 2});
  t.Set<int32_t>({1}, 50);
  EXPECT_EQ(Values<int32_t>(v), (Ints{0, 50, 0, 50, 0, 50}));
}

// --- Squeeze and Unsqueeze ----------------------------------------------------------------------

TEST(ViewSqueeze, RemovesEveryExtentOneDimension) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 3, 1, 2, 1}, pool);
  const Tensor v = t.Squeeze();
  EXPECT_EQ(v.shape(), (Shape{3, 2}));
  EXPECT_EQ(v.strides(), (Strides{2, 1}));
  EXPECT_EQ(Values<int32_t>(v), Values<int32_t>(t));
}

TEST(ViewSqueeze, AllOnesBecomesAScalar) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 1}, pool, 4);
  const Tensor v = t.Squeeze();
  EXPECT_EQ(v.rank(), 0);
  EXPECT_EQ(v.At<int32_t>({}), 4);
}

TEST(ViewSqueeze, NothingToRemoveKeepsTheShape) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 0, 3}, pool);
  EXPECT_EQ(t.Squeeze().shape(), (Shape{2, 0, 3}));
}

TEST(ViewSqueeze, OneDimension) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 3, 1}, pool);
  EXPECT_EQ(t.Squeeze(0).shape(), (Shape{3, 1}));
  EXPECT_EQ(t.Squeeze(2).shape(), (Shape{1, 3}));
  EXPECT_EQ(t.Squeeze(-1).shape(), (Shape{1, 3}));
  EXPECT_EQ(t.Squeeze(-3).shape(), (Shape{3, 1}));
  EXPECT_EQ(Values<int32_t>(t.Squeeze(-1)), (Ints{0, 1, 2}));
}

TEST(ViewSqueeze, DimensionOfExtentOtherThanOneThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 3, 0}, pool);
  EXPECT_THROW(t.Squeeze(1), TensorShapeException);
  EXPECT_THROW(t.Squeeze(2), TensorShapeException);
  EXPECT_THROW(t.Squeeze(-2), TensorShapeException);
  EXPECT_THROW(t.Squeeze(3), TensorShapeException);
}

TEST(ViewUnsqueeze, AtTheFront) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  const Tensor v = t.Unsqueeze(0);
  EXPECT_EQ(v.shape(), (Shape{1, 2, 3}));
  EXPECT_TRUE(v.IsContiguous());
  EXPECT_EQ(Values<int32_t>(v), Values<int32_t>(t));
}

TEST(ViewUnsqueeze, InTheMiddle) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  const Tensor v = t.Unsqueeze(1);
  EXPECT_EQ(v.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(v.strides()[0], 3);
  EXPECT_EQ(v.strides()[2], 1);
  EXPECT_TRUE(v.IsContiguous());
  EXPECT_EQ(v.At<int32_t>({1, 0, 2}), 5);
}

TEST(ViewUnsqueeze, AtTheEnd) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  const Tensor v = t.Unsqueeze(2);
  EXPECT_EQ(v.shape(), (Shape{2, 3, 1}));
  EXPECT_TRUE(v.IsContiguous());
  EXPECT_EQ(v.At<int32_t>({1, 2, 0}), 5);
}

TEST(ViewUnsqueeze, NegativeDimensionCountsFromTheEnd) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  EXPECT_EQ(t.Unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(t.Unsqueeze(-2).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(t.Unsqueeze(-3).shape(), (Shape{1, 2, 3}));
}

TEST(ViewUnsqueeze, OutOfRangeDimensionThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  EXPECT_THROW(t.Unsqueeze(3), TensorShapeException);
  EXPECT_THROW(t.Unsqueeze(-4), TensorShapeException);
}

TEST(ViewUnsqueeze, ScalarBecomesRankOne) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{}, pool, 3);
  EXPECT_EQ(t.Unsqueeze(0).shape(), (Shape{1}));
  EXPECT_EQ(t.Unsqueeze(-1).At<int32_t>({0}), 3);
}

TEST(ViewUnsqueeze, RankEightThrows) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1, 1, 1, 1, 1, 1, 1, 2}, pool);
  EXPECT_THROW(t.Unsqueeze(0), TensorShapeException);
  EXPECT_THROW(t.Unsqueeze(8), TensorShapeException);
  EXPECT_THROW(t.Unsqueeze(-1), TensorShapeException);
  EXPECT_EQ(t.Squeeze(0).Unsqueeze(7).shape(), (Shape{1, 1, 1, 1, 1, 1, 2, 1}));
}

TEST(ViewUnsqueeze, OfAStridedViewKeepsValues) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool).Slice(1, 3, -5, -2).Transpose(0, 1);
  for (int d = -3; d <= 2; ++d) {
    const Tensor v = t.Unsqueeze(d);
    EXPECT_EQ(v.rank(), 3) << d;
    EXPECT_EQ(Values<int32_t>(v), Values<int32_t>(t)) << d;
  }
}

// --- Every view shares the buffer and moves nothing ---------------------------------------------

TEST(ViewSharing, EveryViewSharesTheBufferAndAllocatesNothing) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{2, 1, 3, 4}, pool);
  const int64_t rented = pool.Stats().rented_buffers;
  ExpectSharesBuffer(t, t.Transpose(0, 3), pool, rented);
  ExpectSharesBuffer(t, t.Permute({2, 0, 3, 1}), pool, rented);
  ExpectSharesBuffer(t, t.Slice(2, -1, -4, -2), pool, rented);
  ExpectSharesBuffer(t, t.Slice(3, 1, 3), pool, rented);
  ExpectSharesBuffer(t, t.Squeeze(), pool, rented);
  ExpectSharesBuffer(t, t.Squeeze(1), pool, rented);
  ExpectSharesBuffer(t, t.Unsqueeze(4), pool, rented);
  ExpectSharesBuffer(t, t.Unsqueeze(-3), pool, rented);
  ExpectSharesBuffer(t, *t.TryReshape({6, 4}), pool, rented);
  ExpectSharesBuffer(t, t.Reshape({4, -1}, pool), pool, rented);
  ExpectSharesBuffer(t, t.Slice(2, 0, 0), pool, rented);
  // Expand: read-only sharing (writes into a broadcast would be ambiguous).
  const Tensor e = t.Expand(Shape{5, 2, 2, 3, 4});
  EXPECT_EQ(e.buffer(), t.buffer());
  EXPECT_EQ(pool.Stats().rented_buffers, rented);
  t.Set<int32_t>({1, 0, 2, 3}, 1234);
  EXPECT_EQ(e.At<int32_t>({4, 1, 1, 2, 3}), 1234);
  EXPECT_EQ(t.Data<int32_t>().data(), e.Storage<int32_t>().data());
}

TEST(ViewSharing, ViewsOfArenaTensorsShareTheArenaBuffer) {
  BufferPool pool;
  Arena arena(pool);
  Tensor t = Iota<int32_t>(Shape{3, 4}, arena);
  Tensor v = t.Transpose(0, 1).Slice(0, 3, -5, -1).Unsqueeze(1);
  EXPECT_EQ(v.buffer(), t.buffer());
  v.Set<int32_t>({0, 0, 2}, -5);  // transposed row 3, column 2: element (2, 3)
  EXPECT_EQ(t.At<int32_t>({2, 3}), -5);
  arena.Reset();
  EXPECT_TRUE(v.IsStale());
}

}  // namespace
}  // namespace onemodel
