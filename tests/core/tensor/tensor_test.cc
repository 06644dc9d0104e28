// Tests of the Tensor value (spec 1, 3, 6, 7): construction, data access and its type and
// layout checks, element writes through views, version counters, staleness and Contiguous().
#include "core/tensor/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/exceptions.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/shape/shape.h"
#include "core/shape/strides.h"
#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel {
namespace {

using tensor_test::FromValues;
using tensor_test::Iota;
using tensor_test::Values;

using Floats = std::vector<float>;
using Ints = std::vector<int32_t>;

::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the E that f() throws ("" and a failure when it throws nothing).
template <typename E, typename F>
std::string MessageOf(F&& f) {
  try {
    f();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

int64_t RentedBuffers(const BufferPool& pool) { return pool.Stats().rented_buffers; }

// --- Construction and metadata ------------------------------------------------------------------

TEST(TensorEmpty, IsContiguousRowMajorAtOffsetZero) {
  BufferPool pool;
  const Tensor t = Tensor::Empty(Shape{2, 3, 4}, DType::kFloat, pool);
  EXPECT_FALSE(t.is_null());
  EXPECT_EQ(t.dtype(), DType::kFloat);
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(t.offset(), 0);
  EXPECT_EQ(t.ElementCount(), 24);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_FALSE(t.IsStale());
  EXPECT_EQ(t.block_size(), 0);
  EXPECT_EQ(t.buffer()->length(), 24 * 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.buffer()->data()) % 64, 0u);
}

TEST(TensorEmpty, ZeroFillsWhenAsked) {
  BufferPool pool;
  Tensor dirty = Iota<int32_t>(Shape{16}, pool, 1);
  dirty.Dispose();  // its block goes back to the free list and is handed out again below
  const Tensor t = Tensor::Empty(Shape{4, 4}, DType::kInt32, pool, /*zero=*/true);
  EXPECT_EQ(Values<int32_t>(t), Ints(16, 0));
}

TEST(TensorEmpty, CheckedBuildsPoisonUnwrittenElements) {
  if (!kChecked) GTEST_SKIP() << "only CHECKED builds poison new memory";
  BufferPool pool;
  Arena arena(pool);
  EXPECT_EQ(Values<int32_t>(Tensor::Empty(Shape{2, 3}, DType::kInt32, pool)), Ints(6, -1));
  EXPECT_EQ(Values<int32_t>(Tensor::Empty(Shape{5}, DType::kInt32, arena)), Ints(5, -1));
  EXPECT_TRUE(std::isnan(Tensor::Empty(Shape{1}, DType::kFloat, pool).At<float>({0})));
  EXPECT_EQ(Values<int32_t>(Tensor::Empty(Shape{4}, DType::kInt32, pool, /*zero=*/true)),
            Ints(4, 0));
}

TEST(TensorEmpty, ScalarHasOneElement) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{}, DType::kDouble, pool);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.ElementCount(), 1);
  t.Set<double>({}, 2.5);
  EXPECT_EQ(t.At<double>({}), 2.5);
  EXPECT_EQ(t.Data<double>().size(), 1u);
}

TEST(TensorEmpty, EmptyShapeHasNoElements) {
  BufferPool pool;
  const Tensor t = Tensor::Empty(Shape{3, 0, 2}, DType::kFloat, pool);
  EXPECT_EQ(t.ElementCount(), 0);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_TRUE(t.Data<float>().empty());
}

TEST(TensorEmpty, OversizedThrowsBeforeAllocating) {
  BufferPool pool;
  // 2^29 doubles are 2^32 bytes: the shape is valid, the buffer is not.
  EXPECT_THROW(Tensor::Empty(Shape{int64_t{1} << 29}, DType::kDouble, pool), TensorShapeException);
  EXPECT_EQ(RentedBuffers(pool), 0);
  EXPECT_EQ(pool.Stats().misses, 0);
}

TEST(TensorEmpty, UnsupportedTypeThrowsTensorTypeException) {
  BufferPool pool;
  EXPECT_THROW(Tensor::Empty(Shape{2}, static_cast<DType>(8), pool), TensorTypeException);
  EXPECT_EQ(RentedBuffers(pool), 0);
}

TEST(TensorEmpty, ArenaAllocatesToo) {
  BufferPool pool;
  Arena arena(pool);
  Tensor t = Iota<float>(Shape{3, 5}, arena);
  EXPECT_EQ(t.buffer()->owner(), static_cast<BufferOwner*>(&arena));
  EXPECT_EQ(t.At<float>({2, 4}), 14.0f);
}

TEST(TensorDescribe, NamesTypeShapeStridesAndOffset) {
  BufferPool pool;
  const Tensor t = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
  EXPECT_EQ(t.Describe(), "FLOAT [2, 3] strides [3, 1] offset 0");
  EXPECT_EQ(t.Transpose(0, 1).Slice(0, 1, 3).Describe(), "FLOAT [2, 2] strides [1, 3] offset 1");
}

TEST(TensorFromBuffer, MakesAViewOverALiveBuffer) {
  BufferPool pool;
  Tensor base = Iota<int32_t>(Shape{12}, pool);
  const Tensor v = Tensor::FromBuffer(base.buffer(), DType::kInt32, Shape{2, 3}, Strides{-3, 2}, 7);
  EXPECT_EQ(v.buffer(), base.buffer());
  EXPECT_EQ(Values<int32_t>(v), (Ints{7, 9, 11, 4, 6, 8}));
}

TEST(TensorFromBuffer, OutOfBoundsViewThrows) {
  BufferPool pool;
  Tensor base = Iota<int32_t>(Shape{12}, pool);
  EXPECT_THROW(Tensor::FromBuffer(base.buffer(), DType::kInt32, Shape{2, 3}, Strides{3, 1}, 7),
               TensorShapeException);
  EXPECT_THROW(Tensor::FromBuffer(base.buffer(), DType::kInt32, Shape{2, 3}, Strides{-3, 1}, 2),
               TensorShapeException);
  EXPECT_THROW(Tensor::FromBuffer(base.buffer(), DType::kInt32, Shape{2}, Strides{1, 1}, 0),
               TensorShapeException);
}

TEST(TensorNull, EveryDataAccessThrows) {
  Tensor t;
  EXPECT_TRUE(t.is_null());
  EXPECT_FALSE(t.IsStale());
  EXPECT_THROW(t.Data<float>(), StaleTensorException);
  EXPECT_THROW(t.version(), StaleTensorException);
  EXPECT_THROW(t.Dispose(), StaleTensorException);
}

// --- Data and MutableData -----------------------------------------------------------------------

TEST(TensorData, ReturnsRowMajorElements) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2, 3}, pool);
  EXPECT_EQ(Floats(t.Data<float>().begin(), t.Data<float>().end()), (Floats{0, 1, 2, 3, 4, 5}));
}

TEST(TensorData, TypeIsCheckedAgainstDtype) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  EXPECT_THROW(t.Data<int32_t>(), TensorTypeException);
  EXPECT_THROW(t.Data<double>(), TensorTypeException);
  EXPECT_THROW(t.Data<uint32_t>(), TensorTypeException);
  const std::string message = MessageOf<TensorTypeException>([&] { t.Data<int32_t>(); });
  EXPECT_TRUE(Contains(message, "FLOAT"));
  EXPECT_TRUE(Contains(message, "INT32"));
  EXPECT_NO_THROW(t.Data<float>());
}

TEST(TensorMutableData, TypeIsCheckedAgainstDtypeWithoutCountingAWrite) {
  BufferPool pool;
  Tensor t = Iota<int64_t>(Shape{4}, pool);
  const uint64_t before = t.version();
  EXPECT_THROW(t.MutableData<int32_t>(), TensorTypeException);
  EXPECT_THROW(t.MutableData<uint64_t>(), TensorTypeException);
  EXPECT_THROW(t.MutableStorage<double>(), TensorTypeException);
  EXPECT_EQ(t.version(), before);
  EXPECT_EQ(t.MutableData<int64_t>().size(), 4u);
}

TEST(TensorData, StorageTypeIsChecked) {
  BufferPool pool;
  const Tensor t = Iota<uint8_t>(Shape{4}, pool);
  EXPECT_THROW(t.Storage<int8_t>(), TensorTypeException);
  EXPECT_EQ(t.Storage<uint8_t>().size(), 4u);
}

TEST(TensorData, NonContiguousThrowsTensorLayoutException) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  EXPECT_THROW(t.Transpose(0, 1).Data<float>(), TensorLayoutException);
  EXPECT_THROW(t.Slice(1, 2, -4, -1).Data<float>(), TensorLayoutException);
  EXPECT_THROW(t.Slice(1, 0, 3, 2).Data<float>(), TensorLayoutException);
  EXPECT_THROW(t.Slice(0, 0, 1).Expand(Shape{4, 3}).Data<float>(), TensorLayoutException);
  const std::string message =
      MessageOf<TensorLayoutException>([&] { t.Transpose(0, 1).Data<float>(); });
  EXPECT_TRUE(Contains(message, "Contiguous()"));
}

TEST(TensorMutableData, NonContiguousThrowsWithoutCountingAWrite) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  Tensor view = t.Transpose(0, 1);
  EXPECT_THROW(view.MutableData<float>(), TensorLayoutException);
  EXPECT_EQ(t.version(), 1u);  // Iota's one MutableData
}

TEST(TensorData, ContiguousSliceStartsAtItsOffset) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  const Tensor row = t.Slice(0, 1, 2);
  EXPECT_EQ(row.offset(), 4);
  EXPECT_TRUE(row.IsContiguous());
  const std::span<const int32_t> data = row.Data<int32_t>();
  EXPECT_EQ(Ints(data.begin(), data.end()), (Ints{4, 5, 6, 7}));
}

TEST(TensorData, ExtentOneDimensionsWithOddStridesAreContiguous) {
  BufferPool pool;
  Tensor base = Iota<int32_t>(Shape{6}, pool);
  const Tensor t =
      Tensor::FromBuffer(base.buffer(), DType::kInt32, Shape{2, 1, 3}, Strides{3, -7, 1}, 0);
  ASSERT_TRUE(t.IsContiguous());
  const std::span<const int32_t> data = t.Data<int32_t>();
  EXPECT_EQ(Ints(data.begin(), data.end()), (Ints{0, 1, 2, 3, 4, 5}));
}

TEST(TensorStorage, IsTheWholeBuffer) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  const Tensor v = t.Slice(0, 2, 0, -1).Transpose(0, 1);  // non-contiguous view
  const std::span<const int32_t> storage = v.Storage<int32_t>();
  EXPECT_EQ(storage.size(), 12u);
  EXPECT_EQ(storage.data(), t.Data<int32_t>().data());
  EXPECT_EQ(storage[static_cast<size_t>(v.offset() + v.strides()[0])], v.At<int32_t>({1, 0}));
}

// --- At and Set
// -----------------------------------------------------------------------------------

TEST(TensorAt, ReadsThroughTransposedView) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2, 3}, pool);
  const Tensor tt = t.Transpose(0, 1);
  EXPECT_EQ(tt.shape(), (Shape{3, 2}));
  EXPECT_EQ(tt.At<float>({2, 1}), 5.0f);
  EXPECT_EQ(tt.At<float>({1, 0}), 1.0f);
  EXPECT_EQ(Values<float>(tt), (Floats{0, 3, 1, 4, 2, 5}));
}

TEST(TensorAt, ReadsThroughNegativeStrideView) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 4}, pool);
  const Tensor r = t.Slice(1, -1, -5, -1);
  EXPECT_EQ(r.strides(), (Strides{4, -1}));
  EXPECT_EQ(r.offset(), 3);
  EXPECT_EQ(r.At<int32_t>({0, 0}), 3);
  EXPECT_EQ(r.At<int32_t>({1, 3}), 4);
  EXPECT_EQ(Values<int32_t>(r), (Ints{3, 2, 1, 0, 7, 6, 5, 4}));
}

TEST(TensorAt, ReadsThroughOffsetView) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{4, 5}, pool);
  const Tensor v = t.Slice(0, 1, 3).Slice(1, 2, 5, 2);
  EXPECT_EQ(v.offset(), 7);
  EXPECT_EQ(Values<int32_t>(v), (Ints{7, 9, 12, 14}));
}

TEST(TensorAt, IndexOutOfRangeThrowsTensorShapeException) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2, 3}, pool);
  EXPECT_THROW(t.At<float>({2, 0}), TensorShapeException);
  EXPECT_THROW(t.At<float>({0, 3}), TensorShapeException);
  EXPECT_THROW(t.At<float>({-1, 0}), TensorShapeException);
  EXPECT_THROW(t.At<float>({0}), TensorShapeException);
  EXPECT_THROW(t.At<float>({0, 0, 0}), TensorShapeException);
}

TEST(TensorAt, TypeIsChecked) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2}, pool);
  EXPECT_THROW(t.At<double>({0}), TensorTypeException);
  EXPECT_THROW(t.At<int32_t>({0}), TensorTypeException);
}

TEST(TensorSet, WritesThroughTransposedViewAreVisibleOnTheBase) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  Tensor tt = t.Transpose(0, 1);
  tt.Set<float>({2, 0}, 42.0f);
  EXPECT_EQ(t.At<float>({0, 2}), 42.0f);
  EXPECT_EQ(Values<float>(t), (Floats{0, 1, 42, 3, 4, 5}));
}

TEST(TensorSet, WritesThroughNegativeStrideAndOffsetViews) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{6}, pool);
  t.Slice(0, -1, -7, -2).Set<int32_t>({1}, 100);  // elements 5, 3, 1: index 1 is element 3
  t.Slice(0, 2, 6).Set<int32_t>({3}, 200);        // element 5
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, 1, 2, 100, 4, 200}));
}

TEST(TensorSet, TypeAndIndexAreChecked) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2}, pool);
  EXPECT_THROW(t.Set<int32_t>({0}, 1), TensorTypeException);
  EXPECT_THROW(t.Set<float>({2}, 1.0f), TensorShapeException);
  EXPECT_EQ(Values<float>(t), (Floats{0, 1}));
}

// --- Fill ---------------------------------------------------------------------------------------

TEST(TensorFill, FillsEveryElement) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{3, 5}, DType::kInt16, pool);
  t.Fill<int16_t>(-3);
  EXPECT_EQ(Values<int16_t>(t), std::vector<int16_t>(15, -3));
}

TEST(TensorFill, ScalarAndEmpty) {
  BufferPool pool;
  Tensor s = Tensor::Empty(Shape{}, DType::kFloat, pool);
  s.Fill(7.5f);
  EXPECT_EQ(s.At<float>({}), 7.5f);
  Tensor e = Tensor::Empty(Shape{0, 4}, DType::kFloat, pool);
  EXPECT_NO_THROW(e.Fill(1.0f));
}

TEST(TensorFill, ThroughTransposedViewTouchesOnlyItsElements) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  t.Transpose(0, 1).Slice(0, 1, 3).Fill<int32_t>(-1);  // columns 1 and 2
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11}));
}

TEST(TensorFill, ThroughNegativeStrideOffsetViewTouchesOnlyItsElements) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{2, 6}, pool);
  t.Slice(1, 4, 0, -3).Slice(0, 1, 2).Fill<int32_t>(-9);  // row 1, columns 4 and 1
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, 1, 2, 3, 4, 5, 6, -9, 8, 9, -9, 11}));
}

TEST(TensorFill, TypeIsChecked) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2}, pool);
  EXPECT_THROW(t.Fill<double>(1.0), TensorTypeException);
  EXPECT_THROW(t.Fill<int32_t>(1), TensorTypeException);
  EXPECT_EQ(Values<float>(t), (Floats{0, 1}));
}

TEST(TensorFill, RefusedOnExpandedView) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{1, 3}, pool);
  Tensor wide = t.Expand(Shape{4, 3});
  ASSERT_EQ(wide.strides()[0], 0);
  const uint64_t before = t.version();
  const std::string message = MessageOf<TensorShapeException>([&] { wide.Fill(9.0f); });
  EXPECT_TRUE(Contains(message, "broadcast"));
  EXPECT_EQ(t.version(), before);
  EXPECT_EQ(Values<float>(t), (Floats{0, 1, 2}));
  // A new leading dimension has stride 0 too.
  EXPECT_THROW(t.Expand(Shape{2, 1, 3}).Fill(9.0f), TensorShapeException);
}

TEST(TensorFill, AllowedOnExpandedViewOfExtentOne) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{3}, pool);
  Tensor v = t.Expand(Shape{1, 3});  // the new dimension has extent 1: nothing repeats
  v.Fill(4.0f);
  EXPECT_EQ(Values<float>(t), (Floats{4, 4, 4}));
}

// --- CopyFrom -----------------------------------------------------------------------------------

TEST(TensorCopyFrom, CopiesBetweenBuffers) {
  BufferPool pool;
  const Tensor src = Iota<double>(Shape{2, 3}, pool, 1.0);
  Tensor dst = Tensor::Empty(Shape{2, 3}, DType::kDouble, pool);
  dst.CopyFrom(src);
  EXPECT_EQ(Values<double>(dst), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(TensorCopyFrom, ThroughTransposedAndNegativeStrideViews) {
  BufferPool pool;
  const Tensor src = Iota<int32_t>(Shape{3, 2}, pool);
  Tensor dst_base = Tensor::Empty(Shape{2, 3}, DType::kInt32, pool, /*zero=*/true);
  Tensor dst = dst_base.Transpose(0, 1);  // [3, 2] with strides [1, 3]
  dst.CopyFrom(src.Slice(0, 2, -4, -1));  // rows reversed: 4 5 / 2 3 / 0 1
  EXPECT_EQ(Values<int32_t>(dst), (Ints{4, 5, 2, 3, 0, 1}));
  EXPECT_EQ(Values<int32_t>(dst_base), (Ints{4, 2, 0, 5, 3, 1}));
}

TEST(TensorCopyFrom, IntoOffsetView) {
  BufferPool pool;
  Tensor dst = Tensor::Empty(Shape{3, 3}, DType::kInt32, pool, /*zero=*/true);
  const Tensor src = Iota<int32_t>(Shape{2, 2}, pool, 1);
  dst.Slice(0, 1, 3).Slice(1, 1, 3).CopyFrom(src);
  EXPECT_EQ(Values<int32_t>(dst), (Ints{0, 0, 0, 0, 1, 2, 0, 3, 4}));
}

TEST(TensorCopyFrom, FromBroadcastSource) {
  BufferPool pool;
  const Tensor row = Iota<float>(Shape{3}, pool, 1.0f);
  Tensor dst = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
  dst.CopyFrom(row.Expand(Shape{2, 3}));
  EXPECT_EQ(Values<float>(dst), (Floats{1, 2, 3, 1, 2, 3}));
}

TEST(TensorCopyFrom, RefusedIntoExpandedView) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{3, 1}, pool);
  Tensor wide = t.Expand(Shape{3, 4});
  const Tensor src = Iota<float>(Shape{3, 4}, pool);
  const uint64_t before = t.version();
  EXPECT_THROW(wide.CopyFrom(src), TensorShapeException);
  EXPECT_EQ(t.version(), before);
  EXPECT_EQ(Values<float>(t), (Floats{0, 1, 2}));
}

TEST(TensorCopyFrom, ShapeOrTypeMismatchThrows) {
  BufferPool pool;
  Tensor dst = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
  EXPECT_THROW(dst.CopyFrom(Iota<float>(Shape{3, 2}, pool)), TensorShapeException);
  EXPECT_THROW(dst.CopyFrom(Iota<float>(Shape{6}, pool)), TensorShapeException);
  EXPECT_THROW(dst.CopyFrom(Iota<double>(Shape{2, 3}, pool)), TensorShapeException);
  EXPECT_EQ(dst.version(), 0u);
}

// Overlapping views of one buffer copy as if through a temporary.
TEST(TensorCopyFrom, OverlappingShiftRight) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{10}, pool);
  t.Slice(0, 1, 10).CopyFrom(t.Slice(0, 0, 9));  // a naive forward copy smears element 0
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(TensorCopyFrom, OverlappingShiftLeft) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{10}, pool);
  t.Slice(0, 0, 9).CopyFrom(t.Slice(0, 1, 10));  // a naive backward copy smears element 9
  EXPECT_EQ(Values<int32_t>(t), (Ints{1, 2, 3, 4, 5, 6, 7, 8, 9, 9}));
}

TEST(TensorCopyFrom, OverlappingStridedShiftRight) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{8, 2}, pool);
  Tensor column = t.Slice(1, 0, 1);  // elements 0, 2, 4, ...: an element-by-element copy
  column.Slice(0, 1, 8).CopyFrom(column.Slice(0, 0, 7));
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15}));
}

TEST(TensorCopyFrom, OverlappingReversedInPlace) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{7}, pool);
  t.CopyFrom(t.Slice(0, -1, -8, -1));  // a naive copy gives a palindrome
  EXPECT_EQ(Values<int32_t>(t), (Ints{6, 5, 4, 3, 2, 1, 0}));
}

TEST(TensorCopyFrom, OverlappingTransposeInPlace) {
  BufferPool pool;
  Tensor m = Iota<float>(Shape{3, 3}, pool);
  m.CopyFrom(m.Transpose(0, 1));
  EXPECT_EQ(Values<float>(m), (Floats{0, 3, 6, 1, 4, 7, 2, 5, 8}));
}

TEST(TensorCopyFrom, OverlappingRowsOf2D) {
  BufferPool pool;
  Tensor m = Iota<int32_t>(Shape{4, 3}, pool);
  m.Slice(0, 1, 4).CopyFrom(m.Slice(0, 0, 3));  // rows shift down by one
  EXPECT_EQ(Values<int32_t>(m), (Ints{0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(TensorCopyFrom, FromItself) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  t.CopyFrom(t);
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, 1, 2, 3, 4, 5}));
}

TEST(TensorCopyFrom, DisjointViewsOfOneBuffer) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{2, 4}, pool);
  t.Slice(0, 1, 2).CopyFrom(t.Slice(0, 0, 1).Slice(1, 3, -5, -1));
  EXPECT_EQ(Values<int32_t>(t), (Ints{0, 1, 2, 3, 3, 2, 1, 0}));
}

// --- Versions (spec 7) --------------------------------------------------------------------------

TEST(TensorVersion, ZeroAtRent) {
  BufferPool pool;
  Arena arena(pool);
  EXPECT_EQ(Tensor::Empty(Shape{4}, DType::kFloat, pool).version(), 0u);
  EXPECT_EQ(Tensor::Empty(Shape{4}, DType::kFloat, arena).version(), 0u);
  EXPECT_EQ(Tensor::Empty(Shape{4}, DType::kFloat, pool, /*zero=*/true).version(), 0u);
}

TEST(TensorVersion, ZeroAgainWhenABufferIsRentedAgain) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{8}, DType::kFloat, pool);
  t.Fill(1.0f);
  t.Fill(2.0f);
  Buffer* header = t.buffer();
  t.Dispose();
  const Tensor u = Tensor::Empty(Shape{8}, DType::kFloat, pool);
  ASSERT_EQ(u.buffer(), header);
  EXPECT_EQ(u.version(), 0u);
}

TEST(TensorVersion, ZeroAgainAfterArenaReset) {
  BufferPool pool;
  Arena arena(pool);
  Tensor t = Tensor::Empty(Shape{8}, DType::kFloat, arena);
  t.Fill(1.0f);
  arena.Reset();
  EXPECT_EQ(Tensor::Empty(Shape{8}, DType::kFloat, arena).version(), 0u);
}

TEST(TensorVersion, MutableDataBumpsOnce) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{2, 2}, DType::kFloat, pool);
  std::span<float> data = t.MutableData<float>();
  data[0] = 1.0f;
  data[3] = 2.0f;
  EXPECT_EQ(t.version(), 1u);
  t.MutableData<float>();
  EXPECT_EQ(t.version(), 2u);
}

TEST(TensorVersion, MutableStorageBumpsOnce) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{2, 2}, DType::kFloat, pool);
  t.Transpose(0, 1).MutableStorage<float>()[1] = 3.0f;
  EXPECT_EQ(t.version(), 1u);
}

TEST(TensorVersion, SetBumpsOnce) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{2, 2}, DType::kFloat, pool);
  t.Set<float>({1, 1}, 1.0f);
  EXPECT_EQ(t.version(), 1u);
  t.Set<float>({0, 1}, 1.0f);
  EXPECT_EQ(t.version(), 2u);
}

TEST(TensorVersion, FillBumpsOnce) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{5, 7}, DType::kFloat, pool);
  t.Fill(1.0f);
  EXPECT_EQ(t.version(), 1u);
  t.Transpose(0, 1).Slice(0, 6, -8, -2).Fill(2.0f);  // a strided fill of many rows
  EXPECT_EQ(t.version(), 2u);
}

TEST(TensorVersion, CopyFromBumpsTheDestinationOnce) {
  BufferPool pool;
  const Tensor src = Iota<float>(Shape{4, 4}, pool);
  Tensor dst = Tensor::Empty(Shape{4, 4}, DType::kFloat, pool);
  dst.Transpose(0, 1).CopyFrom(src);
  EXPECT_EQ(dst.version(), 1u);
  EXPECT_EQ(src.version(), 1u);  // only Iota's MutableData
}

TEST(TensorVersion, OverlappingCopyFromBumpsOnce) {
  BufferPool pool;
  Tensor t = Iota<int32_t>(Shape{10}, pool);
  ASSERT_EQ(t.version(), 1u);
  t.Slice(0, 1, 10).CopyFrom(t.Slice(0, 0, 9));
  EXPECT_EQ(t.version(), 2u);
}

TEST(TensorVersion, ReadsDoNotBump) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{3, 4}, pool);
  const uint64_t before = t.version();
  t.Data<float>();
  t.Storage<float>();
  t.At<float>({2, 3});
  t.Transpose(0, 1).At<float>({3, 2});
  t.Contiguous(pool);
  EXPECT_EQ(t.version(), before);
}

TEST(TensorVersion, ViewsDoNotBump) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{3, 4}, pool);
  const uint64_t before = t.version();
  t.Transpose(0, 1).Slice(0, 3, -5, -1).Unsqueeze(0).Squeeze().Expand(Shape{2, 4, 3});
  ASSERT_TRUE(t.TryReshape({4, 3}).has_value());
  EXPECT_EQ(t.version(), before);
}

TEST(TensorVersion, SharedByViewsAndCopiesOfTheHandle) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{3, 4}, DType::kFloat, pool);
  Tensor view = t.Transpose(0, 1).Slice(0, 1, 3);
  Tensor handle = t;
  view.Set<float>({0, 0}, 1.0f);
  EXPECT_EQ(t.version(), 1u);
  EXPECT_EQ(handle.version(), 1u);
  EXPECT_EQ(view.version(), 1u);
  t.Fill(0.0f);
  EXPECT_EQ(view.version(), 2u);
  handle.Slice(0, 0, 1).MutableData<float>();
  EXPECT_EQ(view.version(), 3u);
  EXPECT_EQ(t.version(), 3u);
}

TEST(TensorVersion, SeparateBuffersHaveSeparateCounters) {
  BufferPool pool;
  Tensor a = Tensor::Empty(Shape{2}, DType::kFloat, pool);
  Tensor b = Tensor::Empty(Shape{2}, DType::kFloat, pool);
  a.Fill(1.0f);
  EXPECT_EQ(a.version(), 1u);
  EXPECT_EQ(b.version(), 0u);
}

TEST(TensorVersion, WriteThroughAnEarlierSpanIsNotCounted) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{4}, DType::kFloat, pool);
  std::span<float> data = t.MutableData<float>();
  ASSERT_EQ(t.version(), 1u);
  data[0] = 5.0f;
  data[1] = 6.0f;
  EXPECT_EQ(t.version(), 1u);
  EXPECT_EQ(t.At<float>({0}), 5.0f);
  std::span<float> storage = t.MutableStorage<float>();
  ASSERT_EQ(t.version(), 2u);
  storage[2] = 7.0f;
  EXPECT_EQ(t.version(), 2u);
}

TEST(TensorVersion, FailedWritesDoNotBump) {
  BufferPool pool;
  Tensor t = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
  EXPECT_THROW(t.Set<float>({2, 0}, 1.0f), TensorShapeException);
  EXPECT_THROW(t.Fill(1.0), TensorTypeException);
  EXPECT_THROW(t.CopyFrom(Iota<float>(Shape{3, 2}, pool)), TensorShapeException);
  EXPECT_THROW(t.Transpose(0, 1).MutableData<float>(), TensorLayoutException);
  EXPECT_EQ(t.version(), 0u);
}

// --- Staleness (spec 6) -------------------------------------------------------------------------

TEST(TensorStale, DisposeThroughACopyMakesOriginalAndViewsStale) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  const Tensor view = t.Transpose(0, 1);
  Tensor copy = t;
  copy.Dispose();
  for (const Tensor* x : std::vector<const Tensor*>{&t, &view, &copy}) {
    EXPECT_TRUE(x->IsStale());
    EXPECT_THROW(x->At<float>({0, 0}), StaleTensorException);
    EXPECT_THROW(x->version(), StaleTensorException);
    EXPECT_THROW(x->Storage<float>(), StaleTensorException);
  }
  EXPECT_THROW(t.Data<float>(), StaleTensorException);
  EXPECT_THROW(t.MutableData<float>(), StaleTensorException);
  EXPECT_THROW(view.Data<float>(), StaleTensorException);  // stale wins over non-contiguous
  EXPECT_TRUE(Contains(MessageOf<StaleTensorException>([&] { t.At<float>({0, 0}); }), "stale"));
  EXPECT_TRUE(Contains(MessageOf<StaleTensorException>([&] { view.Data<float>(); }), "stale"));
  EXPECT_TRUE(Contains(MessageOf<StaleTensorException>([&] { t.version(); }), "stale"));
}

TEST(TensorStale, WritesToAStaleTensorThrow) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  Tensor other = Iota<float>(Shape{2, 3}, pool);
  Tensor(t).Dispose();
  EXPECT_THROW(t.Set<float>({0, 0}, 1.0f), StaleTensorException);
  EXPECT_THROW(t.Fill(1.0f), StaleTensorException);
  EXPECT_THROW(t.CopyFrom(other), StaleTensorException);
  EXPECT_THROW(other.CopyFrom(t), StaleTensorException);
  EXPECT_THROW(t.MutableStorage<float>(), StaleTensorException);
  EXPECT_EQ(other.version(), 1u);
  EXPECT_EQ(Values<float>(other), (Floats{0, 1, 2, 3, 4, 5}));
}

TEST(TensorStale, ViewsOfAStaleTensorThrow) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  t.Dispose();
  EXPECT_THROW(t.Transpose(0, 1), StaleTensorException);
  EXPECT_THROW(t.Slice(0, 0, 1), StaleTensorException);
  EXPECT_THROW(t.TryReshape({6}), StaleTensorException);
  EXPECT_THROW(t.Contiguous(pool), StaleTensorException);
  EXPECT_THROW(t.Reshape({6}, pool), StaleTensorException);
}

TEST(TensorStale, DisposeTwiceThrows) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{4}, pool);
  Tensor view = t.Slice(0, 1, 3);
  t.Dispose();
  EXPECT_THROW(t.Dispose(), StaleTensorException);
  EXPECT_THROW(view.Dispose(), StaleTensorException);
  EXPECT_EQ(RentedBuffers(pool), 0);
}

TEST(TensorStale, DisposeReturnsTheBufferToThePool) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{4}, pool);
  ASSERT_EQ(RentedBuffers(pool), 1);
  t.Transpose(0, 0).Dispose();  // through a view
  EXPECT_EQ(RentedBuffers(pool), 0);
}

TEST(TensorStale, ArenaResetMakesArenaTensorsStaleButNotPoolTensors) {
  BufferPool pool;
  Arena arena(pool);
  Tensor a = Iota<float>(Shape{2, 3}, arena);
  const Tensor a_view = a.Transpose(0, 1);
  Tensor p = Iota<float>(Shape{2, 3}, pool, 10.0f);
  arena.Reset();
  EXPECT_TRUE(a.IsStale());
  EXPECT_TRUE(a_view.IsStale());
  EXPECT_THROW(a.At<float>({0, 0}), StaleTensorException);
  EXPECT_THROW(a.Data<float>(), StaleTensorException);
  EXPECT_THROW(a.version(), StaleTensorException);
  EXPECT_THROW(a_view.At<float>({0, 0}), StaleTensorException);
  EXPECT_THROW(a.Dispose(), StaleTensorException);
  EXPECT_FALSE(p.IsStale());
  EXPECT_EQ(Values<float>(p), (Floats{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(p.version(), 1u);
}

TEST(TensorStale, ArenaDisposeThenResetStaysStale) {
  BufferPool pool;
  Arena arena(pool);
  Tensor a = Iota<float>(Shape{4}, arena);
  Tensor copy = a;
  a.Dispose();
  EXPECT_TRUE(copy.IsStale());
  EXPECT_THROW(copy.Dispose(), StaleTensorException);
  arena.Reset();
  const Tensor fresh = Iota<float>(Shape{4}, arena);
  EXPECT_TRUE(copy.IsStale());
  EXPECT_THROW(copy.At<float>({0}), StaleTensorException);
  EXPECT_FALSE(fresh.IsStale());
}

TEST(TensorStale, ReRentedPoolBufferDoesNotReviveTheOldHandle) {
  BufferPool pool;
  Tensor old = Iota<float>(Shape{4}, pool);
  const Tensor old_view = old.Slice(0, 3, -5, -1);
  Buffer* header = old.buffer();
  old.Dispose();
  Tensor fresh = Tensor::Empty(Shape{4}, DType::kFloat, pool);
  ASSERT_EQ(fresh.buffer(), header);  // the pool handed the same header out again
  fresh.Fill(7.0f);
  EXPECT_TRUE(old.IsStale());
  EXPECT_TRUE(old_view.IsStale());
  EXPECT_THROW(old.At<float>({0}), StaleTensorException);
  EXPECT_THROW(old_view.At<float>({0}), StaleTensorException);
  EXPECT_THROW(old.Data<float>(), StaleTensorException);
  EXPECT_THROW(old.version(), StaleTensorException);
  EXPECT_THROW(old.Fill(1.0f), StaleTensorException);
  // Disposing through the old handle must not return the new owner's buffer.
  EXPECT_THROW(old.Dispose(), StaleTensorException);
  EXPECT_FALSE(fresh.IsStale());
  EXPECT_EQ(RentedBuffers(pool), 1);
  EXPECT_EQ(Values<float>(fresh), (Floats{7, 7, 7, 7}));
  EXPECT_EQ(fresh.version(), 1u);
}

TEST(TensorStale, ReusedArenaHeaderDoesNotReviveTheOldHandle) {
  BufferPool pool;
  Arena arena(pool);
  const Tensor old = Iota<int32_t>(Shape{4}, arena);
  Buffer* header = old.buffer();
  arena.Reset();
  const Tensor fresh = Iota<int32_t>(Shape{4}, arena, 100);
  ASSERT_EQ(fresh.buffer(), header);
  EXPECT_TRUE(old.IsStale());
  EXPECT_THROW(old.At<int32_t>({0}), StaleTensorException);
  EXPECT_EQ(Values<int32_t>(fresh), (Ints{100, 101, 102, 103}));
}

TEST(TensorStale, MetadataStillWorks) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 3}, pool);
  const Tensor view = t.Transpose(0, 1).Slice(0, 1, 3);
  const std::string before = view.Describe();
  t.Dispose();
  EXPECT_EQ(view.shape(), (Shape{2, 2}));
  EXPECT_EQ(view.strides(), (Strides{1, 3}));
  EXPECT_EQ(view.offset(), 1);
  EXPECT_EQ(view.dtype(), DType::kFloat);
  EXPECT_EQ(view.rank(), 2);
  EXPECT_EQ(view.ElementCount(), 4);
  EXPECT_EQ(view.Describe(), before);
  EXPECT_FALSE(view.IsContiguous());
  EXPECT_EQ(view.layout(), Layout::kStrided);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_EQ(t.Describe(), "FLOAT [2, 3] strides [3, 1] offset 0");
  // The message of the stale error describes the tensor too.
  EXPECT_TRUE(Contains(MessageOf<StaleTensorException>([&] {
                         view.At<float>({0, 0});
                       }),
                       "FLOAT [2, 2]"));
}

// --- Contiguous() -------------------------------------------------------------------------------

TEST(TensorContiguous, ReturnsTheSameTensorWhenContiguous) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2, 3}, pool);
  const Tensor c = t.Contiguous(pool);
  EXPECT_EQ(c.buffer(), t.buffer());
  EXPECT_EQ(c.offset(), 0);
  EXPECT_EQ(c.strides(), t.strides());
  EXPECT_EQ(RentedBuffers(pool), 1);
}

TEST(TensorContiguous, ReturnsTheSameTensorForContiguousOffsetView) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{3, 4}, pool);
  const Tensor rows = t.Slice(0, 1, 3);
  const Tensor c = rows.Contiguous(pool);
  EXPECT_EQ(c.buffer(), t.buffer());
  EXPECT_EQ(c.offset(), 4);
  EXPECT_EQ(RentedBuffers(pool), 1);
}

TEST(TensorContiguous, ReturnsTheSameTensorForExtentOneDimensionsWithOddStrides) {
  BufferPool pool;
  Tensor base = Iota<int32_t>(Shape{6}, pool);
  const Tensor odd =
      Tensor::FromBuffer(base.buffer(), DType::kInt32, Shape{1, 2, 1, 3}, Strides{0, 3, -5, 1}, 0);
  const Tensor c = odd.Contiguous(pool);
  EXPECT_EQ(c.buffer(), base.buffer());
  EXPECT_EQ(c.strides(), (Strides{0, 3, -5, 1}));
  // Views that leave extent-1 dimensions with odd strides: a column of a transposed row.
  const Tensor column = base.Slice(0, 2, 3).Unsqueeze(0).Transpose(0, 1);
  EXPECT_EQ(column.Contiguous(pool).buffer(), base.buffer());
  EXPECT_EQ(RentedBuffers(pool), 1);
}

TEST(TensorContiguous, ReturnsTheSameTensorWhenEmpty) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{3, 4}, pool);
  const Tensor empty = t.Transpose(0, 1).Slice(1, 2, 1);  // [4, 0] with strides [1, 4]
  ASSERT_EQ(empty.ElementCount(), 0);
  ASSERT_EQ(empty.strides(), (Strides{1, 4}));
  EXPECT_EQ(empty.Contiguous(pool).buffer(), t.buffer());
  EXPECT_EQ(RentedBuffers(pool), 1);
}

TEST(TensorContiguous, CopiesATransposedView) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2, 3}, pool);
  const Tensor c = t.Transpose(0, 1).Contiguous(pool);
  EXPECT_NE(c.buffer(), t.buffer());
  EXPECT_TRUE(c.IsContiguous());
  EXPECT_EQ(c.strides(), (Strides{2, 1}));
  EXPECT_EQ(c.offset(), 0);
  EXPECT_EQ(Values<float>(c), (Floats{0, 3, 1, 4, 2, 5}));
  const std::span<const float> data = c.Data<float>();
  EXPECT_EQ(Floats(data.begin(), data.end()), (Floats{0, 3, 1, 4, 2, 5}));
}

TEST(TensorContiguous, CopiesNegativeStrideOffsetAndBroadcastViews) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool);
  const Tensor reversed = t.Slice(1, -1, -5, -2).Slice(0, 1, 3);
  EXPECT_EQ(Values<int32_t>(reversed.Contiguous(pool)), (Ints{7, 5, 11, 9}));
  const Tensor broadcast = t.Slice(0, 2, 3).Expand(Shape{2, 1, 4});
  const Tensor c = broadcast.Contiguous(pool);
  EXPECT_EQ(c.strides(), (Strides{4, 4, 1}));
  EXPECT_EQ(Values<int32_t>(c), (Ints{8, 9, 10, 11, 8, 9, 10, 11}));
}

TEST(TensorContiguous, CopyComesFromTheGivenAllocator) {
  BufferPool pool;
  Arena arena(pool);
  const Tensor t = Iota<float>(Shape{2, 3}, pool);
  const Tensor c = t.Transpose(0, 1).Contiguous(arena);
  EXPECT_EQ(c.buffer()->owner(), static_cast<BufferOwner*>(&arena));
  EXPECT_EQ(Values<float>(c), (Floats{0, 3, 1, 4, 2, 5}));
  arena.Reset();
  EXPECT_TRUE(c.IsStale());
  EXPECT_FALSE(t.IsStale());
}

TEST(TensorContiguous, CopyIsIndependentOfTheSource) {
  BufferPool pool;
  Tensor t = Iota<float>(Shape{2, 2}, pool);
  Tensor c = t.Transpose(0, 1).Contiguous(pool);
  t.Fill(-1.0f);
  EXPECT_EQ(Values<float>(c), (Floats{0, 2, 1, 3}));
}

}  // namespace
}  // namespace onemodel

namespace onemodel {
namespace {

TEST(TensorFromBuffer, RefusesABufferThatIsNotRented) {
  BufferPool pool;
  Buffer* b = pool.Rent(64);
  Tensor ok = Tensor::FromBuffer(b, DType::kFloat, Shape{16}, Strides{1}, 0);
  EXPECT_EQ(ok.ElementCount(), 16);
  pool.Release(b);
  EXPECT_THROW(Tensor::FromBuffer(b, DType::kFloat, Shape{16}, Strides{1}, 0),
               StaleTensorException);
}

// An arena's header keeps its owner across Reset(): FromBuffer asks the arena whether it is
// rented.
TEST(TensorFromBuffer, RefusesAnArenaBufferAfterReset) {
  BufferPool pool;
  Arena arena(pool);
  Buffer* b = arena.Allocate(64);
  Tensor ok = Tensor::FromBuffer(b, DType::kFloat, Shape{16}, Strides{1}, 0);
  EXPECT_EQ(ok.ElementCount(), 16);
  arena.Reset();
  ASSERT_EQ(b->owner(), static_cast<BufferOwner*>(&arena));
  EXPECT_THROW(Tensor::FromBuffer(b, DType::kFloat, Shape{16}, Strides{1}, 0),
               StaleTensorException);
  ASSERT_EQ(arena.Allocate(64), b);
  EXPECT_EQ(Tensor::FromBuffer(b, DType::kFloat, Shape{16}, Strides{1}, 0).ElementCount(), 16);
}

}  // namespace
}  // namespace onemodel
