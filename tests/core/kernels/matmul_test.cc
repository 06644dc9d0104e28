// MatMul over the variant table (kernel_variants.h). Every variant: a known product, an empty
// inner dimension, subnormal products kept. Every fast variant against the reference within
// MatMulErrorBound (accuracy.h, docs/kernels.md) on random strided operands, some with
// products that underflow, and on shapes at and around the direct tiles' edges and
// thresholds; and the two edges of that bound, on each path (direct tiles, BLAS, strided
// loop): products that underflow are lost (inside the bound's absolute term only) and float
// partial sums overflow (where the bound says it does not hold). The direct tiles of every
// SIMD target against an in-order loop, bit for bit. The reference's side of both edges, and
// the BLAS library's settings and kernel.
#include "core/kernels/internal/matmul.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/kernels/accuracy.h"
#include "core/kernels/blas.h"
#include "tests/core/kernels/kernel_test_util.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

using kernel_test::Placed;
using kernel_test::RandomLayout;
using kernel_test::Variant;

const float kMinSubnormal = std::ldexp(1.0f, -149);

// A row-major rows x cols matrix holding `values`.
Tensor Matrix(int64_t rows, int64_t cols, std::initializer_list<float> values, Allocator& alloc) {
  Tensor t = Tensor::Empty(Shape{rows, cols}, DType::kFloat, alloc);
  std::copy(values.begin(), values.end(), t.MutableData<float>().begin());
  return t;
}

// The three ways FastKernels::MatMul runs: the direct tiles for small products with unit
// column strides and at least kDirectMinColumns columns, BLAS for other row-major or
// transposed operands, its float strided loop for operands BLAS cannot take (here b is one
// element broadcast, stride 0).
enum class Path { kDirect, kBlas, kStridedLoop };
constexpr Path kPaths[] = {Path::kDirect, Path::kBlas, Path::kStridedLoop};
const char* PathName(Path p) {
  return p == Path::kDirect ? "direct tiles" : p == Path::kBlas ? "BLAS" : "strided loop";
}

// k x n columns of `value` laid out for `path` (n = kDirectMinColumns on the direct path, else
// 1); the tests look at column 0 of the product.
Tensor Column(int64_t k, float value, Path path, Allocator& alloc) {
  const int64_t n = path == Path::kDirect ? internal::kDirectMinColumns : 1;
  Tensor t =
      Tensor::Empty(path == Path::kStridedLoop ? Shape{1, 1} : Shape{k, n}, DType::kFloat, alloc);
  t.Fill(value);
  return t.Expand(Shape{k, n});
}

// a x b through `kernels` into a new tensor.
Tensor Product(const TensorKernels& kernels, const Tensor& a, const Tensor& b, Allocator& alloc) {
  Tensor out = Tensor::Empty(Shape{a.shape()[0], b.shape()[1]}, DType::kFloat, alloc);
  kernels.MatMul(a, b, out);
  return out;
}

// sum_k |a_ik| |b_kj| in double for every element of a x b, in row-major order of the output.
std::vector<double> Magnitudes(const Tensor& a, const Tensor& b, Allocator& alloc) {
  const Tensor ca = a.Contiguous(alloc), cb = b.Contiguous(alloc);
  const int r = a.rank();
  const int64_t m = a.shape()[r - 2], k = a.shape()[r - 1], n = b.shape()[r - 1];
  int64_t batch = 1;
  for (int d = 0; d < r - 2; ++d) batch *= a.shape()[d];
  const auto pa = ca.Data<float>(), pb = cb.Data<float>();
  std::vector<double> out;
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          sum += std::fabs(double{pa[static_cast<size_t>((s * m + i) * k + kk)]}) *
                 std::fabs(double{pb[static_cast<size_t>((s * k + kk) * n + j)]});
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

TEST(MatMulReferenceTest, AccumulatesInDouble) {
  // 1 + 2^-30 * 2^30 terms of 2^-30: float accumulation would lose every small term.
  BufferPool pool;
  const int64_t k = 1025;
  Tensor a = Tensor::Empty(Shape{1, k}, DType::kFloat, pool);
  Tensor b = Tensor::Empty(Shape{k, 1}, DType::kFloat, pool);
  a.Fill(1.0f);
  b.Fill(std::ldexp(1.0f, -26));
  b.Set<float>({0, 0}, 1.0f);
  const Tensor out = Product(ReferenceKernels(), a, b, pool);
  EXPECT_EQ(out.At<float>({0, 0}), 1.0f + 1024 * std::ldexp(1.0f, -26));
}

TEST(MatMulReferenceTest, SumsProductsThatUnderflowInFloatExactly) {
  // Each product is 2^-150, below float's smallest subnormal; exact in double.
  BufferPool pool;
  const Tensor a = Matrix(1, 2, {kMinSubnormal, kMinSubnormal}, pool);
  const Tensor out = Product(ReferenceKernels(), a, Column(2, 0.5f, Path::kBlas, pool), pool);
  EXPECT_EQ(out.At<float>({0, 0}), kMinSubnormal);
}

TEST(MatMulReferenceTest, PartialSumsDoNotOverflow) {
  // FLT_MAX + FLT_MAX overflows float, not double.
  BufferPool pool;
  const Tensor a = Matrix(1, 3, {FLT_MAX, FLT_MAX, -FLT_MAX}, pool);
  const Tensor out = Product(ReferenceKernels(), a, Column(3, 1.0f, Path::kBlas, pool), pool);
  EXPECT_EQ(out.At<float>({0, 0}), FLT_MAX);
}

TEST(MatMulBlasTest, DescriptionNamesTheLibraryAndKernel) {
  const std::string d = BlasDescription();
  EXPECT_NE(d.find("OpenBLAS"), std::string::npos) << d;
  EXPECT_NE(d.find("kernel"), std::string::npos) << d;
}

// tests/core/kernels/CMakeLists.txt runs the MatMul tests again with each OpenBLAS kernel
// family the CPU has forced through OPENBLAS_CORETYPE; this says the library obeyed.
TEST(MatMulBlasTest, RunsTheKernelOpenBlasCoreTypeForces) {
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced == nullptr) GTEST_SKIP() << "OPENBLAS_CORETYPE is not set: OpenBLAS picks";
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string d = BlasDescription();
  EXPECT_NE(lower(d).find("kernel " + lower(forced)), std::string::npos) << d;
}

TEST(MatMulBlasTest, ThreadsCanBeSetAndRestored) {
  const int initial = BlasThreads();
  SetBlasThreads(1);
  EXPECT_EQ(BlasThreads(), 1);
  SetBlasThreads(0);
  EXPECT_EQ(BlasThreads(), initial);
}

// Every variant, the reference included.
class MatMulTest : public ::testing::TestWithParam<Variant> {
 protected:
  const TensorKernels& kernels() const { return *GetParam().kernels; }
  BufferPool pool_;
};

TEST_P(MatMulTest, ComputesAKnownProduct) {
  const Tensor a = Matrix(2, 3, {1, 2, 3, 4, 5, 6}, pool_);
  const Tensor b = Matrix(3, 2, {7, 8, 9, 10, 11, 12}, pool_);
  const Tensor out = Product(kernels(), a, b, pool_);
  EXPECT_EQ(std::vector<float>(out.Data<float>().begin(), out.Data<float>().end()),
            (std::vector<float>{58, 64, 139, 154}));
}

TEST_P(MatMulTest, EmptyInnerDimensionGivesZeros) {
  const Tensor a = Tensor::Empty(Shape{3, 0}, DType::kFloat, pool_);
  const Tensor b = Tensor::Empty(Shape{0, 4}, DType::kFloat, pool_);
  Tensor out = Tensor::Empty(Shape{3, 4}, DType::kFloat, pool_);
  out.Fill(7.0f);
  kernels().MatMul(a, b, out);
  for (float v : out.Data<float>()) EXPECT_EQ(v, 0.0f);
}

TEST_P(MatMulTest, SubnormalProductsAreKept) {
  // The bound's absolute term assumes gradual underflow: 2^-141 + 2^-141 is exact in float,
  // and would be 0 with subnormals flushed to zero.
  const Tensor a = Matrix(1, 2, {std::ldexp(1.0f, -140), std::ldexp(1.0f, -140)}, pool_);
  for (Path path : kPaths) {
    const Tensor out = Product(kernels(), a, Column(2, 0.5f, path, pool_), pool_);
    EXPECT_EQ(out.At<float>({0, 0}), std::ldexp(1.0f, -140)) << PathName(path);
  }
}

INSTANTIATE_TEST_SUITE_P(All, MatMulTest, ::testing::ValuesIn(kernel_test::AllVariants()),
                         kernel_test::ParamName);

// The fast variants against the reference.
class MatMulFastTest : public MatMulTest {};

TEST_P(MatMulFastTest, WithinTheBoundOfTheReferenceOnRandomStridedOperands) {
  std::mt19937 rng(5);
  const TensorKernels& reference = KernelSet::Get(KernelChoice::kExact);
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
    Placed a = RandomLayout(shape(m, k), rng, pool_, true);
    Placed b = RandomLayout(shape(k, n), rng, pool_, true);
    Placed out = RandomLayout(shape(m, n), rng, pool_, false);
    // One case in four scales a down so that most products underflow to subnormals or zero.
    const float scale = rng() % 4 == 0 ? std::ldexp(1.0f, -140) : 1.0f;
    for (Placed* p : {&a, &b}) {
      auto s = p->view.MutableStorage<float>();
      const float f = p == &a ? scale : 1.0f;
      for (int64_t at : kernel_test::OffsetsOf(p->view))
        s[static_cast<size_t>(at)] = f * value(rng);
    }
    Tensor ref = Tensor::Empty(shape(m, n), DType::kFloat, pool_);
    reference.MatMul(a.view, b.view, ref);
    kernels().MatMul(a.view, b.view, out.view);
    ASSERT_EQ(kernel_test::SentinelDamage(out), 0) << out.view.Describe();
    const std::vector<double> magnitude = Magnitudes(a.view, b.view, pool_);
    size_t e = 0;
    kernel_test::ForEachIndex(ref.shape(), [&](std::span<const int64_t> i) {
      const std::optional<double> bound = MatMulErrorBound(k, magnitude[e++]);
      ASSERT_TRUE(bound.has_value());
      ASSERT_LE(std::fabs(double{out.view.At<float>(i)} - double{ref.At<float>(i)}), *bound)
          << "m=" << m << " k=" << k << " n=" << n << " scale " << scale << " a "
          << a.view.Describe() << " b " << b.view.Describe();
    });
  }
}

TEST_P(MatMulFastTest, ProductsThatUnderflowAreLostWithinTheBoundsAbsoluteTerm) {
  // Each product 2^-149 * 0.5 = 2^-150 is a tie between 0 and 2^-149 and rounds to even, 0;
  // the reference gives 2^-149. The relative term alone (k * 2^-22 * 2^-149) would not allow it.
  const Tensor a = Matrix(1, 2, {kMinSubnormal, kMinSubnormal}, pool_);
  const double magnitude = 2 * std::ldexp(1.0, -150);
  const std::optional<double> bound = MatMulErrorBound(2, magnitude);
  ASSERT_TRUE(bound.has_value());
  EXPECT_GT(double{kMinSubnormal}, 2 * std::ldexp(1.0, -22) * magnitude);
  EXPECT_LE(double{kMinSubnormal}, *bound);
  for (Path path : kPaths) {
    const Tensor out = Product(kernels(), a, Column(2, 0.5f, path, pool_), pool_);
    EXPECT_EQ(out.At<float>({0, 0}), 0.0f) << PathName(path);
  }
}

TEST_P(MatMulFastTest, PartialSumsMayOverflowWhereTheBoundDoesNotHold) {
  // FLT_MAX + FLT_MAX overflows float: summed in that order the result is +inf, the
  // reference's FLT_MAX; summed in another order, FLT_MAX. No bound applies here.
  const Tensor a = Matrix(1, 3, {FLT_MAX, FLT_MAX, -FLT_MAX}, pool_);
  EXPECT_FALSE(MatMulErrorBound(3, 3 * double{FLT_MAX}).has_value());
  for (Path path : kPaths) {
    const float got = Product(kernels(), a, Column(3, 1.0f, path, pool_), pool_).At<float>({0, 0});
    EXPECT_TRUE(got == FLT_MAX || got == INFINITY) << PathName(path) << ": " << got;
    if (path != Path::kBlas) {
      EXPECT_EQ(got, INFINITY) << PathName(path) << " sums in order of k";
    }
  }
}

// The in-order meaning of the direct tiles for `target`: out[i, j] = (..((a_i0 b_0j) + a_i1 b_1j)
// + ..) from zero, each step one fused multiply-add where the target has FMA (AVX2, AVX-512),
// else a rounded product and a rounded sum. Strides in elements, unit column stride for b, out.
void InOrder(SimdTarget target, const internal::MatMulPlan& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const float x = p.a[i * p.sam + kk * p.sak], y = p.b[kk * p.sbk + j];
        if (target == SimdTarget::kScalar) {
          const float product = x * y;
          acc = acc + product;
        } else {
          acc = std::fma(x, y, acc);
        }
      }
      p.out[i * p.som + j] = acc;
    }
  }
}

// Values in [-1, 1) from `seed`, all distinct enough that a wrong index changes the bits.
void FillRandom(std::span<float> values, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  for (float& v : values) v = value(rng);
}

class MatMulSimdTest : public ::testing::TestWithParam<SimdTarget> {};

TEST_P(MatMulSimdTest, TilesMatchTheInOrderLoopBitForBitAndWriteOnlyTheirOutput) {
  // Shapes at and around the tile edges of every target (rows 4, 8, 6, 12, 16; vectors of 1, 8
  // and 16 lanes, up to 4 per tile), partial vectors, the 128-row chunks a partial vector is
  // copied in, k = 0; a row-major and a transposed; b and out with padded rows. The units go
  // in three calls, as three tasks would run them (splitting column blocks).
  const internal::MatMulSimd& simd = internal::MatMulSimdFor(GetParam());
  constexpr float kSentinel = -1234.5f;
  for (const int64_t m : {1, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17}) {
    for (const int64_t n : {1, 8, 9, 16, 17, 32, 33, 48, 49, 64, 65}) {
      for (const int64_t k : {0, 1, 129, 257}) {
        for (const bool transposed : {false, true}) {
          std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * (n + 3)));
          FillRandom(a, static_cast<uint32_t>(m * 1000 + n * 10 + k));
          FillRandom(b, static_cast<uint32_t>(k * 1000 + n));
          const int64_t som = n + 2;
          std::vector<float> got(static_cast<size_t>(m * som + 2), kSentinel);
          std::vector<float> want(got);
          internal::MatMulPlan plan{.a = a.data(),
                                    .sam = transposed ? 1 : k,
                                    .sak = transposed ? m : 1,
                                    .b = b.data(),
                                    .sbk = n + 3,
                                    .out = got.data() + 1,
                                    .som = som,
                                    .m = m,
                                    .k = k,
                                    .n = n};
          const int64_t units = simd.unit_count(plan);
          for (int64_t part = 0; part < 3; ++part) {
            simd.units(plan, units * part / 3, units * (part + 1) / 3);
          }
          plan.out = want.data() + 1;
          InOrder(GetParam(), plan);
          ASSERT_EQ(got, want) << "m=" << m << " k=" << k << " n=" << n
                               << (transposed ? " a transposed" : "");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, MatMulSimdTest, ::testing::ValuesIn(kernel_test::SupportedTargets()),
                         kernel_test::ParamName);

// Which path FastKernels::MatMul takes, seen in the bits: the direct tiles give the in-order
// loop's, BLAS gives one cblas_sgemm call's (products of these sizes are one call).
TEST_P(MatMulFastTest, TakesTheDirectTilesExactlyWhereTheThresholdsSay) {
  ThreadPool two(2);
  const std::unique_ptr<TensorKernels> on_two = GetParam().On(two);
  struct Case {
    int64_t m, k, n;
    bool b_transposed;
    bool direct;
  };
  const int64_t cols = internal::kDirectMinColumns;
  const int64_t max_k = internal::kDirectMaxWork / (64 * 256);
  const Case cases[] = {
      {7, 33, cols, false, true},       // the narrowest direct output
      {7, 33, cols - 1, false, false},  // too narrow: BLAS
      {7, 33, cols, true, false},       // b's columns not unit stride: BLAS
      {64, 256, 32, false, true},       // kDirectParallelWork: split over two threads
      {64, max_k, 256, false, true},    // kDirectMaxWork exactly
      {65, max_k, 256, false, false},   // above it: BLAS
  };
  static_assert(int64_t{64} * 256 * 32 == internal::kDirectParallelWork);
  for (const Case& c : cases) {
    Tensor a = Tensor::Empty(Shape{c.m, c.k}, DType::kFloat, pool_);
    Tensor b = c.b_transposed ? Tensor::Empty(Shape{c.n, c.k}, DType::kFloat, pool_).Transpose(0, 1)
                              : Tensor::Empty(Shape{c.k, c.n}, DType::kFloat, pool_);
    FillRandom(a.MutableStorage<float>(), 1);
    FillRandom(b.MutableStorage<float>(), 2);
    const Tensor got = Product(*on_two, a, b, pool_);
    std::vector<float> want(static_cast<size_t>(c.m * c.n));
    if (c.direct) {
      InOrder(*GetParam().target, {a.Data<float>().data(), c.k, 1, b.Data<float>().data(), c.n,
                                   want.data(), c.n, c.m, c.k, c.n});
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, c.b_transposed ? CblasTrans : CblasNoTrans,
                  static_cast<blasint>(c.m), static_cast<blasint>(c.n), static_cast<blasint>(c.k),
                  1.0f, a.Data<float>().data(), static_cast<blasint>(c.k),
                  b.Storage<float>().data() + b.offset(),
                  static_cast<blasint>(c.b_transposed ? c.k : c.n), 0.0f, want.data(),
                  static_cast<blasint>(c.n));
    }
    const std::span<const float> values = got.Data<float>();
    EXPECT_TRUE(std::equal(values.begin(), values.end(), want.begin()))
        << "m=" << c.m << " k=" << c.k << " n=" << c.n << (c.direct ? " direct" : " BLAS");
  }
}

INSTANTIATE_TEST_SUITE_P(Fast, MatMulFastTest, ::testing::ValuesIn(kernel_test::FastVariants()),
                         kernel_test::ParamName);

}  // namespace
}  // namespace onemodel
