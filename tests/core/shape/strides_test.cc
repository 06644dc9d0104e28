// Tests of core/shape/strides (spec 3): row-major strides, contiguity, reachable offsets and
// view bounds.
#include "core/shape/strides.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/exceptions.h"
#include "core/shape/shape.h"

namespace onemodel {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the TensorShapeException CheckViewBounds throws ("" and a failure if none).
std::string ViewError(const Shape& shape, const Strides& strides, int64_t offset,
                      int64_t buffer_elements) {
  try {
    CheckViewBounds(shape, strides, offset, buffer_elements);
    ADD_FAILURE() << "view " << shape.ToString() << " strides " << strides.ToString() << " offset "
                  << offset << " in " << buffer_elements << " elements accepted";
  } catch (const TensorShapeException& e) {
    return e.what();
  }
  return "";
}

// --- Strides value ------------------------------------------------------------------------------

TEST(Strides, DefaultHasRankZero) {
  const Strides s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_TRUE(s.values().empty());
  EXPECT_EQ(s.ToString(), "[]");
}

TEST(Strides, HoldsSignedValues) {
  const Strides s{6, 0, -1, kInt32Min};
  EXPECT_EQ(s.rank(), 4);
  EXPECT_EQ(s[0], 6);
  EXPECT_EQ(s[1], 0);
  EXPECT_EQ(s[2], -1);
  EXPECT_EQ(s[3], kInt32Min);
  EXPECT_EQ(s.ToString(), "[6, 0, -1, -2147483648]");
}

TEST(Strides, ElementsAreWritable) {
  Strides s{3, 1};
  s[0] = -3;
  EXPECT_EQ(s, (Strides{-3, 1}));
}

TEST(Strides, EqualityComparesRankAndValues) {
  EXPECT_EQ((Strides{3, 1}), (Strides{3, 1}));
  EXPECT_NE((Strides{3, 1}), (Strides{1, 3}));
  EXPECT_NE((Strides{0}), Strides());
  EXPECT_NE((Strides{3, 1}), (Strides{3, 1, 0}));
}

TEST(Strides, RankEightIsAccepted) { EXPECT_EQ((Strides{1, 1, 1, 1, 1, 1, 1, 1}).rank(), 8); }

TEST(Strides, RankNineThrows) {
  EXPECT_THROW((Strides{1, 1, 1, 1, 1, 1, 1, 1, 1}), TensorShapeException);
}

TEST(Strides, SpanConstructorMatchesInitializerList) {
  const std::vector<int32_t> v = {12, 4, 1};
  EXPECT_EQ(Strides(std::span<const int32_t>(v)), (Strides{12, 4, 1}));
}

// --- ContiguousStrides
// ----------------------------------------------------------------------------

struct ContiguousCase {
  Shape shape;
  Strides strides;
};

void PrintTo(const ContiguousCase& c, std::ostream* os) {
  *os << c.shape.ToString() << " -> " << c.strides.ToString();
}

class ContiguousStridesOf : public ::testing::TestWithParam<ContiguousCase> {};

TEST_P(ContiguousStridesOf, AreRowMajor) {
  EXPECT_EQ(ContiguousStrides(GetParam().shape), GetParam().strides) << GetParam().shape.ToString();
}

TEST_P(ContiguousStridesOf, AreContiguous) {
  EXPECT_TRUE(IsContiguous(GetParam().shape, ContiguousStrides(GetParam().shape)));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ContiguousStridesOf,
    ::testing::Values(
        ContiguousCase{Shape(), Strides()},  //
        ContiguousCase{Shape{5}, Strides{1}}, ContiguousCase{Shape{2, 3}, Strides{3, 1}},
        ContiguousCase{Shape{2, 3, 4}, Strides{12, 4, 1}},
        ContiguousCase{Shape{2, 1, 3}, Strides{3, 3, 1}},
        ContiguousCase{Shape{1, 1}, Strides{1, 1}},
        ContiguousCase{Shape{2, 3, 4, 5, 1, 1, 2, 2}, Strides{240, 80, 20, 4, 4, 4, 2, 1}},
        ContiguousCase{Shape{2147483647}, Strides{1}},
        ContiguousCase{Shape{1, 2147483647}, Strides{2147483647, 1}},
        // Empty shapes: nothing is reachable; large strides saturate.
        ContiguousCase{Shape{0}, Strides{1}}, ContiguousCase{Shape{2, 0, 3}, Strides{0, 3, 1}},
        ContiguousCase{Shape{3, 0}, Strides{0, 1}},
        ContiguousCase{Shape{0, 100000, 100000}, Strides{kInt32Max, 100000, 1}},
        ContiguousCase{Shape{0, 2147483647, 2}, Strides{kInt32Max, 2, 1}},
        ContiguousCase{Shape{0, 65536, 65536, 65536}, Strides{kInt32Max, kInt32Max, 65536, 1}}));

TEST(ContiguousStrides, EmptyShapeNeverOverflowsToNegative) {
  for (const Shape& s : {Shape{0, 100000, 100000}, Shape{0, 2147483647, 2147483647},
                         Shape{0, 46341, 46341, 46341}}) {
    const Strides st = ContiguousStrides(s);
    for (int d = 0; d < st.rank(); ++d) EXPECT_GT(st[d], 0) << s.ToString() << " dim " << d;
  }
}

// --- IsContiguous ------------------------------------------------------------------------------

TEST(IsContiguous, ScalarIsContiguous) { EXPECT_TRUE(IsContiguous(Shape(), Strides())); }

TEST(IsContiguous, RowMajorIsContiguous) { EXPECT_TRUE(IsContiguous(Shape{2, 3}, Strides{3, 1})); }

TEST(IsContiguous, TransposedIsNot) {
  EXPECT_FALSE(IsContiguous(Shape{2, 3}, Strides{1, 2}));
  EXPECT_FALSE(IsContiguous(Shape{3, 2}, Strides{1, 3}));
}

TEST(IsContiguous, SquareTransposedIsNot) {
  EXPECT_FALSE(IsContiguous(Shape{2, 2}, Strides{1, 2}));
}

TEST(IsContiguous, PaddedRowsAreNot) { EXPECT_FALSE(IsContiguous(Shape{2, 3}, Strides{4, 1})); }

TEST(IsContiguous, ReversedIsNot) { EXPECT_FALSE(IsContiguous(Shape{3}, Strides{-1})); }

TEST(IsContiguous, ExtentOneDimensionsIgnoreTheirStride) {
  EXPECT_TRUE(IsContiguous(Shape{2, 1, 3}, Strides{3, 999, 1}));
  EXPECT_TRUE(IsContiguous(Shape{2, 1, 3}, Strides{3, -5, 1}));
  EXPECT_TRUE(IsContiguous(Shape{2, 1, 3}, Strides{3, 0, 1}));
  EXPECT_TRUE(IsContiguous(Shape{1, 4}, Strides{kInt32Min, 1}));
  EXPECT_TRUE(IsContiguous(Shape{4, 1}, Strides{1, kInt32Max}));
}

TEST(IsContiguous, AllExtentOneIsContiguousWhateverTheStrides) {
  EXPECT_TRUE(IsContiguous(Shape{1}, Strides{-7}));
  EXPECT_TRUE(IsContiguous(Shape{1, 1}, Strides{0, 0}));
  EXPECT_TRUE(IsContiguous(Shape{1, 1, 1}, Strides{5, -3, 100}));
}

TEST(IsContiguous, EmptyIsAlwaysContiguous) {
  EXPECT_TRUE(IsContiguous(Shape{0}, Strides{7}));
  EXPECT_TRUE(IsContiguous(Shape{0, 3}, Strides{0, 0}));
  EXPECT_TRUE(IsContiguous(Shape{2, 0}, Strides{-1, 77}));
  EXPECT_TRUE(IsContiguous(Shape{3, 0, 2}, Strides{1, 3, -4}));
}

TEST(IsContiguous, BroadcastStrideOnExtentAboveOneIsNot) {
  EXPECT_FALSE(IsContiguous(Shape{3}, Strides{0}));
  EXPECT_FALSE(IsContiguous(Shape{2, 3}, Strides{0, 1}));
  EXPECT_FALSE(IsContiguous(Shape{2, 3}, Strides{3, 0}));
}

TEST(IsContiguous, BroadcastStrideOnExtentOneIsContiguous) {
  EXPECT_TRUE(IsContiguous(Shape{1, 3}, Strides{0, 1}));
}

TEST(IsContiguous, InnerStrideMustBeOne) {
  EXPECT_FALSE(IsContiguous(Shape{3}, Strides{2}));
  EXPECT_FALSE(IsContiguous(Shape{2, 3}, Strides{6, 2}));
}

TEST(IsContiguous, StrideAfterAnExtentOneDimensionCountsOnlyRealExtents) {
  // [2, 1, 3]: the outer stride is 1 * 3 = 3, not affected by the extent-1 middle.
  EXPECT_TRUE(IsContiguous(Shape{2, 1, 3}, Strides{3, 3, 1}));
  EXPECT_FALSE(IsContiguous(Shape{2, 1, 3}, Strides{9, 3, 1}));
}

// --- ReachableOffsets ---------------------------------------------------------------------------

void ExpectRange(const Shape& shape, const Strides& strides, int64_t offset, int64_t lowest,
                 int64_t highest) {
  const OffsetRange r = ReachableOffsets(shape, strides, offset);
  EXPECT_EQ(r.lowest, lowest) << shape.ToString() << " " << strides.ToString() << " @" << offset;
  EXPECT_EQ(r.highest, highest) << shape.ToString() << " " << strides.ToString() << " @" << offset;
}

TEST(ReachableOffsets, ScalarReachesOnlyTheOffset) { ExpectRange(Shape(), Strides(), 9, 9, 9); }

TEST(ReachableOffsets, RowMajor) {
  ExpectRange(Shape{2, 3}, Strides{3, 1}, 0, 0, 5);
  ExpectRange(Shape{2, 3}, Strides{3, 1}, 4, 4, 9);
}

TEST(ReachableOffsets, NegativeStrideLowersTheLowest) {
  ExpectRange(Shape{3}, Strides{-1}, 2, 0, 2);
  ExpectRange(Shape{3}, Strides{-2}, 10, 6, 10);
}

TEST(ReachableOffsets, AllNegativeStrides) { ExpectRange(Shape{2, 3}, Strides{-3, -1}, 5, 0, 5); }

TEST(ReachableOffsets, MixedSignStrides) {
  ExpectRange(Shape{2, 3}, Strides{3, -1}, 2, 0, 5);
  ExpectRange(Shape{2, 3}, Strides{-3, 1}, 3, 0, 5);
}

TEST(ReachableOffsets, BroadcastStrideReachesOneElement) {
  ExpectRange(Shape{4}, Strides{0}, 7, 7, 7);
  ExpectRange(Shape{4, 2}, Strides{0, 1}, 7, 7, 8);
}

TEST(ReachableOffsets, ExtentOneContributesNothing) {
  ExpectRange(Shape{1, 3}, Strides{-1000, 1}, 0, 0, 2);
}

TEST(ReachableOffsets, ComputedIn64Bits) {
  ExpectRange(Shape{2147483647}, Strides{1}, 0, 0, 2147483646);
  ExpectRange(Shape{3}, Strides{kInt32Max}, 0, 0, 2LL * kInt32Max);
  ExpectRange(Shape{2, 2}, Strides{kInt32Max, kInt32Min}, 0, kInt32Min, kInt32Max);
}

// --- CheckViewBounds
// -------------------------------------------------------------------------------

TEST(CheckViewBounds, ExactFitIsAccepted) {
  EXPECT_NO_THROW(CheckViewBounds(Shape{2, 3}, Strides{3, 1}, 0, 6));
}

TEST(CheckViewBounds, ExactFitAtAnOffsetIsAccepted) {
  EXPECT_NO_THROW(CheckViewBounds(Shape{2, 3}, Strides{3, 1}, 4, 10));
}

TEST(CheckViewBounds, OnePastTheEndThrows) {
  EXPECT_THROW(CheckViewBounds(Shape{2, 3}, Strides{3, 1}, 0, 5), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape{2, 3}, Strides{3, 1}, 4, 9), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape{2, 3}, Strides{3, 1}, 1, 6), TensorShapeException);
}

TEST(CheckViewBounds, OnePastTheEndMessageNamesShapeStridesAndOffset) {
  const std::string message = ViewError(Shape{2, 3}, Strides{3, 1}, 4, 9);
  EXPECT_TRUE(Contains(message, "[2, 3]"));
  EXPECT_TRUE(Contains(message, "[3, 1]"));
  EXPECT_TRUE(Contains(message, "offset 4"));
  EXPECT_TRUE(Contains(message, "9"));
}

TEST(CheckViewBounds, NegativeStrideWithTooSmallOffsetThrows) {
  EXPECT_THROW(CheckViewBounds(Shape{3}, Strides{-1}, 1, 10), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape{2, 3}, Strides{-3, -1}, 4, 6), TensorShapeException);
}

TEST(CheckViewBounds, NegativeLowestMessageNamesShapeStridesAndOffset) {
  const std::string message = ViewError(Shape{3}, Strides{-1}, 1, 10);
  EXPECT_TRUE(Contains(message, "[3]"));
  EXPECT_TRUE(Contains(message, "[-1]"));
  EXPECT_TRUE(Contains(message, "offset 1"));
  EXPECT_TRUE(Contains(message, "-1"));
}

TEST(CheckViewBounds, ReversedViewWithTheRightOffsetIsAccepted) {
  EXPECT_NO_THROW(CheckViewBounds(Shape{3}, Strides{-1}, 2, 3));
  EXPECT_NO_THROW(CheckViewBounds(Shape{2, 3}, Strides{-3, -1}, 5, 6));
  EXPECT_NO_THROW(CheckViewBounds(Shape{2, 3}, Strides{3, -1}, 2, 6));
}

TEST(CheckViewBounds, ReversedViewWithTooLargeOffsetThrows) {
  EXPECT_THROW(CheckViewBounds(Shape{2, 3}, Strides{-3, -1}, 6, 6), TensorShapeException);
}

TEST(CheckViewBounds, NegativeOffsetThrows) {
  EXPECT_THROW(CheckViewBounds(Shape{2}, Strides{1}, -1, 10), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape(), Strides(), -1, 10), TensorShapeException);
}

TEST(CheckViewBounds, OffsetOutsideTheBufferMessageNamesShapeStridesAndOffset) {
  const std::string message = ViewError(Shape{2, 3}, Strides{3, 1}, 12, 10);
  EXPECT_TRUE(Contains(message, "[2, 3]"));
  EXPECT_TRUE(Contains(message, "[3, 1]"));
  EXPECT_TRUE(Contains(message, "offset 12"));
  EXPECT_TRUE(Contains(message, "10"));
}

TEST(CheckViewBounds, ScalarView) {
  EXPECT_NO_THROW(CheckViewBounds(Shape(), Strides(), 0, 1));
  EXPECT_NO_THROW(CheckViewBounds(Shape(), Strides(), 9, 10));
  EXPECT_THROW(CheckViewBounds(Shape(), Strides(), 1, 1), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape(), Strides(), 0, 0), TensorShapeException);
}

TEST(CheckViewBounds, BroadcastViewOfOneElementIsAccepted) {
  EXPECT_NO_THROW(CheckViewBounds(Shape{1000}, Strides{0}, 0, 1));
  EXPECT_NO_THROW(CheckViewBounds(Shape{1000, 3}, Strides{0, 1}, 2, 5));
}

TEST(CheckViewBounds, AnyEmptyViewIsAccepted) {
  EXPECT_NO_THROW(CheckViewBounds(Shape{0}, Strides{1}, 1000, 0));
  EXPECT_NO_THROW(CheckViewBounds(Shape{2, 0, 3}, Strides{-5, 1, 1}, -100, 0));
  EXPECT_NO_THROW(
      CheckViewBounds(Shape{0, 100000, 100000}, Strides{kInt32Max, kInt32Max, 1}, kInt64Max, 0));
  EXPECT_NO_THROW(CheckViewBounds(Shape{5, 0}, Strides{kInt32Min, kInt32Min}, kInt64Min, 0));
}

TEST(CheckViewBounds, RankMismatchThrows) {
  EXPECT_THROW(CheckViewBounds(Shape{2, 3}, Strides{1}, 0, 6), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape{6}, Strides{3, 1}, 0, 6), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape(), Strides{1}, 0, 6), TensorShapeException);
}

TEST(CheckViewBounds, RankMismatchThrowsForEmptyViewsToo) {
  EXPECT_THROW(CheckViewBounds(Shape{0, 3}, Strides{1}, 0, 0), TensorShapeException);
}

TEST(CheckViewBounds, RankMismatchMessageNamesShapeAndStrides) {
  const std::string message = ViewError(Shape{2, 3}, Strides{1}, 0, 6);
  EXPECT_TRUE(Contains(message, "[2, 3]"));
  EXPECT_TRUE(Contains(message, "[1]"));
}

TEST(CheckViewBounds, LargestViewIsAccepted) {
  EXPECT_NO_THROW(CheckViewBounds(Shape{2147483647}, Strides{1}, 0, 2147483647));
  EXPECT_THROW(CheckViewBounds(Shape{2147483647}, Strides{1}, 1, 2147483647), TensorShapeException);
}

TEST(CheckViewBounds, LargeStridesDoNotOverflow) {
  // Highest offset 2 * (2^31 - 1), far past a small buffer.
  EXPECT_THROW(CheckViewBounds(Shape{3}, Strides{kInt32Max}, 0, 100), TensorShapeException);
  // Lowest offset 2 * -2^31 + offset, far below zero.
  EXPECT_THROW(CheckViewBounds(Shape{3}, Strides{kInt32Min}, 10, 100), TensorShapeException);
}

TEST(CheckViewBounds, OffsetNearInt64MaxThrows) {
  // offset + span must not wrap around to a small or negative "highest" offset.
  EXPECT_THROW(CheckViewBounds(Shape{2}, Strides{1}, kInt64Max, 10), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape{3}, Strides{kInt32Max}, kInt64Max - 1, 10),
               TensorShapeException);
}

TEST(CheckViewBounds, OffsetNearInt64MinThrows) {
  EXPECT_THROW(CheckViewBounds(Shape{3}, Strides{-1}, kInt64Min, 10), TensorShapeException);
  EXPECT_THROW(CheckViewBounds(Shape{3}, Strides{kInt32Min}, kInt64Min + 1, 10),
               TensorShapeException);
}

TEST(CheckViewBounds, CheckIsExactAtEveryEdgeOfASmallView) {
  // Shape [2, 3] with strides [-3, 1] reaches offset-3 .. offset+2; buffer of 8 elements.
  for (int64_t offset = -2; offset <= 10; ++offset) {
    const bool valid = offset - 3 >= 0 && offset + 2 < 8;
    bool accepted = true;
    try {
      CheckViewBounds(Shape{2, 3}, Strides{-3, 1}, offset, 8);
    } catch (const TensorShapeException&) {
      accepted = false;
    }
    EXPECT_EQ(accepted, valid) << "offset " << offset;
  }
}

}  // namespace
}  // namespace onemodel
