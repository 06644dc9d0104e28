// Tests of reshape viewability (spec 4): fixed examples of TryReshape and Reshape, then a
// property test over thousands of random strided sources and target shapes, checked against an
// oracle that knows nothing of runs: a target is viewable iff the source's row-major element
// offsets are an affine function of the target's index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
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
#include "core/tensor/reshape.h"
#include "core/tensor/tensor.h"
#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel {
namespace {

using tensor_test::ForEachIndex;
using tensor_test::Iota;
using tensor_test::RowMajorOffsets;
using tensor_test::Values;

using Ints = std::vector<int32_t>;
using Extents = std::vector<int64_t>;

// Row-major strides computed here, independently of ContiguousStrides (shapes are small).
Strides RowMajorStrides(const Shape& shape) {
  std::vector<int32_t> strides(static_cast<size_t>(shape.rank()));
  int64_t product = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = static_cast<int32_t>(product);
    product *= shape[d];
  }
  return Strides(std::span<const int32_t>(strides));
}

// The oracle. `offsets` are the source's element offsets in row-major order. A target shape is
// representable by a strided view iff it is empty, or with o = offsets[0] and, for each
// dimension d of extent >= 2, s_d = offsets[row-major position of the unit index e_d] - o, every
// row-major index i of the target satisfies o + sum(i_d * s_d) == offsets[position of i].
bool Representable(const std::vector<int64_t>& offsets, const Shape& target) {
  if (target.IsEmpty()) return true;
  const int rank = target.rank();
  const int64_t o = offsets[0];
  std::vector<int64_t> s(static_cast<size_t>(rank), 0);
  int64_t unit_position = 1;  // row-major position of e_d: product of the extents right of d
  for (int d = rank - 1; d >= 0; --d) {
    if (target[d] >= 2) {
      s[static_cast<size_t>(d)] = offsets[static_cast<size_t>(unit_position)] - o;
    }
    unit_position *= target[d];
  }
  bool affine = true;
  size_t position = 0;
  ForEachIndex(target, [&](std::span<const int64_t> index) {
    int64_t at = o;
    for (int d = 0; d < rank; ++d) at += index[static_cast<size_t>(d)] * s[static_cast<size_t>(d)];
    if (at != offsets[position++]) affine = false;
  });
  return affine;
}

// --- Fixed examples -----------------------------------------------------------------------------

TEST(ReshapeOracle, AgreesWithHandExamples) {
  // [2, 3] row-major: offsets 0..5.
  const std::vector<int64_t> dense{0, 1, 2, 3, 4, 5};
  EXPECT_TRUE(Representable(dense, Shape{6}));
  EXPECT_TRUE(Representable(dense, Shape{3, 1, 2}));
  // [2, 3] transposed to [3, 2]: offsets 0 3 1 4 2 5.
  const std::vector<int64_t> transposed{0, 3, 1, 4, 2, 5};
  EXPECT_FALSE(Representable(transposed, Shape{6}));
  EXPECT_FALSE(Representable(transposed, Shape{2, 3}));
  EXPECT_TRUE(Representable(transposed, Shape{3, 2}));
  EXPECT_TRUE(Representable(transposed, Shape{3, 1, 2, 1}));
  // [3] expanded to [2, 3]: offsets 0 1 2 0 1 2.
  const std::vector<int64_t> expanded{0, 1, 2, 0, 1, 2};
  EXPECT_FALSE(Representable(expanded, Shape{6}));
  EXPECT_TRUE(Representable(expanded, Shape{2, 1, 3}));
  EXPECT_TRUE(Representable({}, Shape{0, 5}));
}

TEST(TensorTryReshape, ContiguousSplitsAndMerges) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  const std::optional<Tensor> flat = t.TryReshape({24});
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->strides(), (Strides{1}));
  const std::optional<Tensor> split = t.TryReshape({4, 1, 6});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->shape(), (Shape{4, 1, 6}));
  EXPECT_EQ(split->strides()[0], 6);
  EXPECT_EQ(split->strides()[2], 1);
  EXPECT_EQ(Values<int32_t>(*split), Values<int32_t>(t));
  EXPECT_EQ(split->buffer(), t.buffer());
}

TEST(TensorTryReshape, TransposedCannotFlatten) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool).Transpose(0, 1);
  EXPECT_FALSE(t.TryReshape({6}).has_value());
  EXPECT_FALSE(t.TryReshape({2, 3}).has_value());
  const std::optional<Tensor> same = t.TryReshape({1, 3, 2, 1});
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(Values<int32_t>(*same), (Ints{0, 3, 1, 4, 2, 5}));
}

TEST(TensorTryReshape, MergesAcrossDroppedExtentOneDimensions) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 1, 3}, pool);
  const Tensor odd =
      Tensor::FromBuffer(t.buffer(), DType::kInt32, Shape{2, 1, 3}, Strides{3, 100, 1}, 0);
  const std::optional<Tensor> flat = odd.TryReshape({6});
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(Values<int32_t>(*flat), (Ints{0, 1, 2, 3, 4, 5}));
}

TEST(TensorTryReshape, ReversedMergesWithNegativeStride) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool).Slice(0, 1, -3, -1).Slice(1, 2, -4, -1);
  const std::optional<Tensor> flat = t.TryReshape({6});
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->strides(), (Strides{-1}));
  EXPECT_EQ(flat->offset(), 5);
  EXPECT_EQ(Values<int32_t>(*flat), (Ints{5, 4, 3, 2, 1, 0}));
}

TEST(TensorTryReshape, BroadcastKeepsStrideZero) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{1}, pool, 7).Expand(Shape{2, 3});
  const std::optional<Tensor> flat = t.TryReshape({3, 2});
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->strides(), (Strides{0, 0}));
  EXPECT_EQ(Values<int32_t>(*flat), Ints(6, 7));
  const Tensor rows = Iota<int32_t>(Shape{3}, pool).Expand(Shape{2, 3});
  EXPECT_FALSE(rows.TryReshape({6}).has_value());
  EXPECT_TRUE(rows.TryReshape({2, 1, 3}).has_value());
}

TEST(TensorTryReshape, InfersOneExtent) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3, 4}, pool);
  EXPECT_EQ(t.TryReshape({-1})->shape(), (Shape{24}));
  EXPECT_EQ(t.TryReshape({3, -1, 2})->shape(), (Shape{3, 4, 2}));
  const Tensor empty = Iota<int32_t>(Shape{2, 0}, pool);
  EXPECT_EQ(empty.TryReshape({5, -1})->shape(), (Shape{5, 0}));
}

TEST(TensorTryReshape, InvalidRequestsThrow) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  EXPECT_THROW(t.TryReshape({-1, -1}), TensorShapeException);
  EXPECT_THROW(t.TryReshape({4, -1}), TensorShapeException);
  EXPECT_THROW(t.TryReshape({7}), TensorShapeException);
  EXPECT_THROW(t.TryReshape({-2, -3}), TensorShapeException);
  EXPECT_THROW(t.TryReshape({0, -1}), TensorShapeException);
  EXPECT_THROW(t.Transpose(0, 1).Reshape({5}, pool), TensorShapeException);
}

TEST(TensorTryReshape, ScalarAndOnes) {
  BufferPool pool;
  const Tensor s = Iota<int32_t>(Shape{}, pool, 3);
  EXPECT_EQ(s.TryReshape({1, 1, 1})->At<int32_t>({0, 0, 0}), 3);
  EXPECT_EQ(s.TryReshape({1, 1})->TryReshape({})->At<int32_t>({}), 3);
}

TEST(TensorTryReshape, EmptyIsAlwaysViewableWithRowMajorStrides) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{4, 3}, pool).Transpose(0, 1).Slice(0, 2, 2);  // [0, 4]
  ASSERT_EQ(t.ElementCount(), 0);
  const std::optional<Tensor> v = t.TryReshape({2, 0, 3});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->strides(), (Strides{0, 3, 1}));
  EXPECT_EQ(v->buffer(), t.buffer());
}

TEST(TensorReshape, UsesAViewWhenOneExists) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool);
  const Tensor v = t.Reshape({3, 2}, pool);
  EXPECT_EQ(v.buffer(), t.buffer());
  EXPECT_EQ(pool.Stats().rented_buffers, 1);
}

TEST(TensorReshape, FallsBackToAContiguousCopy) {
  BufferPool pool;
  Arena arena(pool);
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool).Transpose(0, 1);
  const Tensor v = t.Reshape({6}, arena);
  EXPECT_NE(v.buffer(), t.buffer());
  EXPECT_EQ(v.buffer()->owner(), static_cast<BufferOwner*>(&arena));
  EXPECT_TRUE(v.IsContiguous());
  EXPECT_EQ(Values<int32_t>(v), (Ints{0, 3, 1, 4, 2, 5}));
}

TEST(ReshapeStrides, FunctionMatchesTheSpecExamples) {
  EXPECT_EQ(ReshapeStrides(Shape{2, 3}, Strides{3, 1}, Shape{6}), (Strides{1}));
  EXPECT_EQ(ReshapeStrides(Shape{2, 3}, Strides{1, 2}, Shape{6}), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape{4, 6}, Strides{12, 1}, Shape{2, 2, 3, 2}),
            (Strides{24, 12, 2, 1}));
  EXPECT_EQ(ReshapeStrides(Shape{4, 6}, Strides{12, 1}, Shape{8, 3}), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape{0, 6}, Strides{-5, 7}, Shape{3, 0, 2}), (Strides{0, 2, 1}));
}

// --- Property test ------------------------------------------------------------------------------

using Rng = std::mt19937_64;

int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

bool Chance(Rng& rng, int percent) { return Uniform(rng, 0, 99) < percent; }

// An extent 0-4: mostly 2-4, extent 1 often, 0 rarely.
int64_t RandomExtent(Rng& rng) {
  const int64_t r = Uniform(rng, 0, 39);
  if (r == 0) return 0;
  if (r < 9) return 1;
  return 2 + r % 3;
}

std::string Format(std::span<const int64_t> extents) { return FormatExtents(extents); }

// A random strided view of a contiguous base (Permute, Slice with any step, Expand, Unsqueeze,
// Squeeze), rank at most 5. Appends what it did to `history`.
Tensor RandomSource(Rng& rng, const Tensor& base, std::string& history) {
  Tensor t = base;
  const int64_t ops = Chance(rng, 5) ? 0 : Uniform(rng, 2, 7);
  for (int64_t k = 0; k < ops; ++k) {
    std::ostringstream step;
    const int rank = t.rank();
    // Permute 30 %, Slice 35 %, Expand 15 %, Unsqueeze 10 %, Squeeze 10 %.
    const int64_t pick = Uniform(rng, 0, 19);
    switch (pick < 6 ? 0 : pick < 13 ? 1 : pick < 16 ? 2 : pick < 18 ? 3 : 4) {
      case 0: {  // Permute, written with random negative dimensions
        std::vector<int> perm(static_cast<size_t>(rank));
        for (int d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int& p : perm) {
          if (Chance(rng, 30)) p -= rank;
        }
        t = t.Permute(perm);
        step << " Permute(";
        for (int p : perm) step << p << ",";
        step << ")";
        break;
      }
      case 1: {  // Slice: a flip, a trim with a small step, or random bounds and step
        if (rank == 0) break;
        const int dim = static_cast<int>(Uniform(rng, 0, rank - 1));
        const int64_t n = t.shape()[dim];
        int64_t s = Uniform(rng, 1, 3);
        if (Chance(rng, 60)) s = -s;
        int64_t start = Uniform(rng, -n - 2, n + 2), stop = Uniform(rng, -n - 2, n + 2);
        const int64_t mode = Uniform(rng, 0, 9);  // random bounds (often empty) 2 times in 10
        if (mode < 4) {
          s = -1;
          start = -1;
          stop = -n - 1;
        } else if (mode < 8) {
          s = s > 0 ? Uniform(rng, 1, 2) : -Uniform(rng, 1, 2);
          start = s > 0 ? Uniform(rng, 0, 1) : n - 1 - Uniform(rng, 0, 1);
          stop = s > 0 ? n - Uniform(rng, 0, 1) : -n - 1 + Uniform(rng, 0, 1);
        }
        t = t.Slice(dim, start, stop, s);
        step << " Slice(" << dim << "," << start << "," << stop << "," << s << ")";
        break;
      }
      case 2: {  // Expand extent-1 dimensions, maybe adding a leading one
        Extents to(t.shape().extents().begin(), t.shape().extents().end());
        for (int64_t& e : to) {
          if (e == 1 && Chance(rng, 60)) e = Chance(rng, 5) ? 0 : Uniform(rng, 2, 4);
        }
        if (rank < 5 && Chance(rng, 40)) to.insert(to.begin(), Uniform(rng, 1, 3));
        t = t.Expand(Shape(std::span<const int64_t>(to)));
        step << " Expand(" << Format(to) << ")";
        break;
      }
      case 3: {  // Unsqueeze
        if (rank >= 5) break;
        const int dim = static_cast<int>(Uniform(rng, -rank - 1, rank));
        t = t.Unsqueeze(dim);
        step << " Unsqueeze(" << dim << ")";
        break;
      }
      default: {  // Squeeze one extent-1 dimension
        for (int d = 0; d < rank; ++d) {
          if (t.shape()[d] == 1) {
            t = t.Squeeze(d);
            step << " Squeeze(" << d << ")";
            break;
          }
        }
        break;
      }
    }
    history += step.str();
  }
  return t;
}

// A random factorization of `count` (extents of at most 4 give only the primes 2 and 3) into
// 0-4 dimensions with extent-1 dimensions inserted; for count 0, random extents with a 0.
Extents RandomFactorization(Rng& rng, int64_t count) {
  Extents out;
  if (count == 0) {
    const int64_t rank = Uniform(rng, 1, 5);
    for (int64_t d = 0; d < rank; ++d) out.push_back(RandomExtent(rng));
    out[static_cast<size_t>(Uniform(rng, 0, rank - 1))] = 0;
    return out;
  }
  std::vector<int64_t> primes;
  for (int64_t p : {2, 3}) {
    while (count % p == 0) {
      primes.push_back(p);
      count /= p;
    }
  }
  if (count != 1) primes.push_back(count);  // cannot happen with extents <= 4
  const int64_t dims = primes.empty() ? 0 : Uniform(rng, 1, 4);
  out.assign(static_cast<size_t>(dims), 1);
  for (int64_t p : primes) out[static_cast<size_t>(Uniform(rng, 0, dims - 1))] *= p;
  const int64_t ones = Uniform(rng, 0, 2);
  for (int64_t k = 0; k < ones && out.size() < 8; ++k) {
    out.insert(out.begin() + Uniform(rng, 0, static_cast<int64_t>(out.size())), 1);
  }
  return out;
}

// The source's shape edited so that it is often viewable: neighbours merged, extents split,
// extent-1 dimensions inserted or removed.
Extents RandomEdit(Rng& rng, const Shape& shape) {
  Extents out(shape.extents().begin(), shape.extents().end());
  const int64_t edits = Uniform(rng, 1, 3);
  for (int64_t k = 0; k < edits; ++k) {
    const int64_t n = static_cast<int64_t>(out.size());
    switch (Uniform(rng, 0, 3)) {
      case 0:  // merge two neighbours
        if (n >= 2) {
          const size_t i = static_cast<size_t>(Uniform(rng, 0, n - 2));
          out[i] *= out[i + 1];
          out.erase(out.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
        break;
      case 1:  // split an extent into two factors
        if (n >= 1 && n < 8) {
          const size_t i = static_cast<size_t>(Uniform(rng, 0, n - 1));
          for (int64_t f : {2, 3}) {
            if (out[i] % f == 0 && out[i] > f) {
              out[i] /= f;
              out.insert(out.begin() + static_cast<std::ptrdiff_t>(i) + (Chance(rng, 50) ? 1 : 0),
                         f);
              break;
            }
          }
        }
        break;
      case 2:  // insert an extent-1 dimension
        if (n < 8) out.insert(out.begin() + Uniform(rng, 0, n), 1);
        break;
      default:  // remove an extent-1 dimension
        for (size_t i = 0; i < out.size(); ++i) {
          if (out[i] == 1) {
            out.erase(out.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        }
        break;
    }
  }
  return out;
}

struct Coverage {
  int sources = 0;
  int targets = 0;
  int viewable = 0;
  int not_viewable = 0;
  int not_flattenable = 0;  // sources that TryReshape({-1}) cannot view
  int empty = 0;
  int scalar = 0;
  int negative_stride = 0;
  int zero_stride = 0;
  int extent_one = 0;
  int offset = 0;
  int inferred = 0;
  int viewable_with_negative_stride = 0;
  int viewable_with_zero_stride = 0;
  int not_viewable_edit = 0;
  int failures = 0;
};

constexpr int kTargetsPerSource = 4;
constexpr int kMaxFailures = 10;

// Reshapes `source` (whose values are its element offsets) to kTargetsPerSource random targets
// and checks TryReshape and Reshape against the oracle. `history` says how source was made.
void CheckRandomTargets(Rng& rng, const Tensor& source, Allocator& allocator, bool dispose_copies,
                        const std::string& history, Coverage& cover) {
  const std::vector<int64_t> offsets = RowMajorOffsets(source);
  const std::vector<int32_t> values = Values<int32_t>(source);
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], offsets[i]) << history;

  const Shape& ss = source.shape();
  ++cover.sources;
  if (ss.IsEmpty()) ++cover.empty;
  if (ss.rank() == 0) ++cover.scalar;
  if (source.offset() > 0) ++cover.offset;
  if (!Representable(offsets, Shape{ss.ElementCount()})) ++cover.not_flattenable;
  bool negative = false, zero = false;
  for (int d = 0; d < ss.rank(); ++d) {
    if (ss[d] > 1 && source.strides()[d] < 0) negative = true;
    if (ss[d] > 1 && source.strides()[d] == 0) zero = true;
    if (ss[d] == 1) ++cover.extent_one;
  }
  cover.negative_stride += negative;
  cover.zero_stride += zero;

  for (int k = 0; k < kTargetsPerSource && cover.failures < kMaxFailures; ++k) {
    const bool edit = k % 2 == 0;
    Extents request = edit ? RandomEdit(rng, ss) : RandomFactorization(rng, ss.ElementCount());
    const Shape target = Shape(std::span<const int64_t>(request));
    ASSERT_EQ(target.ElementCount(), ss.ElementCount()) << history << " " << Format(request);
    // Sometimes ask for one extent to be inferred (when the others determine it).
    if (!request.empty() && Chance(rng, 25)) {
      const size_t at =
          static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(request.size()) - 1));
      int64_t others = 1;
      for (size_t d = 0; d < request.size(); ++d) {
        if (d != at) others *= request[d];
      }
      if (others != 0) {
        request[at] = -1;
        ++cover.inferred;
      }
    }
    ++cover.targets;
    const bool expected = Representable(offsets, target);
    auto describe = [&] {
      std::ostringstream os;
      os << history << " -> source " << source.Describe() << " reshaped to " << Format(request)
         << " (oracle: " << (expected ? "viewable" : "not viewable") << ")";
      return os.str();
    };

    const std::optional<Tensor> view = source.TryReshape(request);
    if (view.has_value() != expected) {
      ADD_FAILURE() << "TryReshape " << (view ? "succeeded" : "failed") << ": " << describe()
                    << (view ? " view " + view->Describe() : std::string());
      ++cover.failures;
      continue;
    }
    if (expected) {
      ++cover.viewable;
      if (negative) ++cover.viewable_with_negative_stride;
      if (zero) ++cover.viewable_with_zero_stride;
      const bool ok = view->shape() == target && view->buffer() == source.buffer() &&
                      RowMajorOffsets(*view) == offsets && Values<int32_t>(*view) == values &&
                      (!target.IsEmpty() || view->strides() == RowMajorStrides(target));
      if (!ok) {
        ADD_FAILURE() << "wrong view " << view->Describe() << ": " << describe();
        ++cover.failures;
      }
    } else {
      ++cover.not_viewable;
      if (edit) ++cover.not_viewable_edit;
    }

    // Reshape: the view, or a contiguous copy; row-major values are the same either way.
    const Tensor reshaped = source.Reshape(request, allocator);
    const bool copied = reshaped.buffer() != source.buffer();
    const bool ok = reshaped.shape() == target && Values<int32_t>(reshaped) == values &&
                    copied == !expected && (!copied || reshaped.IsContiguous());
    if (!ok) {
      ADD_FAILURE() << "wrong Reshape " << reshaped.Describe() << ": " << describe();
      ++cover.failures;
    }
    if (copied && dispose_copies) Tensor(reshaped).Dispose();
  }
}

// Sources made from a contiguous base by view operations.
TEST(ReshapeProperty, TryReshapeSucceedsExactlyWhenAViewExists) {
  constexpr int kSources = 5000;
  Rng rng(20240607);
  BufferPool pool;
  Arena arena(pool);
  Coverage cover;
  for (int i = 0; i < kSources && cover.failures < kMaxFailures; ++i) {
    const bool use_arena = i % 4 == 3;  // Reshape's copies come from the arena
    Allocator& allocator = use_arena ? static_cast<Allocator&>(arena) : pool;
    // Rank 0 and 1 rarely: most sources should have some structure.
    const int64_t r = Uniform(rng, 0, 19);
    Extents base_extents(static_cast<size_t>(r == 0 ? 0 : r < 3 ? 1 : Uniform(rng, 2, 5)));
    for (int64_t& e : base_extents) e = RandomExtent(rng);
    const Shape base_shape = Shape(std::span<const int64_t>(base_extents));
    // Values equal element offsets, so a value read names the element it came from.
    Tensor base = Iota<int32_t>(base_shape, pool);
    std::string history = "base " + base_shape.ToString();
    const Tensor source = RandomSource(rng, base, history);
    CheckRandomTargets(rng, source, allocator, !use_arena, history, cover);
    base.Dispose();
    if (use_arena) arena.Reset();
  }

  // The generator must reach every corner the rule has, or the test proves little.
  EXPECT_EQ(cover.sources, kSources);
  EXPECT_EQ(cover.targets, kTargetsPerSource * kSources);
  EXPECT_GT(cover.viewable, cover.targets / 2);
  EXPECT_GT(cover.not_viewable, cover.targets / 7);
  EXPECT_GT(cover.not_viewable_edit, 500);
  EXPECT_GT(cover.not_flattenable, kSources / 4);
  EXPECT_GT(cover.empty, 500);
  EXPECT_GT(cover.scalar, 50);
  EXPECT_GT(cover.offset, 1000);
  EXPECT_GT(cover.negative_stride, 1000);
  EXPECT_GT(cover.zero_stride, 1000);
  EXPECT_GT(cover.viewable_with_negative_stride, 1000);
  EXPECT_GT(cover.viewable_with_zero_stride, 1000);
  EXPECT_GT(cover.extent_one, 2000);
  EXPECT_GT(cover.inferred, 2000);
  EXPECT_EQ(pool.Stats().rented_buffers, arena.Stats().chunks);  // nothing leaked
}

// Sources with arbitrary strides (any sign, zero, overlapping) made with FromBuffer: the rule
// holds for every strided view, not only for those the view operations produce.
TEST(ReshapeProperty, TryReshapeSucceedsExactlyWhenAViewExistsForArbitraryStrides) {
  constexpr int kSources = 3000;
  Rng rng(777);
  BufferPool pool;
  Coverage cover;
  for (int i = 0; i < kSources && cover.failures < kMaxFailures; ++i) {
    Extents extents(static_cast<size_t>(Uniform(rng, 0, 5)));
    for (int64_t& e : extents) e = RandomExtent(rng);
    std::vector<int32_t> strides(extents.size());
    int64_t lowest = 0, highest = 0;
    for (size_t d = 0; d < extents.size(); ++d) {
      strides[d] = static_cast<int32_t>(Chance(rng, 20) ? 0 : Uniform(rng, -8, 8));
      const int64_t span = (std::max<int64_t>(extents[d], 1) - 1) * strides[d];
      (span < 0 ? lowest : highest) += span;
    }
    const int64_t offset = -lowest + Uniform(rng, 0, 3);
    const int64_t length = offset + highest + 1 + Uniform(rng, 0, 3);
    Tensor base = Iota<int32_t>(Shape{length}, pool);
    const Shape shape = Shape(std::span<const int64_t>(extents));
    const Tensor source = Tensor::FromBuffer(base.buffer(), DType::kInt32, shape,
                                             Strides(std::span<const int32_t>(strides)), offset);
    CheckRandomTargets(rng, source, pool, /*dispose_copies=*/true, "FromBuffer", cover);
    base.Dispose();
  }
  EXPECT_EQ(cover.sources, kSources);
  EXPECT_GT(cover.viewable, cover.targets / 10);
  EXPECT_GT(cover.not_viewable, cover.targets / 4);
  EXPECT_GT(cover.viewable_with_negative_stride, 300);
  EXPECT_GT(cover.viewable_with_zero_stride, 300);
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
}

}  // namespace
}  // namespace onemodel
