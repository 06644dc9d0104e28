// The cost estimate that decides which session requests run on gRPC's thread (inline_cost.h):
// bytes touched from the inputs' sizes and the operations' shape rules; unbounded or unknown
// operations never run inline.
#include "server/ops/inline_cost.h"

#include <gtest/gtest.h>

#include <string>

#include "core/kernels/kernel_set.h"

namespace onemodel::server {
namespace {

class InlineCostTest : public ::testing::Test {
 protected:
  InlineCostTest() : session_(Options(), pool_, nullptr, workers_) {}
  static SessionOptions Options() {
    SessionOptions o;
    o.kernels = &KernelSet::Get(KernelChoice::kExact);
    o.max_handles = 1 << 10;
    o.memory_limit_bytes = int64_t{1} << 20;
    return o;
  }
  // A handle to a FLOAT tensor of `shape`.
  std::string Put(Shape shape) {
    return session_.handles().Add(Tensor::Empty(shape, DType::kFloat, session_.ledger()),
                                  Placement::kPool, /*owns_buffer=*/true);
  }
  // Adds an operation `op` of `inputs` (handles, or "#k" for output k) to `request`.
  static v1::Operation* Op(v1::RunRequest& request, const std::string& op,
                           std::initializer_list<std::string> inputs) {
    v1::Operation* o = request.add_operations();
    o->set_op(op);
    for (const std::string& in : inputs) {
      if (in.starts_with("#")) {
        o->add_inputs()->set_output(std::stoi(in.substr(1)));
      } else {
        o->add_inputs()->set_handle(in);
      }
    }
    return o;
  }
  int64_t Cost(const v1::RunRequest& request) { return RunCost(session_, request); }

  BufferPool pool_;
  WorkerPool workers_{1};
  Session session_;
};

TEST_F(InlineCostTest, ElementwiseOpsCountTheirInputsAndOutput) {
  const std::string a = Put(Shape{16}), b = Put(Shape{16});
  v1::RunRequest add;
  Op(add, "Add", {a, b});
  EXPECT_EQ(Cost(add), 3 * 64) << "two inputs and the output of 16 floats";
  Op(add, "Relu", {"#0"});
  EXPECT_EQ(Cost(add), 3 * 64 + 2 * 64) << "the earlier output is read, another written";
}

TEST_F(InlineCostTest, TheUnaryTensorOpsAndComparisonsCountLikeTheirFamilies) {
  const std::string a = Put(Shape{16}), b = Put(Shape{16});
  for (const char* unary : {"Erf", "Clip", "LeakyRelu"}) {
    v1::RunRequest request;
    Op(request, unary, {a});
    EXPECT_EQ(Cost(request), 2 * 64) << unary << ": one input and the output of 16 floats";
  }
  for (const char* compare : {"Equal", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
    v1::RunRequest request;
    Op(request, compare, {a, b});
    EXPECT_EQ(Cost(request), 3 * 64) << compare << ": the BOOL output bounded as a float's";
  }
}

TEST_F(InlineCostTest, ExtremaCountLikeReductionsAndCumSumLikeAUnaryOp) {
  const std::string a = Put(Shape{16});
  for (const char* reduce : {"ReduceMax", "ReduceMin"}) {
    v1::RunRequest request;
    Op(request, reduce, {a});
    EXPECT_EQ(Cost(request), 2 * 64) << reduce << ": the input, and at most as much output";
  }
  v1::RunRequest cumsum;
  Op(cumsum, "CumSum", {a});
  EXPECT_EQ(Cost(cumsum), 2 * 64) << "one input and the output of 16 floats";
}

TEST_F(InlineCostTest, LossesCountTheirInputsAndAtMostTheirInputOutput) {
  const std::string logits = Put(Shape{4, 4}), target = Put(Shape{4}), weight = Put(Shape{4});
  for (const char* loss : {"CrossEntropy", "NLLLoss"}) {
    v1::RunRequest request;
    Op(request, loss, {logits, target, weight});
    EXPECT_EQ(Cost(request), 64 + 16 + 16 + 64) << loss << ": at most one output per logit";
  }
  v1::RunRequest mse;
  Op(mse, "MSELoss", {logits, logits});
  EXPECT_EQ(Cost(mse), 3 * 64);
  v1::RunRequest dropout;
  Op(dropout, "Dropout", {logits});
  EXPECT_EQ(Cost(dropout), 2 * 64);
}

TEST_F(InlineCostTest, BroadcastingCountsTheBroadcastOutput) {
  const std::string column = Put(Shape{1000, 1}), row = Put(Shape{1, 1000});
  v1::RunRequest outer;
  Op(outer, "Mul", {column, row});
  EXPECT_EQ(Cost(outer), 4000 + 4000 + 4'000'000) << "a million products from 2000 values";
}

TEST_F(InlineCostTest, OutputsOfUnknownShapeAreBoundedByTheProductOfTheInputs) {
  const std::string column = Put(Shape{1000, 1}), row = Put(Shape{1, 1000});
  v1::RunRequest reshaped;
  Op(reshaped, "Reshape", {column});
  Op(reshaped, "Add", {"#0", row});
  // Reshape: 4000 in, at most 4000 out (shape unknown); Add: 4000 + 4000 in, at most 10^6 out.
  EXPECT_EQ(Cost(reshaped), 4000 + 4000 + 4000 + 4000 + 4'000'000);
}

TEST_F(InlineCostTest, MatMulCountsItsMultiplyAdds) {
  const std::string a = Put(Shape{64, 32}), b = Put(Shape{32, 16});
  v1::RunRequest mm;
  Op(mm, "MatMul", {a, b});
  EXPECT_EQ(Cost(mm), 64 * 32 * 4 + 32 * 16 * 4 + 64 * 16 * 4 + 64 * 32 * 16);
  const std::string x = Put(Shape{8000, 1}), y = Put(Shape{1, 8000});
  v1::RunRequest outer;
  Op(outer, "MatMul", {x, y});
  EXPECT_GT(Cost(outer), int64_t{64} * 8000 * 8000 / 16) << "a 256 MB outer product is large";
}

// A hostile client's request whose terms each reach the cap: their sum stays at the cap
// instead of overflowing to a negative cost (which ran a 2^62-multiply-add MatMul inline on
// gRPC's thread, where no deadline stops it).
TEST_F(InlineCostTest, TermsAtTheCapSumToTheCapNotANegativeCost) {
  const std::string one = Put(Shape{1});
  for (const int64_t k : {(int64_t{1} << 31) - 2, (int64_t{1} << 31) - 1}) {
    v1::RunRequest outer;
    const auto expand = [&](int64_t rows, int64_t cols) {
      auto& shape = (*Op(outer, "Expand", {one})->mutable_attributes())["shape"];
      shape.mutable_ints()->add_values(rows);
      shape.mutable_ints()->add_values(cols);
    };
    expand(1, k);
    expand(k, 1);
    Op(outer, "MatMul", {"#0", "#1"});
    EXPECT_GE(Cost(outer), int64_t{1} << 62) << k;
  }
}

// Batch dimensions that broadcast against each other multiply: two 64 KiB operands make 2^26
// products and a 256 MiB output (the larger batch alone undercounted it 8192 times, and a
// hostile client's MatMul ran inline for seconds).
TEST_F(InlineCostTest, MatMulBatchesBroadcastAgainstEachOther) {
  const std::string a = Put(Shape{32, 1, 32, 1, 8, 1, 1, 2});
  const std::string b = Put(Shape{1, 32, 1, 32, 1, 8, 2, 1});
  v1::RunRequest mm;
  Op(mm, "MatMul", {a, b});
  const int64_t products = int64_t{32} * 32 * 32 * 32 * 8 * 8;
  EXPECT_EQ(Cost(mm), 2 * 64 * 1024 + products * 4 + products * 2);
  const std::string c = Put(Shape{3, 1, 4, 5}), d = Put(Shape{2, 5, 6});
  v1::RunRequest mixed;  // ranks differ: (3, 1) against (2,): 6 products
  Op(mixed, "MatMul", {c, d});
  EXPECT_EQ(Cost(mixed), (60 + 60 + 6 * 4 * 6) * 4 + 6 * 4 * 6 * 5);
}

TEST_F(InlineCostTest, ExpandCountsTheShapeItAsksFor) {
  const std::string x = Put(Shape{1});
  v1::RunRequest expand;
  v1::Operation* op = Op(expand, "Expand", {x});
  for (int64_t d : {1000, 1000}) (*op->mutable_attributes())["shape"].mutable_ints()->add_values(d);
  Op(expand, "Copy", {"#0"});
  EXPECT_EQ(Cost(expand), 4 + 4'000'000 + 4'000'000 + 4'000'000);
}

TEST_F(InlineCostTest, UnboundedAndUnknownOperationsNeverRunInline) {
  const std::string x = Put(Shape{1, 1, 4, 4});
  for (const char* name : {"MaxPool2d", "ReluMaxPool2d", "AvgPool2d", "GlobalAvgPool2d",
                           "ToLayout", "Where", "Conv2d", "SGD", "NoSuchOp", "Pad", "Tile",
                           "ArgMax", "ArgMin", "Grad"}) {
    v1::RunRequest request;
    Op(request, "Neg", {x});
    Op(request, name, {x});
    EXPECT_EQ(Cost(request), kNotInline) << name;
  }
}

TEST_F(InlineCostTest, RequestsThatWillFailCostWhatTheyReadBeforeFailing) {
  v1::RunRequest unknown;
  Op(unknown, "Neg", {"no-such-handle"});
  Op(unknown, "Neg", {"#7"});
  EXPECT_EQ(Cost(unknown), 0);
}

TEST_F(InlineCostTest, InlineTensorsCountTheirDeclaredBytes) {
  v1::RunRequest inline_input;
  onnx::TensorProto* t = Op(inline_input, "Neg", {})->add_inputs()->mutable_tensor();
  t->set_data_type(onnx::TensorProto::DOUBLE);
  t->add_dims(10);
  EXPECT_EQ(Cost(inline_input), 80 + 80);
  EXPECT_EQ(TensorProtoCost(*t), 80);
  t->add_dims(-1);
  EXPECT_EQ(TensorProtoCost(*t), 0) << "malformed: decoding fails before writing";
}

TEST_F(InlineCostTest, AHandleCostsItsTensorsBytes) {
  EXPECT_EQ(HandleCost(session_, Put(Shape{3, 5})), 60);
  EXPECT_EQ(HandleCost(session_, "no-such-handle"), 0);
}

}  // namespace
}  // namespace onemodel::server
