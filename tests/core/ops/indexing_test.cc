// Embedding, Gather, Concat and Split (core/ops/indexing.h): values, errors and edge cases,
// gradients (analytic against finite differences) and the table gradient's bits on every kernel
// set.
#include "core/ops/indexing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/grad_mode.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"
#include "tests/core/ops/grad_check.h"

namespace onemodel {
namespace {

using ops_test::ExpectGradientsMatch;
using ops_test::Random;

class IndexingTest : public ::testing::Test {
 protected:
  // `shape` holding 0, 1, 2, ... as FLOAT.
  Tensor Iota(const Shape& shape) {
    Tensor t = Tensor::Empty(shape, DType::kFloat, pool_);
    auto d = t.MutableData<float>();
    for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(i);
    return t;
  }
  // An index tensor of `dtype` (INT32 or INT64) holding `v`.
  Tensor Index(std::vector<int64_t> v, const Shape& shape, DType dtype = DType::kInt64) {
    Tensor t = Tensor::Empty(shape, dtype, pool_);
    for (size_t i = 0; i < v.size(); ++i) {
      if (dtype == DType::kInt32) {
        t.MutableData<int32_t>()[i] = static_cast<int32_t>(v[i]);
      } else {
        t.MutableData<int64_t>()[i] = v[i];
      }
    }
    return t;
  }
  std::vector<float> Values(const Tensor& t) { return ops_test::FloatValues(t, pool_); }
  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Default()};
  std::mt19937 rng_{17};
};

TEST_F(IndexingTest, EmbeddingPicksRowsForIndicesOfAnyShapeAndType) {
  const Tensor table = Iota(Shape{4, 3});
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    const Tensor y = ops::Embedding(table, Index({3, 0, 3, 1}, Shape{2, 2}, dtype), {}, ctx_);
    EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
    EXPECT_EQ(Values(y), (std::vector<float>{9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5}));
  }
  EXPECT_EQ(ops::Embedding(table, Index({2}, Shape{}), {}, ctx_).shape(), (Shape{3}));
  EXPECT_EQ(ops::Embedding(table, Index({}, Shape{0, 5}), {}, ctx_).shape(), (Shape{0, 5, 3}));
  // A strided table (its transpose) and strided indices (every other one, backwards).
  const Tensor idx = Index({0, 9, 2, 9, 1}, Shape{5}).Slice(0, -1, -6, -2);  // 1, 2, 0
  EXPECT_EQ(Values(ops::Embedding(Iota(Shape{3, 3}).Transpose(0, 1), idx, 1, ctx_)),
            (std::vector<float>{1, 4, 7, 2, 5, 8, 0, 3, 6}));
}

TEST_F(IndexingTest, EmbeddingRefusesBadIndicesNamingTheFirstBeforeWriting) {
  const Tensor table = Iota(Shape{4, 3});
  ExpectError<TensorException>(
      [&] {
        ops::Embedding(table, Index({0, 4, -1, 2}, Shape{2, 2}), {}, ctx_);
      },
      {"Embedding", "index 4", "position [0, 1]", "table of 4 rows", "0 to 3"});
  ExpectError<TensorException>(
      [&] {
        ops::Embedding(table, Index({1, -1}, Shape{2}, DType::kInt32), {}, ctx_);
      },
      {"index -1", "position [1]", "table of 4 rows"});
  ExpectError<TensorException>([&] { ops::Embedding(table, Index({0}, Shape{1}), 4, ctx_); },
                               {"skip id 4", "padding_idx"});
  ExpectError<TensorTypeException>([&] { ops::Embedding(table, Iota(Shape{2}), {}, ctx_); },
                                   {"Embedding", "indices", "INT64"});
  ExpectError<TensorShapeException>(
      [&] { ops::Embedding(Iota(Shape{4}), Index({0}, Shape{1}), {}, ctx_); },
      {"Embedding", "(V, D)"});
  const Tensor bad = Index({7}, Shape{1});
  const PoolStats before = pool_.Stats();
  ExpectError<TensorException>([&] { ops::Embedding(table, bad, {}, ctx_); }, {"index 7"});
  EXPECT_EQ(pool_.Stats().hits + pool_.Stats().misses, before.hits + before.misses)
      << "checked before an output is allocated";
}

TEST_F(IndexingTest, EmbeddingGradientSkipsTheSkipIdAndAddsRepeats) {
  const Tensor table = Iota(Shape{4, 2}).WithRequiresGrad();
  const Tensor y = ops::Embedding(table, Index({1, 3, 1, 0}, Shape{4}), 3, ctx_);
  const BackwardRecord* record = GradFn(y);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(OpKindName(record->op()), "Embedding");
  EXPECT_EQ(record->ints(), (std::vector<int64_t>{3}));
  EXPECT_EQ(record->InputShape(0), (Shape{4, 2}));
  const Tensor g = Iota(Shape{4, 2});
  const auto grads = Backward(y, &g, std::vector<Tensor>{table}, ctx_);
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{6, 7, 0 + 4, 1 + 5, 0, 0, 0, 0}))
      << "row 1 gets g[0] + g[2], row 0 g[3], row 3 (the skip id) nothing";
  EXPECT_EQ(Values(y)[2], 6) << "the skip id's row is still looked up";
}

// The lookup (GatherRows, split over threads in the fast kernels: 1.2 MB of rows) and the
// table's gradient.
TEST_F(IndexingTest, EmbeddingIsTheSameBitsOnEveryKernelSet) {
  const Tensor table = Random(Shape{50, 100}, rng_, pool_);
  std::vector<int64_t> ids(3000);
  for (int64_t& i : ids) i = static_cast<int64_t>(rng_() % 50);
  const Tensor idx = Index(ids, Shape{60, 50});
  const Tensor g = Random(Shape{60, 50, 100}, rng_, pool_);
  std::vector<std::vector<float>> forward, backward;
  for (const TensorKernels* k : KernelSet::Available()) {
    const OpContext ctx{pool_, *k};
    const Tensor t = table.Detach().WithRequiresGrad();
    const Tensor y = ops::Embedding(t, idx, 7, ctx);
    forward.push_back(Values(y));
    backward.push_back(Values(Backward(y, &g, std::vector<Tensor>{t}, ctx)[0]));
  }
  ASSERT_GT(forward.size(), 1u);
  for (size_t i = 1; i < forward.size(); ++i) {
    EXPECT_EQ(std::memcmp(forward[i].data(), forward[0].data(), forward[0].size() * 4), 0)
        << KernelSet::Available()[i]->name();
    EXPECT_EQ(std::memcmp(backward[i].data(), backward[0].data(), backward[0].size() * 4), 0)
        << KernelSet::Available()[i]->name();
  }
  EXPECT_EQ(forward[0][100 * 5 + 3], table.At<float>({ids[5], 3}));
}

TEST_F(IndexingTest, GatherFollowsOnnxIncludingNegativeIndices) {
  const Tensor x = Iota(Shape{2, 3, 2});
  const Tensor y = ops::Gather(x, Index({2, -3, -1}, Shape{3, 1}, DType::kInt32), 1, ctx_);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 1, 2}));
  EXPECT_EQ(Values(y), (std::vector<float>{4, 5, 0, 1, 4, 5, 10, 11, 6, 7, 10, 11}));
  EXPECT_EQ(Values(ops::Gather(x, Index({1}, Shape{}), -1, ctx_)),
            (std::vector<float>{1, 3, 5, 7, 9, 11}))
      << "a scalar index drops the axis";
  EXPECT_EQ(ops::Gather(x, Index({}, Shape{0}), 0, ctx_).shape(), (Shape{0, 3, 2}));
  EXPECT_EQ(Values(ops::Gather(x.Slice(1, -1, -4, -1), Index({0}, Shape{1}), 1, ctx_)),
            (std::vector<float>{4, 5, 10, 11}))
      << "negative strides";
  ExpectError<TensorException>(
      [&] {
        ops::Gather(x, Index({0, 1, 3}, Shape{3}), 1, ctx_);
      },
      {"Gather", "index 3", "position [2]", "axis 1 of data (extent 3)", "-3 to 2"});
  ExpectError<TensorException>([&] { ops::Gather(x, Index({-4}, Shape{1}), -2, ctx_); },
                               {"index -4", "axis 1"});
  ExpectError<TensorShapeException>([&] { ops::Gather(x, Index({0}, Shape{1}), 3, ctx_); },
                                    {"Gather"});
  ExpectError<TensorShapeException>(
      [&] {
        ops::Gather(x, Index({0}, Shape{1, 1, 1, 1, 1, 1, 1}), 0, ctx_);
      },
      {"Gather", "would have 9 dimensions", "at most 8"});
}

// More rows than GatherRows fetches ahead (4), the rows ahead crossing from one outer slice to
// the next, negative indices: each kernel set, both index types, picks the ONNX rows.
TEST_F(IndexingTest, GatherOfManyRowsAcrossOuterSlicesPicksEachRow) {
  const Tensor x = Iota(Shape{3, 5, 2});
  const std::vector<int64_t> ids = {4, -1, 0, -5, 2, 2, 1, -3, 3};
  std::vector<float> expected;
  for (int64_t o = 0; o < 3; ++o) {
    for (const int64_t i : ids) {
      for (int64_t c = 0; c < 2; ++c) {
        expected.push_back(static_cast<float>((o * 5 + (i < 0 ? i + 5 : i)) * 2 + c));
      }
    }
  }
  for (const TensorKernels* k : KernelSet::Available()) {
    for (const DType dtype : {DType::kInt32, DType::kInt64}) {
      const OpContext ctx{pool_, *k};
      const Tensor y = ops::Gather(x, Index(ids, Shape{9}, dtype), 1, ctx);
      EXPECT_EQ(y.shape(), (Shape{3, 9, 2}));
      EXPECT_EQ(Values(y), expected) << k->name() << " " << OnnxName(dtype);
    }
  }
}

TEST_F(IndexingTest, ConcatJoinsAlongAnAxisAndChecksTheOtherExtents) {
  const Tensor a = Iota(Shape{2, 2});
  const Tensor b = Iota(Shape{3, 2}).Transpose(0, 1);  // (2, 3): 0 2 4 / 1 3 5
  const Tensor parts[] = {a, Iota(Shape{2, 0}), b};
  const Tensor y = ops::Concat(parts, -1, ctx_);
  EXPECT_EQ(y.shape(), (Shape{2, 5}));
  EXPECT_EQ(Values(y), (std::vector<float>{0, 1, 0, 2, 4, 2, 3, 1, 3, 5}));
  const Tensor rows[] = {a, a.Slice(0, -1, -3, -1)};
  EXPECT_EQ(Values(ops::Concat(rows, 0, ctx_)), (std::vector<float>{0, 1, 2, 3, 2, 3, 0, 1}));
  const Tensor bad[] = {a, Iota(Shape{3, 3})};
  ExpectError<TensorShapeException>([&] { ops::Concat(bad, 1, ctx_); },
                                    {"Concat", "inputs[1] [3, 3]", "inputs[0] [2, 2]", "axis 1"});
  ExpectError<TensorException>([&] { ops::Concat({}, 0, ctx_); }, {"Concat", "at least one"});
}

TEST_F(IndexingTest, SplitReturnsOnePieceAsAView) {
  const Tensor x = Iota(Shape{2, 5});
  const int64_t sizes[] = {2, 0, 3};
  const Tensor last = ops::Split(x, 1, sizes, 0, 2, ctx_);
  EXPECT_EQ(Values(last), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(last.buffer(), x.buffer()) << "a view";
  EXPECT_EQ(ops::Split(x, 1, sizes, 0, 1, ctx_).shape(), (Shape{2, 0}));
  // num_outputs: ceil(5 / 3) = 2, 2, then 1.
  EXPECT_EQ(Values(ops::Split(x, -1, {}, 3, 1, ctx_)), (std::vector<float>{2, 3, 7, 8}));
  EXPECT_EQ(Values(ops::Split(x, -1, {}, 3, 2, ctx_)), (std::vector<float>{4, 9}));
  EXPECT_EQ(Values(ops::Split(x.Slice(1, -1, -6, -1), 1, {}, 5, 0, ctx_)),
            (std::vector<float>{4, 9}));
  ExpectError<TensorShapeException>(
      [&] {
        const int64_t wrong[] = {2, 2};
        ops::Split(x, 1, wrong, 0, 0, ctx_);
      },
      {"Split", "add up to 4", "extent 5"});
  ExpectError<TensorException>([&] { ops::Split(x, 1, sizes, 0, 3, ctx_); }, {"index 3", "0 to 2"});
  ExpectError<TensorException>([&] { ops::Split(x, 1, {}, 0, 0, ctx_); }, {"num_outputs"});
  ExpectError<TensorException>(
      [&] {
        const int64_t negative[] = {-1, 6};
        ops::Split(x, 1, negative, 0, 0, ctx_);
      },
      {"piece sizes must be from 0 to", "extent 5", "got -1"});
  EXPECT_EQ(ops::Split(x, 1, {}, INT64_MAX, INT64_MAX - 1, ctx_).shape(), (Shape{2, 0}))
      << "more pieces than elements: the last ones are empty";
}

TEST_F(IndexingTest, GradientsMatchFiniteDifferences) {
  const Tensor idx = Index({2, 0, -1, 2, 1, 0}, Shape{2, 3});
  ExpectGradientsMatch(
      "Gather",
      [&](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Gather(in[0], idx, 1, c);
      },
      {Random(Shape{2, 3, 2}, rng_, pool_)}, ctx_, rng_);
  ExpectGradientsMatch(
      "Embedding",
      [&](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Embedding(in[0], Index({1, 0, 1, 3}, Shape{4}), {}, c);
      },
      {Random(Shape{4, 3}, rng_, pool_)}, ctx_, rng_);
  ExpectGradientsMatch(
      "Concat",
      [](const std::vector<Tensor>& in, const OpContext& c) { return ops::Concat(in, 1, c); },
      {Random(Shape{2, 1, 3}, rng_, pool_), Random(Shape{2, 2, 3}, rng_, pool_)}, ctx_, rng_);
  ExpectGradientsMatch(
      "Split",
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const int64_t sizes[] = {1, 3};
        return ops::Split(in[0], 0, sizes, 0, 1, c);
      },
      {Random(Shape{4, 2}, rng_, pool_)}, ctx_, rng_);
}

TEST_F(IndexingTest, ConcatGivesGradientsOnlyToInputsThatWantThem) {
  const Tensor a = Iota(Shape{2}).WithRequiresGrad();
  const Tensor parts[] = {a, Iota(Shape{3})};
  const Tensor y = ops::Concat(parts, 0, ctx_);
  EXPECT_EQ(OpKindName(GradFn(y)->op()), "Concat");
  const Tensor g = Iota(Shape{5});
  EXPECT_EQ(Values(Backward(y, &g, std::vector<Tensor>{a}, ctx_)[0]), (std::vector<float>{0, 1}));
  NoGrad no_grad;
  EXPECT_FALSE(ops::Concat(parts, 0, ctx_).requires_grad());
}

}  // namespace
}  // namespace onemodel
