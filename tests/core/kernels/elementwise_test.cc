// Differential tests of every fast elementwise kernel variant against ReferenceKernels.
#include <gtest/gtest.h>

#include <bit>
#include <thread>

#include "core/kernels/accuracy.h"
#include "core/kernels/reference_kernels.h"
#include "core/kernels/scalar_ops.h"
#include "tests/core/kernels/kernel_test_util.h"

namespace onemodel {
namespace {

using kernel_test::FastVariants;
using kernel_test::Placed;
using kernel_test::RandomLayout;
using kernel_test::RandomShape;

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// Arithmetic ops on two NaNs may return either payload (IEEE 754 leaves it open and the
// compiler may commute the scalar reference); every other result must match bit for bit.
bool SameResult(BinaryOp op, float a, float b, float fast, float ref) {
  if (op == BinaryOp::kPow) return Bits(fast) == Bits(ref);
  const bool arithmetic = op != BinaryOp::kMax && op != BinaryOp::kMin;
  if (arithmetic && std::isnan(a) && std::isnan(b)) return std::isnan(fast) && std::isnan(ref);
  return Bits(fast) == Bits(ref);
}

class ElementwiseTest : public ::testing::Test {
 protected:
  BufferPool pool_;
  ThreadPool threads_{2};
  ReferenceKernels reference_;
};

TEST_F(ElementwiseTest, EveryBinaryOpOfEveryVariantMatchesTheReference) {
  std::mt19937 rng(1);
  for (const FastKernels& fast : FastVariants(threads_)) {
    for (BinaryOp op : kAllBinaryOps) {
      for (int c = 0; c < 150; ++c) {
        const Shape shape = RandomShape(rng);
        Placed a = RandomLayout(shape, rng, pool_, true);
        Placed b = RandomLayout(shape, rng, pool_, true);
        kernel_test::FillRandom(a.view, rng);
        kernel_test::FillRandom(b.view, rng);
        Placed out = RandomLayout(shape, rng, pool_, false);
        Tensor ref = Tensor::Empty(shape, DType::kFloat, pool_);
        fast.Binary(op, a.view, b.view, out.view);
        reference_.Binary(op, a.view, b.view, ref);
        ASSERT_EQ(kernel_test::SentinelDamage(out), 0)
            << fast.name() << " " << BinaryOpName(op) << " wrote outside " << out.view.Describe();
        kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
          const float x = a.view.At<float>(i), y = b.view.At<float>(i);
          const float f = out.view.At<float>(i), r = ref.At<float>(i);
          ASSERT_TRUE(SameResult(op, x, y, f, r))
              << fast.name() << " " << BinaryOpName(op) << "(" << x << ", " << y << "): fast " << f
              << " (0x" << std::hex << Bits(f) << "), reference " << r << " (0x" << Bits(r) << ")"
              << std::dec << " at shape " << shape.ToString();
        });
      }
    }
  }
}

TEST_F(ElementwiseTest, EveryUnaryOpOfEveryVariantIsExactOrWithinItsBound) {
  std::mt19937 rng(2);
  for (const FastKernels& fast : FastVariants(threads_)) {
    for (UnaryOp op : kAllUnaryOps) {
      for (int c = 0; c < 150; ++c) {
        const Shape shape = RandomShape(rng);
        Placed x = RandomLayout(shape, rng, pool_, true);
        kernel_test::FillRandom(x.view, rng);
        Placed out = RandomLayout(shape, rng, pool_, false);
        Tensor ref = Tensor::Empty(shape, DType::kFloat, pool_);
        fast.Unary(op, x.view, out.view);
        reference_.Unary(op, x.view, ref);
        ASSERT_EQ(kernel_test::SentinelDamage(out), 0)
            << fast.name() << " " << UnaryOpName(op) << " wrote outside " << out.view.Describe();
        kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
          const float v = x.view.At<float>(i), f = out.view.At<float>(i), r = ref.At<float>(i);
          ASSERT_TRUE(WithinAccuracy(op, v, f, r))
              << fast.name() << " " << UnaryOpName(op) << "(" << v << " = 0x" << std::hex << Bits(v)
              << "): fast " << f << " (0x" << Bits(f) << "), reference " << r << " (0x" << Bits(r)
              << ")" << std::dec << ", " << UlpDistance(f, r) << " ulp";
        });
      }
    }
  }
}

TEST_F(ElementwiseTest, SpecialValuesOfTheTranscendentalOps) {
  const float specials[] = {0.0f,    -0.0f,     INFINITY,  -INFINITY,  NAN,         -NAN,    1e-45f,
                            -1e-45f, 88.72283f, 88.72284f, -87.33655f, -103.97208f, -104.5f, 1.0f,
                            -1.0f,   20.0f,     -20.0f,    3.4e38f,    -3.4e38f,    1e-20f};
  const int64_t n = std::size(specials);
  Tensor x = Tensor::Empty(Shape{n}, DType::kFloat, pool_);
  std::copy(std::begin(specials), std::end(specials), x.MutableData<float>().begin());
  Tensor out = Tensor::Empty(Shape{n}, DType::kFloat, pool_);
  for (const FastKernels& fast : FastVariants(threads_)) {
    for (UnaryOp op : kAllUnaryOps) {
      fast.Unary(op, x, out);
      for (int64_t i = 0; i < n; ++i) {
        const float v = specials[i], f = out.Data<float>()[static_cast<size_t>(i)];
        const float r = scalar::Unary(op, v);
        EXPECT_TRUE(WithinAccuracy(op, v, f, r))
            << fast.name() << " " << UnaryOpName(op) << "(" << v << "): " << f << " vs " << r;
      }
    }
  }
}

TEST_F(ElementwiseTest, MaxMinAndReluPropagateNaNAndKeepTies) {
  const ReferenceKernels& k = reference_;
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

TEST_F(ElementwiseTest, LargeOperandsSplitOverThreadsGiveTheSameBitsAsOneThread) {
  std::mt19937 rng(3);
  ThreadPool one(1);
  const Shape shape{3, 70001};  // above the grain, odd so pieces leave tails
  Tensor a = Tensor::Empty(shape, DType::kFloat, pool_);
  Tensor b = Tensor::Empty(Shape{70001}, DType::kFloat, pool_);
  kernel_test::FillRandom(a, rng);
  kernel_test::FillRandom(b, rng);
  const Tensor row = b.Expand(shape);  // a row-broadcast operand
  Tensor o1 = Tensor::Empty(shape, DType::kFloat, pool_);
  Tensor o2 = Tensor::Empty(shape, DType::kFloat, pool_);
  std::vector<FastKernels> singles = FastVariants(one), doubles = FastVariants(threads_);
  for (size_t v = 0; v < singles.size(); ++v) {
    for (BinaryOp op : kAllBinaryOps) {
      singles[v].Binary(op, a, row, o1);
      doubles[v].Binary(op, a, row, o2);
      // Element by element: where both inputs are NaN, which payload an arithmetic op returns
      // is open (SameResult), and the compiler may commute the vector add in one code path.
      kernel_test::ForEachIndex(shape, [&](std::span<const int64_t> i) {
        ASSERT_TRUE(
            SameResult(op, a.At<float>(i), row.At<float>(i), o2.At<float>(i), o1.At<float>(i)))
            << singles[v].name() << " " << BinaryOpName(op) << " at " << FormatExtents(i);
      });
    }
    for (UnaryOp op : kAllUnaryOps) {
      singles[v].Unary(op, a, o1);
      doubles[v].Unary(op, a, o2);
      ASSERT_TRUE(std::equal(o1.Data<float>().begin(), o1.Data<float>().end(),
                             o2.Data<float>().begin(),
                             [](float x, float y) { return Bits(x) == Bits(y); }))
          << singles[v].name() << " " << UnaryOpName(op);
    }
  }
}

TEST_F(ElementwiseTest, ManyThreadsCallingTheKernelsAtOnceGetCorrectResults) {
  const FastKernels fast(BestTarget(), threads_);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      BufferPool local;
      Tensor a = Tensor::Empty(Shape{100000}, DType::kFloat, local);
      Tensor out = Tensor::Empty(Shape{100000}, DType::kFloat, local);
      a.Fill(static_cast<float>(t));
      for (int i = 0; i < 20; ++i) {
        fast.Binary(BinaryOp::kAdd, a, a, out);
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

TEST_F(ElementwiseTest, OutputVersionIsBumpedOncePerCall) {
  Tensor a = Tensor::Empty(Shape{8}, DType::kFloat, pool_, /*zero=*/true);
  Tensor out = Tensor::Empty(Shape{8}, DType::kFloat, pool_);
  const uint64_t before = out.version();
  for (const FastKernels& fast : FastVariants(threads_)) fast.Unary(UnaryOp::kExp, a, out);
  EXPECT_EQ(out.version(), before + FastVariants(threads_).size());
}

}  // namespace
}  // namespace onemodel
