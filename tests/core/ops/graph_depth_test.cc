// Graphs as deep as memory allows (issue 19, finding 1): a chain of millions of backward
// records is differentiated and freed in loops, never one stack frame per record, which
// overflowed an 8 MiB stack near 200k records before.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/autograd/engine.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/elementwise.h"
#include "tests/core/ops/exact_op_test.h"

namespace onemodel {
namespace {

// Set by tests/core/ops/CMakeLists.txt: 10 million, fewer under sanitizers (which also make
// each recursive frame several times larger, so the old recursion failed sooner there).
constexpr int64_t kDeepChain = ONEMODEL_DEEP_CHAIN_RECORDS;
// Past the ~200k records that overflowed an 8 MiB stack in a release build (fewer in Debug and
// sanitizer builds, whose frames are larger), built by the real operation.
constexpr int64_t kOpsChain = 300000;

// Neg's gradient rule, for records built here directly: a new tensor holding -grad_output.
void NegBackward(const BackwardRecord&, const Tensor& grad_output, const OpContext& ctx,
                 std::span<Tensor> grads) {
  grads[0] = Tensor::Empty(grad_output.shape(), DType::kFloat, ctx.allocator);
  grads[0].Fill(-grad_output.At<float>({0}));
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class GraphDepthTest : public ExactOpTest {
 protected:
  // `count` Neg operations, each on the previous one's output; only the records stay (each
  // output's buffer goes back once the next is made: Neg saves nothing).
  Tensor NegOps(const Tensor& x, int64_t count) {
    Tensor y = x;
    for (int64_t i = 0; i < count; ++i) {
      Tensor next = ops::Neg(y, ctx_);
      if (i > 0) y.Dispose();
      y = next;
    }
    return y;
  }
  // Differentiates `y` (a chain of `count` negations of x) with respect to x, then drops the
  // last reference to the chain; records the times as test properties named after `what`.
  void DifferentiateAndDrop(Tensor& y, const Tensor& x, int64_t count, const std::string& what) {
    auto start = std::chrono::steady_clock::now();
    const std::vector<Tensor> g = Backward(y, nullptr, std::vector<Tensor>{x}, ctx_);
    RecordProperty(what + "_backward_seconds", std::to_string(SecondsSince(start)));
    EXPECT_EQ(g[0].At<float>({0}), count % 2 == 0 ? 1.0f : -1.0f);
    start = std::chrono::steady_clock::now();
    y = Tensor();  // the last reference to the whole chain
    RecordProperty(what + "_free_seconds", std::to_string(SecondsSince(start)));
    EXPECT_EQ(x.At<float>({0}), 3.0f);
  }

};

TEST_F(GraphDepthTest, AChainOfMillionsOfRecordsIsDifferentiatedAndFreed) {
  const Tensor x = Filled(Shape{1}, 3).WithRequiresGrad();
  const auto start = std::chrono::steady_clock::now();
  Tensor y = x;
  for (int64_t i = 0; i < kDeepChain; ++i) {
    auto record = std::make_shared<BackwardRecord>(OpKind::kNeg, &NegBackward);
    record->AddInput(y);
    y = x.WithAutogradNode(std::move(record));
  }
  RecordProperty("records", std::to_string(kDeepChain));
  RecordProperty("build_seconds", std::to_string(SecondsSince(start)));
  DifferentiateAndDrop(y, x, kDeepChain, "deep");
}

TEST_F(GraphDepthTest, AChainOfNegOperationsIsDifferentiatedAndFreed) {
  const Tensor x = Filled(Shape{1}, 3).WithRequiresGrad();
  Tensor y = NegOps(x, kOpsChain);
  DifferentiateAndDrop(y, x, kOpsChain, "ops");
  y = NegOps(x, kOpsChain);
  y.Dispose();
  y = Tensor();  // dropped without a backward
}

TEST_F(GraphDepthTest, SharedAndBranchingGraphsAreFreedCompletely) {
  // Each step uses the previous result twice (Add of it and its GELU, which owns a tensor), so
  // records are reached through several references; every one must still be destroyed, which
  // the owned tensors going back to the pool shows.
  const Tensor x = Filled(Shape{4}, 0.5f).WithRequiresGrad();
  const int64_t rented = pool_.Stats().rented_buffers;
  {
    Tensor y = x;
    std::vector<Tensor> kept;  // outside references to some records in the middle
    for (int i = 0; i < 100000; ++i) {
      y = ops::Add(ops::Gelu(y, ctx_), y, ctx_);
      if (i % 25000 == 0) kept.push_back(y);
    }
    EXPECT_GT(pool_.Stats().rented_buffers, rented + 100000);
    y = Tensor();
    EXPECT_GT(pool_.Stats().rented_buffers, rented + 25000) << "kept records stay alive";
    kept.clear();
  }
  // The outputs themselves were never disposed: only the records' owned tensors come back.
  const int64_t outputs = 2 * 100000;
  EXPECT_EQ(pool_.Stats().rented_buffers, rented + outputs);
}

}  // namespace
}  // namespace onemodel
