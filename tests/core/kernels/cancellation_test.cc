// Cancellation in kernels (core/common/cancellation.h): with the thread's CancelToken
// cancelled, long kernels stop before their first block and leave the output as it was (MatMul
// on each of its paths: direct tiles, BLAS, strided loop; the pooling and conv kernels); OpenBLAS
// MatMul split into row blocks gives the bits of one sgemm call; the exact convolution and
// pooling kernels stop soon after a cancel that comes while they run, even on one image or
// within one huge window.
#include "core/common/cancellation.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <span>
#include <utility>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/internal/matmul.h"
#include "core/kernels/reference_kernels.h"
#include "core/memory/buffer_pool.h"
#include "tests/common/cancelled_after.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

// Every value of `t` is 7 (the fill before a cancelled kernel).
bool Untouched(const Tensor& t) {
  for (float v : t.Data<float>()) {
    if (v != 7.0f) return false;
  }
  return true;
}

// Every variant, the reference included (kernel_variants.h).
class CancellationTest : public ::testing::TestWithParam<kernel_test::Variant> {};

TEST_P(CancellationTest, CancelledKernelsLeaveTheirOutputAlone) {
  BufferPool pool;
  const TensorKernels* k = GetParam().kernels;
  Tensor a = Tensor::Empty(Shape{64, 256}, DType::kFloat, pool);
  Tensor b = Tensor::Empty(Shape{256, 64}, DType::kFloat, pool);
  Tensor bt = Tensor::Empty(Shape{64, 256}, DType::kFloat, pool);  // b's columns strided: BLAS
  Tensor x = Tensor::Empty(Shape{4, 4, 32, 32}, DType::kFloat, pool);
  Tensor one = Tensor::Empty(Shape{1, 1}, DType::kFloat, pool);  // broadcast: the strided path
  one.Fill(1.0f);
  a.Fill(1.0f);
  b.Fill(2.0f);
  bt.Fill(2.0f);
  x.Fill(3.0f);
  CancelToken token;
  token.Cancel(1);
  Tensor product = Tensor::Empty(Shape{64, 64}, DType::kFloat, pool);
  Tensor blas = Tensor::Empty(Shape{64, 64}, DType::kFloat, pool);
  Tensor strided = Tensor::Empty(Shape{64, 64}, DType::kFloat, pool);
  Tensor negated = Tensor::Empty(a.shape(), DType::kFloat, pool);
  Tensor sum = Tensor::Empty(a.shape(), DType::kFloat, pool);
  Tensor pooled = Tensor::Empty(Shape{4, 4, 16, 16}, DType::kFloat, pool);
  Tensor averaged = Tensor::Empty(Shape{4, 4, 16, 16}, DType::kFloat, pool);
  const Tensor w = x.Slice(0, 0, 2).Slice(2, 0, 3).Slice(3, 0, 3);  // (2, 4, 3, 3)
  Tensor convolved = Tensor::Empty(Shape{4, 2, 30, 30}, DType::kFloat, pool);
  Tensor grad_x = Tensor::Empty(x.shape(), DType::kFloat, pool);
  Tensor grad_w = Tensor::Empty(w.shape(), DType::kFloat, pool);
  Tensor scratch = Tensor::Empty(Shape{k->Conv2dScratchFloats(x.shape(), w.shape(), {}) + 1},
                                 DType::kFloat, pool);
  for (Tensor* t : {&product, &blas, &strided, &negated, &sum, &pooled, &averaged, &convolved,
                    &grad_x, &grad_w}) {
    t->Fill(7.0f);
  }
  {
    const CancelScope scope(&token);
    k->MatMul(a, b, product);
    k->MatMul(a, bt.Transpose(0, 1), blas);
    k->MatMul(one.Expand(Shape{64, 256}), one.Expand(Shape{256, 64}), strided);
    k->Unary(UnaryOp::kNeg, a, negated);
    k->Binary(BinaryOp::kAdd, a, a, sum);
    k->MaxPool2d(x, {.kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2}, pooled, nullptr);
    k->AvgPool2d(x, {.kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2}, averaged);
    k->Conv2d(x, w, nullptr, {}, convolved, scratch.MutableData<float>());
    k->Conv2dBackwardInput(convolved, w, {}, grad_x, scratch.MutableData<float>());
    k->Conv2dBackwardWeight(convolved, x, {}, grad_w, scratch.MutableData<float>());
  }
  for (const Tensor* t : {&product, &blas, &strided, &negated, &sum, &pooled, &averaged, &convolved,
                          &grad_x, &grad_w}) {
    EXPECT_TRUE(Untouched(*t));
  }
  EXPECT_EQ(CurrentCancelToken(), nullptr);
  k->MatMul(a, b, product);  // no token: computed
  EXPECT_EQ(product.Data<float>()[0], 512.0f);
}

// Output rows over stride-0 views (no memory) or a strided slice of 4 MiB, cancelled 200 ms
// in, in every variant: the fast AvgPool2d's three loops (rows of unit-stride columns, the
// channel-stride-1 row, any strides) and MaxPool2d's. Before, the fast pooling loops looked
// only between output rows, so one GlobalAvgPool2d of a 46340 x 46340 view ran for minutes
// past its deadline (hostile tester, 2026-12-06).
TEST_P(CancellationTest, HugeWindowsStopSoonAfterTheCancel) {
  BufferPool pool;
  const TensorKernels* k = GetParam().kernels;
  Tensor row = Tensor::Empty(Shape{1, 1, 1, 1024}, DType::kFloat, pool);
  Tensor channels = Tensor::Empty(Shape{1, 16, 1, 1}, DType::kFloat, pool);
  Tensor data = Tensor::Empty(Shape{1, 1, 1, 1 << 20}, DType::kFloat, pool);  // 4 MiB, real
  row.Fill(1.0f);
  channels.Fill(1.0f);
  data.Fill(1.0f);
  struct Case {
    const char* name;
    Tensor x;
    Shape out;
    int32_t kernel_h, kernel_w;
  };
  // Each input is under 2^31 elements (the shape limit); the windows overlap, so one output
  // row reads 2^31 to 2^45 of them.
  const Case cases[] = {
      {"unit-stride rows", row.Expand(Shape{1, 1, (1 << 21) - 1, 1024}), Shape{1, 1, 1, 9},
       (1 << 21) - 1, 1016},
      {"channel stride 1", channels.Expand(Shape{1, 16, 2048, 65535}), Shape{1, 16, 1, 32768}, 2048,
       32768},
      {"every stride 0", row.Slice(3, 0, 1).Expand(Shape{1, 1, 46340, 46340}), Shape{1, 1, 1, 1},
       46340, 46340},
      {"a real row, every other element", data.Slice(3, 0, 1 << 20, 2),
       Shape{1, 1, 1, (1 << 18) + 1}, 1, 1 << 18},
  };
  for (const Case& c : cases) {
    Tensor out = Tensor::Empty(c.out, DType::kFloat, pool);
    const AvgPool2dParams avg{.kernel_h = c.kernel_h, .kernel_w = c.kernel_w};
    const MaxPool2dParams max{.kernel_h = c.kernel_h, .kernel_w = c.kernel_w};
    const std::pair<const char*, std::function<void()>> ops[] = {
        {"AvgPool2d", [&] { k->AvgPool2d(c.x, avg, out); }},
        {"MaxPool2d", [&] { k->MaxPool2d(c.x, max, out, nullptr); }},
    };
    for (const auto& [op, work] : ops) {
      const auto took = test::CancelledAfter(std::chrono::milliseconds(200), work);
      EXPECT_LT(took, std::chrono::seconds(2))
          << op << ", " << c.name << ": " << std::chrono::duration<double>(took).count() << " s";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, CancellationTest, ::testing::ValuesIn(kernel_test::AllVariants()),
                         kernel_test::ParamName);

// Minutes of exact work on one image (stride-0 views of one value: no memory), cancelled
// 200 ms in. Before, the exact convolution kernels looked only between images (the weight
// gradient between filters) and the pooling kernels only between output elements, so these
// ran to their end.
TEST(ExactKernelCancellationTest, LongWorkOnOneImageStopsSoonAfterTheCancel) {
  BufferPool pool;
  const ReferenceKernels k;
  Tensor one = Tensor::Empty(Shape{1, 1, 1, 1}, DType::kFloat, pool);
  one.Fill(1.0f);
  // 64 x 62 x 62 outputs of 4096 x 9 multiply-adds each: 9e9 in all.
  const Tensor x = one.Expand(Shape{1, 4096, 64, 64});
  const Tensor w = one.Expand(Shape{64, 4096, 3, 3});
  Tensor y = Tensor::Empty(Shape{1, 64, 62, 62}, DType::kFloat, pool);
  Tensor grad_x = Tensor::Empty(x.shape(), DType::kFloat, pool);
  Tensor grad_w = Tensor::Empty(w.shape(), DType::kFloat, pool);
  const Tensor g = one.Expand(y.shape());
  // Weight gradient: each of its elements sums 2^30 products over one huge output gradient.
  const Tensor big_x = one.Expand(Shape{1, 1, 32768, 32768});
  Tensor small_w = Tensor::Empty(Shape{1, 1, 1, 1}, DType::kFloat, pool);
  // One output whose window (or kernel) holds 2^31 - 2^15 elements.
  const Tensor wide = one.Expand(Shape{1, 1, 32768, 65535});
  Tensor pooled = Tensor::Empty(Shape{1, 1, 1, 1}, DType::kFloat, pool);
  const std::pair<const char*, std::function<void()>> cases[] = {
      {"Conv2d", [&] { k.Conv2d(x, w, nullptr, {}, y, {}); }},
      {"Conv2d, one huge kernel", [&] { k.Conv2d(wide, wide, nullptr, {}, pooled, {}); }},
      {"Conv2dBackwardInput", [&] { k.Conv2dBackwardInput(g, w, {}, grad_x, {}); }},
      {"Conv2dBackwardWeight", [&] { k.Conv2dBackwardWeight(g, x, {}, grad_w, {}); }},
      {"Conv2dBackwardWeight, one huge image",
       [&] { k.Conv2dBackwardWeight(big_x, big_x, {}, small_w, {}); }},
      {"MaxPool2d",
       [&] { k.MaxPool2d(wide, {.kernel_h = 32768, .kernel_w = 65535}, pooled, nullptr); }},
      {"AvgPool2d", [&] { k.AvgPool2d(wide, {.kernel_h = 32768, .kernel_w = 65535}, pooled); }},
  };
  for (const auto& [name, work] : cases) {
    const auto took = test::CancelledAfter(std::chrono::milliseconds(200), work);
    EXPECT_LT(took, std::chrono::seconds(2))
        << name << " took " << std::chrono::duration<double>(took).count() << " s";
  }
}

TEST(BlasCancellationTest, MatMulInRowBlocksGivesTheBitsOfOneCall) {
  // n * k = 2^26, so the rows go in blocks of 64: 64 and 2 (about 260 MiB in all).
  constexpr int64_t m = 66, k = 4096, n = 16384;
  BufferPool pool;
  Tensor a = Tensor::Empty(Shape{m, k}, DType::kFloat, pool);
  Tensor at = Tensor::Empty(Shape{k, m}, DType::kFloat, pool);  // a transposed, as a view
  Tensor b = Tensor::Empty(Shape{k, n}, DType::kFloat, pool);
  for (Tensor* t : {&a, &at, &b}) {
    const std::span<float> values = t->MutableData<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 37) / 16 - 1;
  }
  for (const Tensor& left : {a, at.Transpose(0, 1)}) {
    Tensor blocked = Tensor::Empty(Shape{m, n}, DType::kFloat, pool);
    internal::MatMulBlas(left, b, blocked);
    std::vector<float> whole(static_cast<size_t>(m * n));
    const bool transposed = left.strides()[0] == 1;
    cblas_sgemm(CblasRowMajor, transposed ? CblasTrans : CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                left.Storage<float>().data() + left.offset(), transposed ? m : k,
                b.Data<float>().data(), n, 0.0f, whole.data(), n);
    const std::span<const float> got = blocked.Data<float>();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), whole.begin())) << "transposed " << transposed;
  }
}

}  // namespace
}  // namespace onemodel
