// Tests of core/shape/shape (spec 3): rank and size limits, byte-size limit, formatting,
// reshape inference and numpy broadcasting.
//
// Expected results are written out as literal tables, an independent statement of the rules.
#include "core/shape/shape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/common/exceptions.h"
#include "core/dtype/dtype.h"
#include "core/shape/strides.h"
#include "tests/common/alloc_counter.h"

namespace onemodel {
namespace {

using Extents = std::vector<int64_t>;
using testing::AllocationCounter;

Shape MakeShape(const Extents& e) { return Shape(std::span<const int64_t>(e)); }

::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the TensorShapeException that f() throws ("" and a failure if none).
template <typename F>
std::string ShapeErrorOf(F&& f) {
  try {
    f();
    ADD_FAILURE() << "no TensorShapeException was thrown";
  } catch (const TensorShapeException& e) {
    return e.what();
  }
  return "";
}

std::string ConstructionError(const Extents& e) {
  return ShapeErrorOf([&] { MakeShape(e); });
}

// --- Rank
// -----------------------------------------------------------------------------------------

TEST(Shape, DefaultIsAScalarWithOneElement) {
  const Shape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.ElementCount(), 1);
  EXPECT_FALSE(s.IsEmpty());
  EXPECT_TRUE(s.extents().empty());
}

TEST(Shape, EmptyExtentListIsTheScalar) {
  const Shape s = MakeShape({});
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.ElementCount(), 1);
  EXPECT_EQ(s, Shape());
}

TEST(Shape, RankEightIsAccepted) {
  const Shape s{1, 2, 1, 2, 1, 2, 1, 2};
  EXPECT_EQ(s.rank(), 8);
  EXPECT_EQ(s.ElementCount(), 16);
}

TEST(Shape, RankNineThrows) {
  EXPECT_THROW((Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}), TensorShapeException);
}

TEST(Shape, RankNineMessageNamesTheShapeAndTheRank) {
  const std::string message = ConstructionError({1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(Contains(message, "[1, 2, 3, 4, 5, 6, 7, 8, 9]"));
  EXPECT_TRUE(Contains(message, "9"));
  EXPECT_TRUE(Contains(message, "8"));
}

TEST(Shape, RankNineThrowsFromInt32Extents) {
  const std::vector<int32_t> e(9, 1);
  EXPECT_THROW(Shape(std::span<const int32_t>(e)), TensorShapeException);
}

TEST(Shape, RankNineThrowsEvenWithAZeroExtent) {
  EXPECT_THROW((Shape{0, 1, 1, 1, 1, 1, 1, 1, 1}), TensorShapeException);
}

// --- Extents ------------------------------------------------------------------------------------

TEST(Shape, ExtentsAndCountOfAPlainShape) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s[0], 2);
  EXPECT_EQ(s[1], 3);
  EXPECT_EQ(s[2], 4);
  ASSERT_EQ(s.extents().size(), 3u);
  EXPECT_EQ(s.extents()[2], 4);
  EXPECT_EQ(s.ElementCount(), 24);
  EXPECT_FALSE(s.IsEmpty());
}

TEST(Shape, NegativeExtentThrows) { EXPECT_THROW((Shape{2, -3, 4}), TensorShapeException); }

TEST(Shape, NegativeExtentMessageNamesTheShape) {
  const std::string message = ConstructionError({2, -3, 4});
  EXPECT_TRUE(Contains(message, "[2, -3, 4]"));
  EXPECT_TRUE(Contains(message, "-3"));
}

TEST(Shape, NegativeExtentThrowsAfterAZeroExtent) {
  // A zero extent elsewhere does not excuse a negative one.
  EXPECT_THROW((Shape{0, -1}), TensorShapeException);
}

TEST(Shape, NegativeInt32ExtentThrows) {
  const std::vector<int32_t> e = {4, -1};
  EXPECT_THROW(Shape(std::span<const int32_t>(e)), TensorShapeException);
}

TEST(Shape, ExtentAboveInt32MaxThrows) {
  const std::string message = ConstructionError({2147483648});
  EXPECT_TRUE(Contains(message, "2147483648"));
}

TEST(Shape, ExtentAboveInt32MaxThrowsEvenWithAZeroExtent) {
  // Each extent must be a 32-bit integer, whatever the element count.
  EXPECT_THROW((Shape{0, 2147483648}), TensorShapeException);
  EXPECT_THROW((Shape{0, std::numeric_limits<int64_t>::max()}), TensorShapeException);
}

TEST(Shape, Int64MinExtentThrows) {
  EXPECT_THROW((Shape{std::numeric_limits<int64_t>::min()}), TensorShapeException);
}

TEST(Shape, Int32ExtentsGiveTheSameShape) {
  const std::vector<int32_t> e = {5, 0, 7};
  EXPECT_EQ(Shape(std::span<const int32_t>(e)), (Shape{5, 0, 7}));
}

// --- Element count and prefix products -----------------------------------------------------------

TEST(Shape, ZeroExtentMakesAnEmptyShape) {
  const Shape s{3, 0, 2};
  EXPECT_EQ(s.ElementCount(), 0);
  EXPECT_TRUE(s.IsEmpty());
}

TEST(Shape, LargePrefixBeforeAZeroThrows) {
  // The prefix product 100000 * 100000 exceeds 2^31-1 although the total is 0.
  EXPECT_THROW((Shape{100000, 100000, 0}), TensorShapeException);
}

TEST(Shape, LargePrefixMessageNamesTheShape) {
  EXPECT_TRUE(Contains(ConstructionError({100000, 100000, 0}), "[100000, 100000, 0]"));
}

TEST(Shape, ZeroFirstKeepsEveryPrefixSmall) {
  const Shape s{0, 100000, 100000};
  EXPECT_EQ(s.ElementCount(), 0);
  EXPECT_TRUE(s.IsEmpty());
}

TEST(Shape, LargestExtentIsAccepted) { EXPECT_EQ((Shape{2147483647}).ElementCount(), 2147483647); }

TEST(Shape, LargestExtentFollowedByOneIsAccepted) {
  EXPECT_EQ((Shape{2147483647, 1}).ElementCount(), 2147483647);
  EXPECT_EQ((Shape{1, 2147483647}).ElementCount(), 2147483647);
}

TEST(Shape, TwoTimesTwoToThe30Throws) {
  EXPECT_THROW((Shape{2, 1073741824}), TensorShapeException);
  EXPECT_THROW((Shape{1073741824, 2}), TensorShapeException);
}

TEST(Shape, JustBelowTheLimitIsAccepted) {
  EXPECT_EQ((Shape{2, 1073741823}).ElementCount(), 2147483646);
  EXPECT_EQ((Shape{46340, 46340}).ElementCount(), 2147395600);
}

TEST(Shape, JustAboveTheLimitThrows) {
  EXPECT_THROW((Shape{46341, 46341}), TensorShapeException);  // 2147488281
  EXPECT_THROW((Shape{2147483647, 2}), TensorShapeException);
}

TEST(Shape, ProductThatWouldOverflowInt64Throws) {
  // Each prefix is checked, so the running product never overflows 64 bits.
  EXPECT_THROW((Shape{2147483647, 2147483647, 2147483647, 2147483647}), TensorShapeException);
}

TEST(Shape, TooLargeMessageNamesTheLimit) {
  const std::string message = ConstructionError({2, 1073741824});
  EXPECT_TRUE(Contains(message, "[2, 1073741824]"));
  EXPECT_TRUE(Contains(message, "2147483647"));
}

// --- Equality and value semantics ----------------------------------------------------------------

TEST(Shape, EqualityComparesRankAndExtents) {
  EXPECT_EQ((Shape{2, 3}), (Shape{2, 3}));
  EXPECT_NE((Shape{2, 3}), (Shape{3, 2}));
  EXPECT_NE((Shape{2, 3}), (Shape{2, 3, 1}));
  EXPECT_NE((Shape{1}), Shape());
  EXPECT_NE((Shape{0}), Shape());
}

TEST(Shape, IsASmallTriviallyCopyableValue) {
  EXPECT_TRUE(std::is_trivially_copyable_v<Shape>);
  EXPECT_TRUE(std::is_nothrow_copy_constructible_v<Shape>);
}

// --- No allocation
// --------------------------------------------------------------------------------- Shape
// validation is a pure value computation inside the Shape constructor (and CheckByteSize): an
// invalid shape throws before any Shape exists, so nothing can be allocated for it. The only heap
// use on the error path is the exception's message.

TEST(Shape, ValidConstructionAllocatesNothing) {
  AllocationCounter counter;
  const Shape a{2, 3, 4};
  const Shape b{0, 100000, 100000};
  const Shape c = Shape::Broadcast(a, Shape{3, 1});
  CheckByteSize(Shape{536870911}, DType::kFloat);
  const Strides s = ContiguousStrides(b);
  CheckViewBounds(a, ContiguousStrides(a), 0, 24);
  counter.Stop();
  EXPECT_EQ(counter.count(), 0);
  EXPECT_EQ(c.ElementCount(), 24);
  EXPECT_EQ(s.rank(), 3);
}

TEST(Shape, RejectedConstructionAllocatesOnlyTheMessage) {
  AllocationCounter counter;
  EXPECT_THROW((Shape{100000, 100000, 0}), TensorShapeException);
  EXPECT_THROW((Shape{2, 1073741824}), TensorShapeException);
  counter.Stop();
  EXPECT_LT(counter.largest(), 1024u);
}

TEST(CheckByteSize, RejectionAllocatesOnlyTheMessage) {
  AllocationCounter counter;
  EXPECT_THROW(CheckByteSize(Shape{536870912}, DType::kFloat), TensorShapeException);
  counter.Stop();
  EXPECT_LT(counter.largest(), 1024u);
}

// --- CheckByteSize ----------------------------------------------------------------------------

TEST(CheckByteSize, FloatAt2To31BytesThrows) {
  EXPECT_THROW(CheckByteSize(Shape{536870912}, DType::kFloat), TensorShapeException);
}

TEST(CheckByteSize, FloatJustBelow2To31BytesIsAccepted) {
  EXPECT_NO_THROW(CheckByteSize(Shape{536870911}, DType::kFloat));  // 2^31 - 4 bytes
}

TEST(CheckByteSize, FloatMessageNamesShapeTypeAndBytes) {
  const std::string message = ShapeErrorOf([] { CheckByteSize(Shape{536870912}, DType::kFloat); });
  EXPECT_TRUE(Contains(message, "[536870912]"));
  EXPECT_TRUE(Contains(message, "FLOAT"));
  EXPECT_TRUE(Contains(message, "2147483648"));
}

TEST(CheckByteSize, DoubleEdges) {
  EXPECT_NO_THROW(CheckByteSize(Shape{268435455}, DType::kDouble));  // 2^31 - 8 bytes
  EXPECT_THROW(CheckByteSize(Shape{268435456}, DType::kDouble), TensorShapeException);
  EXPECT_THROW(CheckByteSize(Shape{2, 134217728}, DType::kDouble), TensorShapeException);
}

TEST(CheckByteSize, Int64AndUint64EdgesMatchDouble) {
  EXPECT_NO_THROW(CheckByteSize(Shape{268435455}, DType::kInt64));
  EXPECT_THROW(CheckByteSize(Shape{268435456}, DType::kInt64), TensorShapeException);
  EXPECT_THROW(CheckByteSize(Shape{268435456}, DType::kUint64), TensorShapeException);
}

TEST(CheckByteSize, Float16Edges) {
  EXPECT_NO_THROW(CheckByteSize(Shape{1073741823}, DType::kFloat16));  // 2^31 - 2 bytes
  EXPECT_THROW(CheckByteSize(Shape{1073741824}, DType::kFloat16), TensorShapeException);
}

TEST(CheckByteSize, BFloat16AndInt16EdgesMatchFloat16) {
  EXPECT_NO_THROW(CheckByteSize(Shape{1073741823}, DType::kBFloat16));
  EXPECT_THROW(CheckByteSize(Shape{1073741824}, DType::kBFloat16), TensorShapeException);
  EXPECT_THROW(CheckByteSize(Shape{1073741824}, DType::kInt16), TensorShapeException);
}

TEST(CheckByteSize, BoolAcceptsTheLargestShape) {
  EXPECT_NO_THROW(CheckByteSize(Shape{2147483647}, DType::kBool));
  EXPECT_NO_THROW(CheckByteSize(Shape{2147483647}, DType::kUint8));
  EXPECT_NO_THROW(CheckByteSize(Shape{2147483647}, DType::kInt8));
}

TEST(CheckByteSize, Int32AndUint32EdgesMatchFloat) {
  EXPECT_NO_THROW(CheckByteSize(Shape{536870911}, DType::kInt32));
  EXPECT_THROW(CheckByteSize(Shape{536870912}, DType::kInt32), TensorShapeException);
  EXPECT_THROW(CheckByteSize(Shape{536870912}, DType::kUint32), TensorShapeException);
}

TEST(CheckByteSize, EmptyAndScalarShapesAlwaysFit) {
  EXPECT_NO_THROW(CheckByteSize(Shape{0, 100000, 100000}, DType::kDouble));
  EXPECT_NO_THROW(CheckByteSize(Shape(), DType::kDouble));
}

TEST(CheckByteSize, LargestElementCountTimesEightDoesNotOverflow) {
  EXPECT_THROW(CheckByteSize(Shape{2147483647}, DType::kDouble), TensorShapeException);
}

// --- ToString, FormatExtents -------------------------------------------------------------------

TEST(ShapeToString, ScalarIsEmptyBrackets) { EXPECT_EQ(Shape().ToString(), "[]"); }

TEST(ShapeToString, RankOne) { EXPECT_EQ((Shape{7}).ToString(), "[7]"); }

TEST(ShapeToString, CommaSpaceSeparated) { EXPECT_EQ((Shape{2, 3, 4}).ToString(), "[2, 3, 4]"); }

TEST(ShapeToString, ZeroAndLargestExtents) {
  EXPECT_EQ((Shape{0, 2147483647}).ToString(), "[0, 2147483647]");
}

TEST(ShapeToString, RankEight) {
  EXPECT_EQ((Shape{1, 2, 3, 4, 5, 6, 7, 8}).ToString(), "[1, 2, 3, 4, 5, 6, 7, 8]");
}

TEST(FormatExtents, FormatsInvalidExtentsToo) {
  const Extents e = {-1, 3000000000, 0};
  EXPECT_EQ(FormatExtents(e), "[-1, 3000000000, 0]");
}

TEST(FormatExtents, EmptyList) { EXPECT_EQ(FormatExtents(std::span<const int64_t>()), "[]"); }

TEST(FormatExtents, ALongListShowsItsFirstSixteenAndItsLength) {
  const Extents sixteen(16, 7);
  EXPECT_EQ(FormatExtents(sixteen), "[7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]");
  const Extents many(100000, 1);
  EXPECT_EQ(FormatExtents(many),
            "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ... (100000 in all)]");
}

TEST(FormatExtents, AHugeShapesMessageStaysShort) {
  // A client's Reshape to 10^5 extents made a 300 KB message (and log line) before.
  const Extents many(100000, 2);
  try {
    (void)InferShape(4, many);
    ADD_FAILURE() << "rank 100000 accepted";
  } catch (const TensorShapeException& e) {
    EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
    EXPECT_NE(std::string(e.what()).find("has rank 100000"), std::string::npos) << e.what();
  }
}

// --- InferShape ----------------------------------------------------------------------------------

Shape Infer(int64_t count, const Extents& requested) {
  return InferShape(count, std::span<const int64_t>(requested));
}

std::string InferError(int64_t count, const Extents& requested) {
  return ShapeErrorOf([&] { Infer(count, requested); });
}

TEST(InferShape, NoMinusOneReturnsTheRequestedShape) {
  EXPECT_EQ(Infer(24, {2, 3, 4}), (Shape{2, 3, 4}));
  EXPECT_EQ(Infer(24, {24}), (Shape{24}));
}

TEST(InferShape, InfersTheMiddleExtent) { EXPECT_EQ(Infer(24, {2, -1, 4}), (Shape{2, 3, 4})); }

TEST(InferShape, InfersTheFirstAndLastExtent) {
  EXPECT_EQ(Infer(24, {-1, 4}), (Shape{6, 4}));
  EXPECT_EQ(Infer(24, {4, -1}), (Shape{4, 6}));
}

TEST(InferShape, MinusOneAloneFlattens) { EXPECT_EQ(Infer(24, {-1}), (Shape{24})); }

TEST(InferShape, MinusOneCanBeOne) { EXPECT_EQ(Infer(6, {2, 3, -1}), (Shape{2, 3, 1})); }

TEST(InferShape, ScalarFromOneElement) {
  EXPECT_EQ(Infer(1, {}), Shape());
  EXPECT_EQ(Infer(1, {-1}), (Shape{1}));
  EXPECT_EQ(Infer(1, {1, -1, 1}), (Shape{1, 1, 1}));
}

TEST(InferShape, ScalarFromMoreElementsThrows) { EXPECT_THROW(Infer(2, {}), TensorShapeException); }

TEST(InferShape, LargestCountInfers) {
  EXPECT_EQ(Infer(2147483647, {-1}), (Shape{2147483647}));
  EXPECT_EQ(Infer(2147483647, {1, -1}), (Shape{1, 2147483647}));
}

TEST(InferShape, TwoMinusOnesThrow) {
  const std::string message = InferError(24, {-1, 4, -1});
  EXPECT_TRUE(Contains(message, "[-1, 4, -1]"));
  EXPECT_TRUE(Contains(message, "-1"));
}

TEST(InferShape, MinusTwoThrows) {
  const std::string message = InferError(24, {2, -2, 6});
  EXPECT_TRUE(Contains(message, "[2, -2, 6]"));
  EXPECT_TRUE(Contains(message, "-2"));
}

TEST(InferShape, MinusTwoThrowsEvenWhenAMinusOneIsPresent) {
  EXPECT_THROW(Infer(24, {-1, -2}), TensorShapeException);
}

TEST(InferShape, MismatchThrows) {
  const std::string message = InferError(24, {5, 5});
  EXPECT_TRUE(Contains(message, "24"));
  EXPECT_TRUE(Contains(message, "[5, 5]"));
  EXPECT_TRUE(Contains(message, "25"));
}

TEST(InferShape, IndivisibleMinusOneThrows) {
  const std::string message = InferError(24, {5, -1});
  EXPECT_TRUE(Contains(message, "24"));
  EXPECT_TRUE(Contains(message, "[5, -1]"));
}

TEST(InferShape, MinusOneWithAZeroExtentThrowsClearly) {
  // numpy also refuses: the -1 could be anything.
  const std::string message = InferError(0, {0, -1});
  EXPECT_TRUE(Contains(message, "[0, -1]"));
  EXPECT_TRUE(Contains(message, "-1"));
  EXPECT_TRUE(Contains(message, "cannot be inferred"));
  EXPECT_TRUE(Contains(message, "0"));
}

TEST(InferShape, MinusOneWithAZeroExtentThrowsForNonEmptyCounts) {
  EXPECT_THROW(Infer(24, {0, -1}), TensorShapeException);
  EXPECT_THROW(Infer(24, {4, 0, -1}), TensorShapeException);
}

TEST(InferShape, EmptyToEmpty) {
  EXPECT_EQ(Infer(0, {0}), (Shape{0}));
  EXPECT_EQ(Infer(0, {0, 5}), (Shape{0, 5}));
  EXPECT_EQ(Infer(0, {5, 0, 3}), (Shape{5, 0, 3}));
}

TEST(InferShape, EmptyInfersZero) {
  EXPECT_EQ(Infer(0, {3, -1}), (Shape{3, 0}));
  EXPECT_EQ(Infer(0, {-1}), (Shape{0}));
}

TEST(InferShape, EmptyInfersZeroBeforeLargeExtents) {
  EXPECT_EQ(Infer(0, {-1, 100000, 100000}), (Shape{0, 100000, 100000}));
}

TEST(InferShape, EmptyToNonEmptyThrows) { EXPECT_THROW(Infer(0, {2, 3}), TensorShapeException); }

TEST(InferShape, NonEmptyToEmptyThrows) { EXPECT_THROW(Infer(6, {2, 0}), TensorShapeException); }

TEST(InferShape, ResultStillObeysThePrefixRule) {
  EXPECT_THROW(Infer(0, {100000, 100000, -1}), TensorShapeException);
  EXPECT_THROW(Infer(0, {100000, 100000, 0}), TensorShapeException);
}

TEST(InferShape, HugeRequestedProductDoesNotOverflow) {
  const std::string message = InferError(24, {100000, 100000, 100000});
  EXPECT_TRUE(Contains(message, "[100000, 100000, 100000]"));
  EXPECT_THROW(Infer(24, {std::numeric_limits<int64_t>::max(), -1}), TensorShapeException);
  EXPECT_THROW(Infer(24, {-1, 100000, 100000, 100000}), TensorShapeException);
}

TEST(InferShape, ExtentAboveInt32MaxThrowsEvenForEmpty) {
  EXPECT_THROW(Infer(0, {std::numeric_limits<int64_t>::max(), 0}), TensorShapeException);
}

TEST(InferShape, RankNineThrows) {
  EXPECT_THROW(Infer(1, {1, 1, 1, 1, 1, 1, 1, 1, 1}), TensorShapeException);
  EXPECT_THROW(Infer(1, {1, 1, 1, 1, 1, 1, 1, 1, -1}), TensorShapeException);
}

// --- Broadcast: numpy's rule --------------------------------------------------------------------
// Right-align; each pair of extents equal or one of them 1; the result's extent is the non-1 one
// (so 0 pairs only with 0 or 1). Three literal tables: results, incompatible pairs, and pairs
// whose result breaks the size limit.

struct BroadcastCase {
  Extents a;
  Extents b;
  Extents expected;
};

void PrintTo(const BroadcastCase& c, std::ostream* os) {
  *os << FormatExtents(c.a) << " with " << FormatExtents(c.b);
}

const BroadcastCase kBroadcasts[] = {
    // Rank 0 with anything.
    {{}, {}, {}},
    {{}, {1}, {1}},
    {{}, {3}, {3}},
    {{}, {0}, {0}},
    {{}, {2, 3, 4}, {2, 3, 4}},
    {{}, {2, 0, 4}, {2, 0, 4}},
    {{}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}},
    // Same rank.
    {{3}, {3}, {3}},
    {{1}, {3}, {3}},
    {{1}, {1}, {1}},
    {{2, 3}, {2, 1}, {2, 3}},
    {{2, 1}, {1, 3}, {2, 3}},
    {{15, 3, 5}, {15, 1, 5}, {15, 3, 5}},
    // Different ranks.
    {{2, 3}, {3}, {2, 3}},
    {{5, 4}, {1}, {5, 4}},
    {{5, 4}, {4}, {5, 4}},
    {{15, 3, 5}, {3, 5}, {15, 3, 5}},
    {{15, 3, 5}, {3, 1}, {15, 3, 5}},
    {{8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}},
    {{1, 2, 3}, {4, 1, 1, 1}, {4, 1, 2, 3}},
    {{2, 1, 4}, {3, 1}, {2, 3, 4}},
    {{1, 1, 1, 1, 1, 1, 1, 1}, {2}, {1, 1, 1, 1, 1, 1, 1, 2}},
    {{2, 1, 1, 1, 1, 1, 1, 1}, {3, 1, 1, 1, 1, 1, 1}, {2, 3, 1, 1, 1, 1, 1, 1}},
    // Zero extents.
    {{0}, {1}, {0}},
    {{0}, {0}, {0}},
    {{2, 0}, {1}, {2, 0}},
    {{2, 0}, {0}, {2, 0}},
    {{2, 0}, {2, 1}, {2, 0}},
    {{1, 0}, {5, 1}, {5, 0}},
    {{0, 1}, {1, 0}, {0, 0}},
    {{1}, {0, 5}, {0, 5}},
    {{0, 1}, {1, 2147483647}, {0, 2147483647}},
    // At the size limit.
    {{2147483647}, {1}, {2147483647}},
    {{1, 2147483647}, {1, 1}, {1, 2147483647}},
};

const BroadcastCase kIncompatible[] = {
    {{0}, {3}, {}},
    {{2, 0}, {3, 0}, {}},
    {{2, 0}, {2}, {}},
    {{3}, {4}, {}},
    {{2, 3}, {2}, {}},
    {{2, 1}, {8, 4, 3}, {}},
    {{3, 4}, {4, 3}, {}},
    {{2, 3, 4}, {3, 1, 4}, {}},
    {{1, 2, 1, 1, 1, 1, 1, 1}, {3, 1, 1, 1, 1, 1, 1}, {}},
};

const BroadcastCase kTooLarge[] = {
    {{65536, 1}, {1, 65536}, {}},
    {{100000, 1}, {1, 100000}, {}},
    {{2, 1}, {1, 1073741824}, {}},
    {{1, 100000, 1}, {100000, 1, 0}, {}},  // total 0, but the prefix [100000, 100000] is too large
};

class BroadcastTest : public ::testing::TestWithParam<BroadcastCase> {
 protected:
  Shape A() const { return MakeShape(GetParam().a); }
  Shape B() const { return MakeShape(GetParam().b); }
};

class BroadcastResult : public BroadcastTest {};

TEST_P(BroadcastResult, MatchesNumpy) {
  EXPECT_EQ(Shape::Broadcast(A(), B()), MakeShape(GetParam().expected));
}

TEST_P(BroadcastResult, IsSymmetric) {
  EXPECT_EQ(Shape::Broadcast(B(), A()), MakeShape(GetParam().expected));
}

TEST_P(BroadcastResult, RankIsTheLargerRank) {
  EXPECT_EQ(Shape::Broadcast(A(), B()).rank(), std::max(A().rank(), B().rank()));
}

INSTANTIATE_TEST_SUITE_P(Numpy, BroadcastResult, ::testing::ValuesIn(kBroadcasts));

// Both orders throw, and each message names both shapes.
void ExpectBroadcastErrorNamesBoth(const Shape& a, const Shape& b) {
  for (bool swapped : {false, true}) {
    const Shape& x = swapped ? b : a;
    const Shape& y = swapped ? a : b;
    const std::string message = ShapeErrorOf([&] { Shape::Broadcast(x, y); });
    EXPECT_TRUE(Contains(message, x.ToString()));
    EXPECT_TRUE(Contains(message, y.ToString()));
  }
}

class BroadcastIncompatible : public BroadcastTest {};

TEST_P(BroadcastIncompatible, ThrowsInBothOrders) {
  EXPECT_THROW(Shape::Broadcast(A(), B()), TensorShapeException);
  EXPECT_THROW(Shape::Broadcast(B(), A()), TensorShapeException);
}

TEST_P(BroadcastIncompatible, MessageNamesBothShapes) { ExpectBroadcastErrorNamesBoth(A(), B()); }

INSTANTIATE_TEST_SUITE_P(Numpy, BroadcastIncompatible, ::testing::ValuesIn(kIncompatible));

class BroadcastTooLarge : public BroadcastTest {};

TEST_P(BroadcastTooLarge, ThrowsInBothOrders) {
  EXPECT_THROW(Shape::Broadcast(A(), B()), TensorShapeException);
  EXPECT_THROW(Shape::Broadcast(B(), A()), TensorShapeException);
}

TEST_P(BroadcastTooLarge, MessageNamesBothShapes) { ExpectBroadcastErrorNamesBoth(A(), B()); }

INSTANTIATE_TEST_SUITE_P(SizeLimit, BroadcastTooLarge, ::testing::ValuesIn(kTooLarge));

TEST(Broadcast, TablesHoldAtLeast25Cases) {
  EXPECT_GE(std::size(kBroadcasts) + std::size(kIncompatible) + std::size(kTooLarge), 25u);
}

TEST(Broadcast, WithItselfIsIdentity) {
  for (const Extents& e : {Extents{}, Extents{0}, Extents{2, 3}, Extents{1, 0, 7}}) {
    EXPECT_EQ(Shape::Broadcast(MakeShape(e), MakeShape(e)), MakeShape(e));
  }
}

TEST(Broadcast, IncompatibleMessageNamesTheClashingExtents) {
  const std::string message = ShapeErrorOf([] { Shape::Broadcast(Shape{2, 3}, Shape{4}); });
  EXPECT_TRUE(Contains(message, "[2, 3]"));
  EXPECT_TRUE(Contains(message, "[4]"));
  EXPECT_TRUE(Contains(message, "3"));
  EXPECT_TRUE(Contains(message, "4"));
}

TEST(Broadcast, TooLargeMessageNamesTheResultAndTheLimit) {
  const std::string message = ShapeErrorOf([] {
    Shape::Broadcast(Shape{100000, 1}, Shape{1, 100000});
  });
  EXPECT_TRUE(Contains(message, "[100000, 100000]"));
  EXPECT_TRUE(Contains(message, "2147483647"));
}

}  // namespace
}  // namespace onemodel
