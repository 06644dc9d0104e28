// Tests of core/shape/strided_walk.h: the walk visits exactly the row-major elements asked
// for, at the offsets a direct index computation gives, in as few rows as coalescing allows.
#include "core/shape/strided_walk.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "tests/common/alloc_counter.h"

namespace onemodel::internal {
namespace {

struct Case {
  std::vector<int32_t> extents;
  std::vector<int32_t> a, b;  // two operands' strides
};

// Oracle: the offsets of flat element e in both operands, from its multi-index.
std::array<int64_t, 2> OffsetsOf(const Case& l, int64_t e) {
  std::array<int64_t, 2> at{};
  for (size_t d = l.extents.size(); d-- > 0;) {
    const int64_t i = e % l.extents[d];
    e /= l.extents[d];
    at[0] += i * l.a[d];
    at[1] += i * l.b[d];
  }
  return at;
}

int64_t CountOf(const Case& l) {
  int64_t n = 1;
  for (int32_t e : l.extents) n *= e;
  return n;
}

StridedWalk<2> WalkOf(const Case& l) {
  return StridedWalk<2>::Of(l.extents, {std::span<const int32_t>(l.a), l.b});
}

// Every element the walk visits in [begin, end), expanded from its rows.
std::vector<std::array<int64_t, 2>> Visited(const StridedWalk<2>& w, int64_t begin, int64_t end,
                                            int64_t* rows = nullptr) {
  std::vector<std::array<int64_t, 2>> out;
  if (rows) *rows = 0;
  w.ForEachRow(begin, end, [&](int64_t n, const StridedWalk<2>::Offsets& at) {
    EXPECT_GT(n, 0);
    if (rows) ++*rows;
    for (int64_t i = 0; i < n; ++i) {
      out.push_back({at[0] + i * w.RowStride(0), at[1] + i * w.RowStride(1)});
    }
  });
  return out;
}

// Every range [begin, end) of every layout visits the oracle's offsets in order.
TEST(StridedWalkTest, EveryRangeVisitsTheRowMajorElementsAtTheirOffsets) {
  const std::vector<Case> layouts = {
      {{2, 3, 4}, {12, 4, 1}, {12, 4, 1}},         // contiguous
      {{2, 3, 4}, {12, 4, 1}, {1, 2, 6}},          // into a permuted source
      {{3, 4}, {4, 1}, {-4, -1}},                  // negative strides (flipped both ways)
      {{3, 4}, {4, 1}, {0, 1}},                    // row broadcast (stride 0)
      {{3, 4}, {4, 1}, {1, 0}},                    // column broadcast
      {{2, 1, 3, 1}, {3, 7, 1, 9}, {0, 5, 2, 4}},  // extent-1 dimensions with odd strides
      {{5, 2}, {2, 1}, {2, -10}},                  // steps that merge in one operand only
  };
  for (const Case& l : layouts) {
    const StridedWalk<2> w = WalkOf(l);
    const int64_t count = CountOf(l);
    for (int64_t begin = 0; begin <= count; ++begin) {
      for (int64_t end = begin; end <= count; ++end) {
        const auto visited = Visited(w, begin, end);
        ASSERT_EQ(static_cast<int64_t>(visited.size()), end - begin);
        for (int64_t e = begin; e < end; ++e) {
          ASSERT_EQ(visited[static_cast<size_t>(e - begin)], OffsetsOf(l, e))
              << "element " << e << " of [" << begin << ", " << end << ")";
        }
      }
    }
  }
}

TEST(StridedWalkTest, DimensionsContiguousInEveryOperandMergeIntoOneRow) {
  int64_t rows = 0;
  Visited(WalkOf({{2, 3, 4}, {12, 4, 1}, {12, 4, 1}}), 0, 24, &rows);
  EXPECT_EQ(rows, 1);
  const StridedWalk<2> fill = WalkOf({{2, 3, 4}, {12, 4, 1}, {0, 0, 0}});
  EXPECT_EQ(fill.rank(), 1);
  EXPECT_EQ(fill.RowLength(), 24);
  EXPECT_EQ(fill.RowStride(1), 0);
  // A row-broadcast operand keeps unit-stride rows: one per row of the output.
  const StridedWalk<2> bcast = WalkOf({{2, 3, 4}, {12, 4, 1}, {0, 0, 1}});
  EXPECT_EQ(bcast.rank(), 2);
  EXPECT_EQ(bcast.RowLength(), 4);
  Visited(bcast, 0, 24, &rows);
  EXPECT_EQ(rows, 6);
  // A range starting and ending inside rows gives partial rows at both ends.
  Visited(bcast, 3, 13, &rows);
  EXPECT_EQ(rows, 4);  // [3, 4) [4, 8) [8, 12) [12, 13)
}

TEST(StridedWalkTest, RankZeroIsOneElementAndAnEmptyShapeVisitsNothing) {
  const StridedWalk<2> scalar = StridedWalk<2>::Of({}, {std::span<const int32_t>{}, {}});
  EXPECT_EQ(scalar.RowLength(), 1);
  EXPECT_EQ(Visited(scalar, 0, 1), (std::vector<std::array<int64_t, 2>>{{0, 0}}));
  const StridedWalk<2> empty = WalkOf({{3, 0, 2}, {0, 2, 1}, {0, 2, 1}});
  EXPECT_TRUE(Visited(empty, 0, 0).empty());
}

TEST(StridedWalkTest, AllocatesNothing) {
  const Case l{{4, 5, 6}, {1, 4, 20}, {30, 6, 1}};
  testing::AllocationCounter counter;
  const StridedWalk<2> w = WalkOf(l);
  int64_t sum = 0;
  w.ForEachRow(7, 100, [&](int64_t n, const StridedWalk<2>::Offsets& at) { sum += n + at[0]; });
  counter.Stop();
  EXPECT_EQ(counter.count(), 0);
  EXPECT_GT(sum, 0);
}

}  // namespace
}  // namespace onemodel::internal
