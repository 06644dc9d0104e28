// MatMul: the reference against a hand-computed case, and every fast variant against the
// reference within |fast - ref| <= K * 2^-22 * sum_k |a_ik| |b_kj| on random strided operands.
#include "core/kernels/internal/matmul.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/kernels/blas.h"
#include "core/kernels/reference_kernels.h"
#include "tests/core/kernels/kernel_test_util.h"

namespace onemodel {
namespace {

using kernel_test::Placed;
using kernel_test::RandomLayout;

TEST(MatMulTest, ReferenceComputesAKnownProduct) {
  BufferPool pool;
  Tensor a = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
  Tensor b = Tensor::Empty(Shape{3, 2}, DType::kFloat, pool);
  const float av[] = {1, 2, 3, 4, 5, 6}, bv[] = {7, 8, 9, 10, 11, 12};
  std::copy(std::begin(av), std::end(av), a.MutableData<float>().begin());
  std::copy(std::begin(bv), std::end(bv), b.MutableData<float>().begin());
  Tensor out = Tensor::Empty(Shape{2, 2}, DType::kFloat, pool);
  ReferenceKernels().MatMul(a, b, out);
  EXPECT_EQ(std::vector<float>(out.Data<float>().begin(), out.Data<float>().end()),
            (std::vector<float>{58, 64, 139, 154}));
}

TEST(MatMulTest, ReferenceAccumulatesInDouble) {
  // 1 + 2^-30 * 2^30 terms of 2^-30: float accumulation would lose every small term.
  BufferPool pool;
  const int64_t k = 1025;
  Tensor a = Tensor::Empty(Shape{1, k}, DType::kFloat, pool);
  Tensor b = Tensor::Empty(Shape{k, 1}, DType::kFloat, pool);
  a.Fill(1.0f);
  b.Fill(std::ldexp(1.0f, -26));
  b.Set<float>({0, 0}, 1.0f);
  Tensor out = Tensor::Empty(Shape{1, 1}, DType::kFloat, pool);
  ReferenceKernels().MatMul(a, b, out);
  EXPECT_EQ(out.At<float>({0, 0}), 1.0f + 1024 * std::ldexp(1.0f, -26));
}

TEST(MatMulTest, EmptyInnerDimensionGivesZeros) {
  BufferPool pool;
  ThreadPool threads(2);
  Tensor a = Tensor::Empty(Shape{3, 0}, DType::kFloat, pool);
  Tensor b = Tensor::Empty(Shape{0, 4}, DType::kFloat, pool);
  const ReferenceKernels reference;
  const FastKernels fast(BestTarget(), threads);
  for (const TensorKernels* k :
       {static_cast<const TensorKernels*>(&reference), static_cast<const TensorKernels*>(&fast)}) {
    Tensor out = Tensor::Empty(Shape{3, 4}, DType::kFloat, pool);
    out.Fill(7.0f);
    k->MatMul(a, b, out);
    for (float v : out.Data<float>()) EXPECT_EQ(v, 0.0f) << k->name();
  }
}

TEST(MatMulTest, FastMatchesReferenceWithinTheBoundOnRandomStridedOperands) {
  std::mt19937 rng(5);
  BufferPool pool;
  ThreadPool threads(2);
  ReferenceKernels reference;
  FastKernels fast(BestTarget(), threads);
  std::uniform_real_distribution<float> value(-1, 1);
  for (int c = 0; c < 300; ++c) {
    const int batch_rank = static_cast<int>(rng() % 3);
    std::vector<int64_t> batch;
    for (int d = 0; d < batch_rank; ++d) batch.push_back(1 + static_cast<int64_t>(rng() % 3));
    auto dim = [&] {
      return rng() % 8 == 0 ? static_cast<int64_t>(rng() % 2)
                            : 1 + static_cast<int64_t>(rng() % (rng() % 4 == 0 ? 130 : 20));
    };
    const int64_t m = dim(), k = dim(), n = dim();
    auto shape = [&](int64_t r, int64_t cc) {
      std::vector<int64_t> e = batch;
      e.push_back(r);
      e.push_back(cc);
      return Shape(std::span<const int64_t>(e));
    };
    Placed a = RandomLayout(shape(m, k), rng, pool, true);
    Placed b = RandomLayout(shape(k, n), rng, pool, true);
    Placed out = RandomLayout(shape(m, n), rng, pool, false);
    for (Placed* p : {&a, &b}) {
      auto s = p->view.MutableStorage<float>();
      for (int64_t at : kernel_test::OffsetsOf(p->view)) s[static_cast<size_t>(at)] = value(rng);
    }
    Tensor ref = Tensor::Empty(shape(m, n), DType::kFloat, pool);
    reference.MatMul(a.view, b.view, ref);
    fast.MatMul(a.view, b.view, out.view);
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << out.view.Describe();
    kernel_test::ForEachIndex(ref.shape(), [&](std::span<const int64_t> i) {
      std::vector<int64_t> ia(i.begin(), i.end()), ib(i.begin(), i.end());
      double magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        ia.back() = kk;
        ib[ib.size() - 2] = kk;
        ib.back() = i.back();
        magnitude += std::fabs(a.view.At<float>(ia)) * std::fabs(b.view.At<float>(ib));
      }
      const double bound = static_cast<double>(k) * std::ldexp(1.0, -22) * magnitude;
      ASSERT_LE(std::fabs(double{out.view.At<float>(i)} - double{ref.At<float>(i)}), bound)
          << "m=" << m << " k=" << k << " n=" << n << " a " << a.view.Describe() << " b "
          << b.view.Describe();
    });
  }
}

TEST(MatMulTest, BlasDescriptionNamesTheLibraryAndKernel) {
  const std::string d = BlasDescription();
  EXPECT_NE(d.find("OpenBLAS"), std::string::npos) << d;
  EXPECT_NE(d.find("kernel"), std::string::npos) << d;
}

TEST(MatMulTest, BlasThreadsCanBeSetAndRestored) {
  const int initial = BlasThreads();
  SetBlasThreads(1);
  EXPECT_EQ(BlasThreads(), 1);
  SetBlasThreads(0);
  EXPECT_EQ(BlasThreads(), initial);
}

}  // namespace
}  // namespace onemodel
