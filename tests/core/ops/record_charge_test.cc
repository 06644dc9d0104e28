// Backward records are charged to a memory budget (issue 19, finding 3): ChargeGraph charges
// each new record once, destroying a record refunds it, a short budget refuses with a message
// that says what to do, and the charge covers what a record really takes on the heap.
#include <gtest/gtest.h>

#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/elementwise.h"
#include "core/ops/softmax.h"
#include "tests/common/heap_bytes.h"
#include "tests/core/ops/exact_op_test.h"

namespace onemodel {
namespace {

class RecordChargeTest : public ExactOpTest {
 protected:
  MemoryBudget budget_{"session memory limit", int64_t{1} << 20};
};

TEST_F(RecordChargeTest, EachRecordIsChargedOnceAndRefundedWhenDestroyed) {
  const Tensor x = Filled(Shape{4}, 0.5f).WithRequiresGrad();
  Tensor a = ops::Neg(x, ctx_);
  ChargeGraph(a, budget_);
  const int64_t one = GradFn(a)->Footprint();
  EXPECT_EQ(budget_.used(), one);
  ChargeGraph(a, budget_);
  EXPECT_EQ(budget_.used(), one) << "charged once";
  // Two new records behind one result (Gelu, which saves and owns, then Add of both).
  Tensor b = ops::Add(ops::Gelu(a, ctx_), a, ctx_);
  const int64_t add = GradFn(b)->Footprint();
  const int64_t gelu = static_cast<const BackwardRecord&>(*GradFn(b)->inputs()[0].node).Footprint();
  ChargeGraph(b, budget_);
  EXPECT_EQ(budget_.used(), one + add + gelu);
  EXPECT_GT(gelu, one) << "saved and owned slots count";
  a = Tensor();
  EXPECT_EQ(budget_.used(), one + add + gelu) << "b still holds a's record";
  b = Tensor();
  EXPECT_EQ(budget_.used(), 0);
  ChargeGraph(x, budget_);
  EXPECT_EQ(budget_.used(), 0) << "a leaf has no record";
}

TEST_F(RecordChargeTest, AShortBudgetRefusesWithAMessageSayingWhatToDo) {
  MemoryBudget tiny("session memory limit", 100);
  const Tensor y = ops::Neg(Filled(Shape{4}, 1).WithRequiresGrad(), ctx_);
  try {
    ChargeGraph(y, tiny);
    FAIL() << "expected MemoryLimitException";
  } catch (const MemoryLimitException& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("backward record of Neg"), std::string::npos) << m;
    EXPECT_NE(m.find("no_grad"), std::string::npos) << m;
    EXPECT_NE(m.find("session memory limit of 100 B"), std::string::npos) << m;
  }
  EXPECT_EQ(tiny.used(), 0);
}

TEST_F(RecordChargeTest, TheChargeCoversWhatRecordsReallyTake) {
  // Measured on glibc's heap over chains of records of three kinds: Neg (one input, nothing
  // saved), Exp (a saved slot) and Softmax (a saved slot, Ints and Floats). Each output's
  // buffer goes back to the pool's free list once the next is made, so only records grow.
  constexpr int kCount = 20000;
  struct Case {
    const char* name;
    Tensor (*op)(const Tensor&, const OpContext&);
  };
  const Case cases[] = {
      {"Neg", [](const Tensor& t, const OpContext& c) { return ops::Neg(t, c); }},
      {"Exp", [](const Tensor& t, const OpContext& c) { return ops::Exp(t, c); }},
      {"Softmax", [](const Tensor& t, const OpContext& c) { return ops::Softmax(t, 0, c, 1.0f); }},
  };
  for (const Case& c : cases) {
    MemoryBudget charged("charged", int64_t{1} << 40);
    Tensor y = c.op(Filled(Shape{4}, 0.5f).WithRequiresGrad(), ctx_);  // warms the pool
    const int64_t before = testing::HeapBytesInUse();
    for (int i = 0; i < kCount; ++i) {
      Tensor next = c.op(y, ctx_);
      y.Dispose();
      y = next;
      ChargeGraph(y, charged);
    }
    if (before < 0) GTEST_SKIP() << "no glibc heap figures under a sanitizer";
    const int64_t measured = (testing::HeapBytesInUse() - before) / kCount;
    const int64_t per_record = charged.used() / kCount;
    RecordProperty(std::string(c.name) + "_measured_bytes_per_record", std::to_string(measured));
    RecordProperty(std::string(c.name) + "_charged_bytes_per_record", std::to_string(per_record));
    EXPECT_LE(measured, per_record) << c.name;
    EXPECT_GE(measured, per_record * 2 / 3) << c.name << ": not far above the real cost";
    y.Dispose();
    y = Tensor();
    EXPECT_EQ(charged.used(), 0) << c.name;
  }
}

}  // namespace
}  // namespace onemodel
