// Elementwise kernels over the variant table (kernel_variants.h): every op of every fast
// variant against the reference on random shapes and layouts and on special values, split
// over 1 and 2 threads; streaming stores at every alignment; NaN and tie rules, concurrency
// and versions on every variant.
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <memory>
#include <cmath>
#include <vector>
#include <thread>
#include <vector>

#include "core/kernels/accuracy.h"
#include "core/kernels/scalar_ops.h"
#include "tests/core/kernels/kernel_test_util.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

using kernel_test::Placed;
using kernel_test::RandomLayout;
using kernel_test::RandomShape;
using kernel_test::Variant;

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// Arithmetic ops on two NaNs may return either payload (IEEE 754 leaves it open and the
// compiler may commute the scalar reference); every other result must match bit for bit.
bool SameResult(BinaryOp op, float a, float b, float fast, float ref) {
  if (op == BinaryOp::kPow) return Bits(fast) == Bits(ref);
  const bool arithmetic = op != BinaryOp::kMax && op != BinaryOp::kMin;
  if (arithmetic && std::isnan(a) && std::isnan(b)) return std::isnan(fast) && std::isnan(ref);
  return Bits(fast) == Bits(ref);
}

// Outputs for the streaming-store tests, inside sentinel-filled buffers: shapes [rows, n]
// with awkward row lengths (a row of 37 puts each row at another offset within a 64-byte
// line), each starting at every float offset of a line, so heads, vectors and tails all vary.
// The last one is above the 2-thread grain, so two pieces stream and fence.
std::vector<Placed> MisalignedOutputs(BufferPool& pool) {
  std::vector<Placed> out;
  const std::vector<int64_t> shapes[] = {{1},   {5},    {15},    {16},   {17},     {63},    {65},
                                         {257}, {1001}, {3, 37}, {2, 1}, {4, 129}, {270001}};
  for (const std::vector<int64_t>& shape : shapes) {
    const int64_t count = Shape(std::span<const int64_t>(shape)).ElementCount();
    for (int64_t shift = 0; shift < 16; ++shift) {
      if (count > 10000 && shift != 3 && shift != 10) continue;  // the large one: two offsets
      Placed p;
      p.whole = Tensor::Empty(Shape{count + 32}, DType::kFloat, pool);
      p.whole.Fill(std::bit_cast<float>(kernel_test::kSentinelBits));
      p.view = p.whole.Slice(0, 16 + shift, 16 + shift + count).TryReshape(shape).value();
      out.push_back(std::move(p));
    }
  }
  return out;
}

// The variant's kernels on a 2-thread pool, streaming every output (threshold 0 bytes) or none.
std::unique_ptr<FastKernels> StreamingKernels(const Variant& v, ThreadPool& pool, bool stream) {
  return std::make_unique<FastKernels>(*v.target, pool,
                                       stream ? 0 : std::numeric_limits<int64_t>::max());
}

// One variant and one op: Combine(FastVariants(), ops) rows.
template <typename Op>
class OpTest : public ::testing::TestWithParam<std::tuple<Variant, Op>> {
 protected:
  const Variant& variant() const { return std::get<0>(this->GetParam()); }
  const TensorKernels& fast() const { return *variant().kernels; }
  Op op() const { return std::get<1>(this->GetParam()); }
  // Inputs differ from op to op, and are the same for every variant.
  std::mt19937 Rng(int seed) const { return std::mt19937(seed * 100 + static_cast<int>(op())); }

  BufferPool pool_;
  const TensorKernels& reference_ = KernelSet::Get(KernelChoice::kExact);
};
using BinaryOpTest = OpTest<BinaryOp>;
using UnaryOpTest = OpTest<UnaryOp>;

TEST_P(BinaryOpTest, MatchesTheReferenceOnRandomShapesAndLayouts) {
  std::mt19937 rng = Rng(1);
  for (int c = 0; c < 150; ++c) {
    const Shape shape = RandomShape(rng);
    Placed a = RandomLayout(shape, rng, pool_, true);
    Placed b = RandomLayout(shape, rng, pool_, true);
    kernel_test::FillRandom(a.view, rng);
    kernel_test::FillRandom(b.view, rng);
    Placed out = RandomLayout(shape, rng, pool_, false);
    Tensor ref = Tensor::Empty(shape, DType::kFloat, pool_);
    fast().Binary(op(), a.view, b.view, out.view);
    reference_.Binary(op(), a.view, b.view, ref);
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << "wrote outside " << out.view.Describe();
    kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
      const float x = a.view.At<float>(i), y = b.view.At<float>(i);
      const float f = out.view.At<float>(i), r = ref.At<float>(i);
      ASSERT_TRUE(SameResult(op(), x, y, f, r))
          << "(" << x << ", " << y << "): fast " << f << " (0x" << std::hex << Bits(f)
          << "), reference " << r << " (0x" << Bits(r) << ")" << std::dec << " at shape "
          << shape.ToString();
    });
  }
}

TEST_P(BinaryOpTest, SplitOverThreadsGivesTheBitsOfOneThread) {
  std::mt19937 rng = Rng(3);
  ThreadPool one(1), two(2);
  const Shape shape{3, 90001};  // above twice the grain, odd so pieces leave tails
  Tensor a = Tensor::Empty(shape, DType::kFloat, pool_);
  Tensor b = Tensor::Empty(Shape{90001}, DType::kFloat, pool_);
  kernel_test::FillRandom(a, rng);
  kernel_test::FillRandom(b, rng);
  const Tensor row = b.Expand(shape);  // a row-broadcast operand
  Tensor o1 = Tensor::Empty(shape, DType::kFloat, pool_);
  Tensor o2 = Tensor::Empty(shape, DType::kFloat, pool_);
  variant().On(one)->Binary(op(), a, row, o1);
  variant().On(two)->Binary(op(), a, row, o2);
  // Element by element: where both inputs are NaN, which payload an arithmetic op returns
  // is open (SameResult), and the compiler may commute the vector add in one code path.
  kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
    ASSERT_TRUE(
        SameResult(op(), a.At<float>(i), row.At<float>(i), o2.At<float>(i), o1.At<float>(i)))
        << "at " << FormatExtents(i);
  });
}

TEST_P(BinaryOpTest, StreamingStoresGiveTheSameBitsAtAnyAlignmentAndLength) {
  std::mt19937 rng = Rng(4);
  ThreadPool two(2);
  const auto streaming = StreamingKernels(variant(), two, true);
  const auto ordinary = StreamingKernels(variant(), two, false);
  for (Placed& out : MisalignedOutputs(pool_)) {
    const Shape& shape = out.view.shape();
    Tensor a = Tensor::Empty(shape, DType::kFloat, pool_);
    kernel_test::FillRandom(a, rng);
    // b: contiguous, a scalar broadcast or a row broadcast, in turn
    const int64_t kind = rng() % 3;
    Tensor b = Tensor::Empty(kind == 0   ? shape
                             : kind == 1 ? Shape{1}
                                         : Shape{shape[shape.rank() - 1]},
                             DType::kFloat, pool_);
    kernel_test::FillRandom(b, rng);
    const Tensor bb = b.Expand(shape);
    Tensor expected = Tensor::Empty(shape, DType::kFloat, pool_);
    ordinary->Binary(op(), a, bb, expected);
    streaming->Binary(op(), a, bb, out.view);
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << "wrote outside " << out.view.Describe();
    kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
      ASSERT_TRUE(SameResult(op(), a.At<float>(i), bb.At<float>(i), out.view.At<float>(i),
                             expected.At<float>(i)))
          << "at " << FormatExtents(i) << " of " << out.view.Describe();
    });
  }
}

TEST_P(UnaryOpTest, IsExactOrWithinItsBoundOnRandomShapesAndLayouts) {
  std::mt19937 rng = Rng(2);
  for (int c = 0; c < 150; ++c) {
    const Shape shape = RandomShape(rng);
    Placed x = RandomLayout(shape, rng, pool_, true);
    kernel_test::FillRandom(x.view, rng);
    Placed out = RandomLayout(shape, rng, pool_, false);
    Tensor ref = Tensor::Empty(shape, DType::kFloat, pool_);
    fast().Unary(op(), x.view, out.view);
    reference_.Unary(op(), x.view, ref);
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << "wrote outside " << out.view.Describe();
    kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
      const float v = x.view.At<float>(i), f = out.view.At<float>(i), r = ref.At<float>(i);
      ASSERT_TRUE(WithinAccuracy(op(), v, f, r))
          << "(" << v << " = 0x" << std::hex << Bits(v) << "): fast " << f << " (0x" << Bits(f)
          << "), reference " << r << " (0x" << Bits(r) << ")" << std::dec << ", "
          << UlpDistance(f, r) << " ulp";
    });
  }
}

TEST_P(UnaryOpTest, SpecialValuesAreExactOrWithinItsBound) {
  const float specials[] = {0.0f,    -0.0f,     INFINITY,  -INFINITY,  NAN,         -NAN,    1e-45f,
                            -1e-45f, 88.72283f, 88.72284f, -87.33655f, -103.97208f, -104.5f, 1.0f,
                            -1.0f,   20.0f,     -20.0f,    3.4e38f,    -3.4e38f,    1e-20f};
  const int64_t n = std::size(specials);
  Tensor x = Tensor::Empty(Shape{n}, DType::kFloat, pool_);
  std::copy(std::begin(specials), std::end(specials), x.MutableData<float>().begin());
  Tensor out = Tensor::Empty(Shape{n}, DType::kFloat, pool_);
  fast().Unary(op(), x, out);
  for (int64_t i = 0; i < n; ++i) {
    const float v = specials[i], f = out.Data<float>()[static_cast<size_t>(i)];
    const float r = scalar::Unary(op(), v);
    EXPECT_TRUE(WithinAccuracy(op(), v, f, r)) << "(" << v << "): " << f << " vs " << r;
  }
}

TEST_P(UnaryOpTest, SplitOverThreadsGivesTheBitsOfOneThread) {
  std::mt19937 rng = Rng(3);
  ThreadPool one(1), two(2);
  const Shape shape{3, 90001};
  Tensor x = Tensor::Empty(shape, DType::kFloat, pool_);
  kernel_test::FillRandom(x, rng);
  Tensor o1 = Tensor::Empty(shape, DType::kFloat, pool_);
  Tensor o2 = Tensor::Empty(shape, DType::kFloat, pool_);
  variant().On(one)->Unary(op(), x, o1);
  variant().On(two)->Unary(op(), x, o2);
  ASSERT_TRUE(std::equal(o1.Data<float>().begin(), o1.Data<float>().end(), o2.Data<float>().begin(),
                         [](float p, float q) { return Bits(p) == Bits(q); }));
}

TEST_P(UnaryOpTest, StreamingStoresGiveTheSameBitsAtAnyAlignmentAndLength) {
  std::mt19937 rng = Rng(4);
  ThreadPool two(2);
  const auto streaming = StreamingKernels(variant(), two, true);
  const auto ordinary = StreamingKernels(variant(), two, false);
  for (Placed& out : MisalignedOutputs(pool_)) {
    const Shape& shape = out.view.shape();
    Tensor x = Tensor::Empty(shape, DType::kFloat, pool_);
    kernel_test::FillRandom(x, rng);
    Tensor expected = Tensor::Empty(shape, DType::kFloat, pool_);
    ordinary->Unary(op(), x, expected);
    streaming->Unary(op(), x, out.view);
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << "wrote outside " << out.view.Describe();
    kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
      ASSERT_EQ(Bits(out.view.At<float>(i)), Bits(expected.At<float>(i)))
          << "at " << FormatExtents(i) << " of " << out.view.Describe();
    });
  }
}

// Erf's vector form switches formulas at |x| = 1 and saturates from 4: every float from 0 to
// 4.5 at a step of 64 ulp (both signs), and every float within 4096 ulp of the joints.
TEST(ErfKernelTest, EveryFastVariantIsWithinItsBoundAcrossItsBranches) {
  std::vector<float> xs;
  for (uint32_t bits = 0; bits <= Bits(4.5f); bits += 64) xs.push_back(std::bit_cast<float>(bits));
  for (float joint : {1.0f, 4.0f, 3.92f}) {
    for (int d = -4096; d <= 4096; ++d) {
      xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(static_cast<int64_t>(Bits(joint)) + d)));
    }
  }
  const size_t half = xs.size();
  for (size_t i = 0; i < half; ++i) xs.push_back(-xs[i]);
  BufferPool pool;
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor x = Tensor::Empty(Shape{n}, DType::kFloat, pool);
  std::copy(xs.begin(), xs.end(), x.MutableData<float>().begin());
  Tensor out = Tensor::Empty(Shape{n}, DType::kFloat, pool);
  for (const Variant& v : kernel_test::FastVariants()) {
    v.kernels->Unary(UnaryOp::kErf, x, out);
    int64_t worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float f = out.Data<float>()[i], r = std::erf(xs[i]);
      worst = std::max(worst, UlpDistance(f, r));
      ASSERT_TRUE(WithinAccuracy(UnaryOp::kErf, xs[i], f, r))
          << v.name() << " erf(" << xs[i] << "): " << f << " vs " << r;
    }
    EXPECT_LE(worst, AccuracyOf(UnaryOp::kErf).max_ulp) << v.name();
  }
}

INSTANTIATE_TEST_SUITE_P(Fast, BinaryOpTest,
                         ::testing::Combine(::testing::ValuesIn(kernel_test::FastVariants()),
                                            ::testing::ValuesIn(kAllBinaryOps)),
                         kernel_test::ParamName);
INSTANTIATE_TEST_SUITE_P(Fast, UnaryOpTest,
                         ::testing::Combine(::testing::ValuesIn(kernel_test::FastVariants()),
                                            ::testing::ValuesIn(kAllUnaryOps)),
                         kernel_test::ParamName);

// Every variant, the reference included.
class ElementwiseTest : public ::testing::TestWithParam<Variant> {
 protected:
  const TensorKernels& kernels() const { return *GetParam().kernels; }
  BufferPool pool_;
};

TEST_P(ElementwiseTest, MaxMinAndReluPropagateNaNAndKeepTies) {
  const TensorKernels& k = kernels();
  Tensor a = Tensor::Empty(Shape{4}, DType::kFloat, pool_);
  Tensor b = Tensor::Empty(Shape{4}, DType::kFloat, pool_);
  Tensor out = Tensor::Empty(Shape{4}, DType::kFloat, pool_);
  const float nan1 = std::bit_cast<float>(0x7FC00001u), nan2 = std::bit_cast<float>(0x7FC00002u);
  std::vector<float> av{nan1, 1.0f, nan1, -0.0f}, bv{2.0f, nan2, nan2, 0.0f};
  std::copy(av.begin(), av.end(), a.MutableData<float>().begin());
  std::copy(bv.begin(), bv.end(), b.MutableData<float>().begin());
  k.Binary(BinaryOp::kMax, a, b, out);
  auto o = out.Data<float>();
  EXPECT_EQ(Bits(o[0]), Bits(nan1));
  EXPECT_EQ(Bits(o[1]), Bits(nan2));
  EXPECT_EQ(Bits(o[2]), Bits(nan1)) << "the first NaN wins";
  EXPECT_EQ(Bits(o[3]), Bits(0.0f)) << "a tie takes the second operand (a > b is false)";
  k.Binary(BinaryOp::kMin, a, b, out);
  EXPECT_EQ(Bits(out.Data<float>()[2]), Bits(nan1));
  k.Unary(UnaryOp::kRelu, a, out);
  EXPECT_EQ(Bits(out.Data<float>()[0]), Bits(nan1)) << "Relu(NaN) is NaN";
  EXPECT_EQ(Bits(out.Data<float>()[3]), Bits(0.0f)) << "Relu(-0) is +0";
}

TEST_P(ElementwiseTest, ManyThreadsCallingTheKernelsAtOnceGetCorrectResults) {
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      BufferPool local;
      Tensor a = Tensor::Empty(Shape{100000}, DType::kFloat, local);
      Tensor out = Tensor::Empty(Shape{100000}, DType::kFloat, local);
      a.Fill(static_cast<float>(t));
      for (int i = 0; i < 20; ++i) {
        kernels().Binary(BinaryOp::kAdd, a, a, out);
        for (float v : out.Data<float>()) {
          if (v != 2.0f * static_cast<float>(t)) {
            wrong.fetch_add(1);
            break;
          }
        }
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(ElementwiseTest, OutputVersionIsBumpedOncePerCall) {
  Tensor a = Tensor::Empty(Shape{8}, DType::kFloat, pool_, /*zero=*/true);
  Tensor out = Tensor::Empty(Shape{8}, DType::kFloat, pool_);
  const uint64_t before = out.version();
  kernels().Unary(UnaryOp::kExp, a, out);
  EXPECT_EQ(out.version(), before + 1);
  kernels().Binary(BinaryOp::kAdd, a, a, out);
  EXPECT_EQ(out.version(), before + 2);
}

INSTANTIATE_TEST_SUITE_P(All, ElementwiseTest, ::testing::ValuesIn(kernel_test::AllVariants()),
                         kernel_test::ParamName);

}  // namespace
}  // namespace onemodel
