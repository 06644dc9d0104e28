// Cancellation inside one long row (core/common/cancellation.h, ForEachChunk): with the
// thread's CancelToken cancelled while they run, the losses, Softmax, LogSoftmax and CumSum
// stop soon after, even when all their work is one row of up to 2^31 - 1 elements (inputs are
// broadcast views of one value: no memory). Before, they looked at the token once per row, so
// a hostile client's one-row CrossEntropy held its session for 20-30 s past its deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <utility>

#include "core/autograd/engine.h"
#include "core/ops/cumsum.h"
#include "core/ops/loss.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
#include "tests/common/cancelled_after.h"
#include "tests/core/ops/exact_op_test.h"

namespace onemodel {
namespace {

using std::chrono::milliseconds;

class OpCancellationTest : public ExactOpTest {
 protected:
  Tensor One() {
    Tensor one = Tensor::Empty(Shape{1, 1}, DType::kFloat, pool_);
    one.Fill(0.5f);
    return one;
  }
  Tensor ClassZero() {
    Tensor t = Tensor::Empty(Shape{1}, DType::kInt64, pool_);
    t.MutableData<int64_t>()[0] = 0;
    return t;
  }
  // Expects each case, cancelled `delay` in, to end within `bound` of what it takes when
  // cancelled before it starts (its output's allocation and fill, which come before any look
  // at the token and, for 256 MiB under a loaded CI with the checked build's fill, took
  // longer than the bound by themselves).
  void ExpectStopped(milliseconds delay, milliseconds bound,
                     std::initializer_list<std::pair<const char*, std::function<void()>>> cases) {
    for (const auto& [name, work] : cases) {
      const auto before = PreCancelled(work);
      const auto took = test::CancelledAfter(delay, work);
      EXPECT_LT(took - before, bound) << name << " took " << Seconds(took) << " s, "
                                      << Seconds(before) << " s when cancelled before it started";
    }
  }
  // How long `work` takes under a token cancelled before it starts.
  static std::chrono::steady_clock::duration PreCancelled(const std::function<void()>& work) {
    CancelToken token;
    token.Cancel(1);
    const CancelScope scope(&token);
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::steady_clock::now() - start;
  }
  static double Seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }
};

// One row of 2^31 - 1 classes (seconds to tens of seconds of work each); scalar outputs.
TEST_F(OpCancellationTest, LossesOverOneHugeRowStopSoonAfterTheCancel) {
  const Tensor one = One();
  const Tensor logits = one.Expand(Shape{1, (int64_t{1} << 31) - 1});
  const Tensor target = ClassZero();
  ExpectStopped(
      milliseconds(200), milliseconds(2000),
      {{"CrossEntropy", [&] { ops::CrossEntropy(logits, target, nullptr, {}, ctx_); }},
       {"CrossEntropy, label_smoothing",
        [&] { ops::CrossEntropy(logits, target, nullptr, {.label_smoothing = 0.1f}, ctx_); }},
       {"MSELoss", [&] { ops::MseLoss(logits, logits, ops::Reduction::kSum, ctx_); }}});
}

// One row of 2^26 (256 MiB outputs, seconds of work in these builds), cancelled 100 ms in.
// (CrossEntropy's backward loops over a row through the same ForEachClass as its forward, but it
// zero-fills its 256 MiB gradient first, which under a loaded CI took longer than the bound by
// itself.)
TEST_F(OpCancellationTest, SoftmaxAndCumSumOverOneLongRowStopSoon) {
  const Tensor one = One();
  const Shape row{1, int64_t{1} << 26};
  const Tensor x = one.Expand(row);
  const Tensor tracked = one.WithRequiresGrad();
  const Tensor wide = ops::Expand(tracked, row, ctx_);
  const Tensor y = ops::Softmax(wide, 1, ctx_);
  const Tensor g = one.Expand(row);
  const std::vector<Tensor> wrt = {tracked};
  ExpectStopped(
      milliseconds(100), milliseconds(600),
      {{"Softmax", [&] { ops::Softmax(x, 1, ctx_); }},
       {"LogSoftmax", [&] { ops::LogSoftmax(x, 1, ctx_); }},
       {"CumSum", [&] { ops::CumSum(x, 1, false, false, ctx_); }},
       {"Softmax backward", [&] { Backward(y, &g, wrt, ctx_, {.retain_graph = true}); }}});
}

}  // namespace
}  // namespace onemodel
