#include "server/ops/op_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "server/rpc/rpc_error.h"
#include "tests/common/proto_attributes.h"

namespace onemodel::server {
namespace {

using onemodel::testing::FloatAttr;
using onemodel::testing::IntAttr;
using onemodel::testing::IntsAttr;
using onemodel::testing::StringAttr;
using ::testing::StartsWith;

class OpRegistryTest : public ::testing::Test {
 protected:
  // [2, 3] holding 1..6, or the given shape filled with 1, 2, 3, ...
  Tensor Iota(const Shape& shape = Shape{2, 3}) {
    Tensor t = Tensor::Empty(shape, DType::kFloat, pool_);
    auto d = t.MutableData<float>();
    for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(i + 1);
    return t;
  }
  // Runs `op` through the registry as the service does (signature check first).
  Tensor Call(const std::string& op, std::vector<Tensor> inputs,
              std::map<std::string, v1::Attribute> attributes = {}) {
    const OpSpec* spec = FindOp(op);
    if (!spec) throw std::runtime_error("no op " + op);
    AttributeMap map;
    for (auto& [k, v] : attributes) map[k] = v;
    CheckSignature(*spec, static_cast<int>(inputs.size()), map);
    return spec->run(OpCall(*spec, inputs, map, ctx_));
  }
  // INT64 class indices of shape [n].
  Tensor Labels(std::vector<int64_t> v) {
    Tensor t = Tensor::Empty(Shape{static_cast<int64_t>(v.size())}, DType::kInt64, pool_);
    std::copy(v.begin(), v.end(), t.MutableData<int64_t>().begin());
    return t;
  }
  // A step counter at 0 (an INT64 scalar), for the optimizers.
  Tensor Step() { return Tensor::Empty(Shape{}, DType::kInt64, pool_, /*zero=*/true); }
  std::string ErrorOf(const std::function<void()>& f) {
    try {
      f();
    } catch (const RpcError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
      return e.what();
    }
    return "(no error)";
  }
  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Get(KernelChoice::kExact)};
};

TEST_F(OpRegistryTest, EveryOperationIsReachableWithItsAttributes) {
  const Tensor x = Iota();
  const Tensor img = Iota(Shape{1, 2, 4, 4});
  const Tensor ids = Tensor::Empty(Shape{2, 2}, DType::kInt64, pool_, /*zero=*/true);
  std::map<std::string, std::function<Shape()>> cases = {
      {"Add",
       [&] {
         return Call("Add", {x, x}).shape();
       }},
      {"Sub",
       [&] {
         return Call("Sub", {x, x}).shape();
       }},
      {"Mul",
       [&] {
         return Call("Mul", {x, x}).shape();
       }},
      {"Div",
       [&] {
         return Call("Div", {x, x}).shape();
       }},
      {"Max",
       [&] {
         return Call("Max", {x, x}).shape();
       }},
      {"Min",
       [&] {
         return Call("Min", {x, x}).shape();
       }},
      {"Pow",
       [&] {
         return Call("Pow", {x, x}).shape();
       }},
      {"Neg", [&] { return Call("Neg", {x}).shape(); }},
      {"Abs", [&] { return Call("Abs", {x}).shape(); }},
      {"Exp", [&] { return Call("Exp", {x}).shape(); }},
      {"Log", [&] { return Call("Log", {x}).shape(); }},
      {"Sqrt", [&] { return Call("Sqrt", {x}).shape(); }},
      {"Relu", [&] { return Call("Relu", {x}).shape(); }},
      {"Sigmoid", [&] { return Call("Sigmoid", {x}).shape(); }},
      {"Tanh", [&] { return Call("Tanh", {x}).shape(); }},
      {"Gelu",
       [&] {
         return Call("Gelu", {x}, {{"approximate", StringAttr("none")}}).shape();
       }},
      {"Erf", [&] { return Call("Erf", {x}).shape(); }},
      {"Equal",
       [&] {
         return Call("Equal", {x, x}).shape();
       }},
      {"Less",
       [&] {
         return Call("Less", {x, Iota(Shape{3})}).shape();
       }},
      {"LessEqual",
       [&] {
         return Call("LessEqual", {x, x}).shape();
       }},
      {"Greater",
       [&] {
         return Call("Greater", {x, x}).shape();
       }},
      {"GreaterEqual",
       [&] {
         return Call("GreaterEqual", {x, x}).shape();
       }},
      {"Where",
       [&] {
         return Call("Where", {Call("Less", {x, Iota(Shape{2, 1})}), x, Iota(Shape{3})}).shape();
       }},
      {"Clip",
       [&] {
         return Call("Clip", {x}, {{"min", FloatAttr(2)}, {"max", IntAttr(4)}}).shape();
       }},
      {"LeakyRelu",
       [&] {
         return Call("LeakyRelu", {x}, {{"alpha", FloatAttr(0.2f)}}).shape();
       }},
      {"MatMul",
       [&] {
         return Call("MatMul", {x, Iota(Shape{3, 4})}).shape();
       }},
      {"MaxPool2d",
       [&] {
         return Call("MaxPool2d", {img},
                     {{"kernel_shape", IntsAttr({3, 3})},
                      {"strides", IntsAttr({2, 2})},
                      {"pads", IntsAttr({1, 1})}})
             .shape();
       }},
      {"Conv2d",
       [&] {
         return Call("Conv2d", {img, Iota(Shape{4, 1, 3, 3}), Iota(Shape{4})},
                     {{"strides", IntsAttr({2, 1})},
                      {"pads", IntsAttr({1, 0, 0, 2})},
                      {"dilations", IntsAttr({1, 2})},
                      {"group", IntAttr(2)}})
             .shape();
       }},
      {"ReluMaxPool2d",
       [&] {
         return Call("ReluMaxPool2d", {img},
                     {{"kernel_shape", IntsAttr({2, 2})},
                      {"strides", IntsAttr({2, 1})},
                      {"dilations", IntsAttr({1, 2})},
                      {"ceil_mode", IntAttr(1)}})
             .shape();
       }},
      {"AvgPool2d",
       [&] {
         return Call("AvgPool2d", {img},
                     {{"kernel_shape", IntsAttr({3, 3})},
                      {"strides", IntsAttr({2, 2})},
                      {"pads", IntsAttr({1, 1})},
                      {"ceil_mode", IntAttr(1)},
                      {"count_include_pad", IntAttr(1)}})
             .shape();
       }},
      {"GlobalAvgPool2d", [&] { return Call("GlobalAvgPool2d", {img}).shape(); }},
      {"Sum",
       [&] {
         return Call("Sum", {x}, {{"axes", IntsAttr({1})}, {"keepdims", IntAttr(1)}}).shape();
       }},
      {"Mean",
       [&] {
         return Call("Mean", {x}, {{"axes", IntsAttr({0})}}).shape();
       }},
      {"Softmax",
       [&] {
         return Call("Softmax", {x}, {{"axis", IntAttr(-1)}, {"scale", FloatAttr(0.5f)}}).shape();
       }},
      {"LogSoftmax",
       [&] {
         return Call("LogSoftmax", {x}, {{"axis", IntAttr(0)}}).shape();
       }},
      {"Cast",
       [&] {
         return Call("Cast", {x}, {{"to", IntAttr(10)}}).shape();
       }},
      {"Contiguous", [&] { return Call("Contiguous", {x.Transpose(0, 1)}).shape(); }},
      {"Copy", [&] { return Call("Copy", {x}).shape(); }},
      {"Detach", [&] { return Call("Detach", {x}).shape(); }},
      {"ToLayout",
       [&] {
         return Call("ToLayout", {img}, {{"layout", StringAttr("nhwc")}}).shape();
       }},
      {"Reshape",
       [&] {
         return Call("Reshape", {x}, {{"shape", IntsAttr({3, -1})}}).shape();
       }},
      {"Permute",
       [&] {
         return Call("Permute", {x}, {{"perm", IntsAttr({1, 0})}}).shape();
       }},
      {"Transpose",
       [&] {
         return Call("Transpose", {x}, {{"dim0", IntAttr(0)}, {"dim1", IntAttr(1)}}).shape();
       }},
      {"Slice",
       [&] {
         return Call("Slice", {x},
                     {{"dim", IntAttr(1)},
                      {"start", IntAttr(2)},
                      {"stop", IntAttr(-4)},
                      {"step", IntAttr(-1)}})
             .shape();
       }},
      {"Expand",
       [&] {
         return Call("Expand", {x}, {{"shape", IntsAttr({4, 2, 3})}}).shape();
       }},
      {"Squeeze",
       [&] {
         return Call("Squeeze", {Iota(Shape{1, 3, 1})}).shape();
       }},
      {"Unsqueeze",
       [&] {
         return Call("Unsqueeze", {x}, {{"dim", IntAttr(1)}}).shape();
       }},
      {"SGD",
       [&] {
         return Call("SGD", {Step(), Iota(), Iota(), Iota()},
                     {{"lr", FloatAttr(0.1f)},
                      {"momentum", FloatAttr(0.9f)},
                      {"dampening", FloatAttr(0)},
                      {"nesterov", IntAttr(1)},
                      {"weight_decay", FloatAttr(0.01f)}})
             .shape();
       }},
      {"AdamW",
       [&] {
         return Call("AdamW", {Step(), Iota(), Iota(), Iota(), Iota(), Iota()},
                     {{"lr", FloatAttr(0.1f)},
                      {"beta1", FloatAttr(0.8f)},
                      {"beta2", FloatAttr(0.9f)},
                      {"eps", FloatAttr(1e-6f)},
                      {"weight_decay", FloatAttr(0)},
                      {"amsgrad", IntAttr(1)}})
             .shape();
       }},
      {"Grad",
       [&] {
         const Tensor w = Iota().WithRequiresGrad();
         const Tensor loss = Call("Sum", {Call("Mul", {w, w})});
         return Call("Grad", {loss, x.WithRequiresGrad(), w},
                     {{"index", IntAttr(1)}, {"retain_graph", IntAttr(1)}})
             .shape();
       }},
      {"ClipGradNorm",
       [&] {
         return Call("ClipGradNorm", {Iota(), Iota()},
                     {{"max_norm", FloatAttr(1)},
                      {"norm_type", FloatAttr(1)},
                      {"error_if_nonfinite", IntAttr(1)}})
             .shape();
       }},
      {"Embedding",
       [&] {
         return Call("Embedding", {x, ids}, {{"skip_id", IntAttr(1)}}).shape();
       }},
      {"Gather",
       [&] {
         return Call("Gather", {x, ids}, {{"axis", IntAttr(-1)}}).shape();
       }},
      {"Concat",
       [&] {
         return Call("Concat", {x, x, x}, {{"axis", IntAttr(0)}}).shape();
       }},
      {"Split",
       [&] {
         return Call("Split", {x},
                     {{"axis", IntAttr(1)},
                      {"split", IntsAttr({1, 2})},
                      {"num_outputs", IntAttr(2)},
                      {"index", IntAttr(1)}})
             .shape();
       }},
      {"ReduceMax",
       [&] {
         return Call("ReduceMax", {x}, {{"axes", IntsAttr({1})}, {"keepdims", IntAttr(1)}})
             .shape();
       }},
      {"ReduceMin",
       [&] {
         return Call("ReduceMin", {x}, {{"axes", IntAttr(0)}}).shape();
       }},
      {"ArgMax",
       [&] {
         const Tensor i = Call("ArgMax", {x}, {{"axis", IntAttr(1)}, {"keepdims", IntAttr(1)}});
         EXPECT_EQ(i.At<int64_t>({1, 0}), 2) << "the largest of 4 5 6";
         return i.shape();
       }},
      {"ArgMin",
       [&] {
         return Call("ArgMin", {x}, {{"select_last_index", IntAttr(1)}}).shape();
       }},
      {"Pad",
       [&] {
         return Call("Pad", {x},
                     {{"pads", IntsAttr({0, 1, 1, 0})},
                      {"mode", StringAttr("reflect")},
                      {"value", FloatAttr(1)}})
             .shape();
       }},
      {"Tile",
       [&] {
         return Call("Tile", {x}, {{"repeats", IntsAttr({2, 1})}}).shape();
       }},
      {"CumSum",
       [&] {
         const Tensor c = Call(
             "CumSum", {x},
             {{"axis", IntAttr(1)}, {"exclusive", IntAttr(1)}, {"reverse", IntAttr(1)}});
         EXPECT_EQ(c.At<float>({0, 0}), 5.0f) << "2 + 3";
         return c.shape();
       }},
      {"LayerNorm",
       [&] {
         return Call("LayerNorm", {x, Iota(Shape{3}), Iota(Shape{3})},
                     {{"axis", IntAttr(1)}, {"epsilon", FloatAttr(1e-3f)}})
             .shape();
       }},
      {"RMSNorm",
       [&] {
         return Call("RMSNorm", {x}, {{"axis", IntAttr(0)}, {"epsilon", FloatAttr(1e-3f)}}).shape();
       }},
      {"BatchNorm2d",
       [&] {
         return Call("BatchNorm2d", {img, Iota(Shape{2}), Iota(Shape{2}), Iota(Shape{2})},
                     {{"training", IntAttr(1)},
                      {"momentum", FloatAttr(0.5f)},
                      {"epsilon", FloatAttr(1e-3f)}})
             .shape();
       }},
      {"CrossEntropy",
       [&] {
         return Call("CrossEntropy", {x, Labels({0, 2}), Iota(Shape{3})},
                     {{"ignore_index", IntAttr(1)},
                      {"reduction", StringAttr("none")},
                      {"label_smoothing", FloatAttr(0.1f)}})
             .shape();
       }},
      {"NLLLoss",
       [&] {
         return Call("NLLLoss", {x, Labels({0, 2})},
                     {{"ignore_index", IntAttr(0)}, {"reduction", StringAttr("sum")}})
             .shape();
       }},
      {"MSELoss",
       [&] {
         return Call("MSELoss", {x, x}, {{"reduction", StringAttr("none")}}).shape();
       }},
      {"Dropout",
       [&] {
         return Call("Dropout", {x},
                     {{"ratio", FloatAttr(0.25f)}, {"seed", IntAttr(3)}, {"training", IntAttr(1)}})
             .shape();
       }},
      {"ConvTranspose2d",
       [&] {
         return Call("ConvTranspose2d", {img, Iota(Shape{2, 2, 3, 3}), Iota(Shape{4})},
                     {{"strides", IntsAttr({2, 1})},
                      {"pads", IntsAttr({1, 0, 0, 2})},
                      {"dilations", IntsAttr({1, 2})},
                      {"group", IntAttr(2)},
                      {"output_padding", IntsAttr({1, 0})}})
             .shape();
       }},
  };
  const std::map<std::string, Shape> expected = {{"MatMul", Shape{2, 4}},
                                                 {"MaxPool2d", Shape{1, 2, 2, 2}},
                                                 {"ReluMaxPool2d", Shape{1, 2, 2, 2}},
                                                 {"AvgPool2d", Shape{1, 2, 3, 3}},
                                                 {"GlobalAvgPool2d", Shape{1, 2, 1, 1}},
                                                 {"Sum", Shape{2, 1}},
                                                 {"Mean", Shape{3}},
                                                 {"Contiguous", Shape{3, 2}},
                                                 {"ToLayout", Shape{1, 2, 4, 4}},
                                                 {"Reshape", Shape{3, 2}},
                                                 {"Permute", Shape{3, 2}},
                                                 {"Transpose", Shape{3, 2}},
                                                 {"Slice", Shape{2, 3}},
                                                 {"Expand", Shape{4, 2, 3}},
                                                 {"Squeeze", Shape{3}},
                                                 {"Unsqueeze", Shape{2, 1, 3}},
                                                 {"SGD", Shape{}},
                                                 {"AdamW", Shape{}},
                                                 {"Grad", Shape{2, 3}},
                                                 {"ClipGradNorm", Shape{}},
                                                 {"Conv2d", Shape{1, 4, 2, 2}},
                                                 {"Embedding", Shape{2, 2, 3}},
                                                 {"Gather", Shape{2, 2, 2}},
                                                 {"Concat", Shape{6, 3}},
                                                 {"Split", Shape{2, 2}},
                                                 {"ReduceMax", Shape{2, 1}},
                                                 {"ReduceMin", Shape{3}},
                                                 {"ArgMax", Shape{2, 1}},
                                                 {"ArgMin", Shape{3}},
                                                 {"Pad", Shape{3, 4}},
                                                 {"Tile", Shape{4, 3}},
                                                 {"BatchNorm2d", Shape{1, 2, 4, 4}},
                                                 {"CrossEntropy", Shape{2}},
                                                 {"NLLLoss", Shape{}},
                                                 {"ConvTranspose2d", Shape{1, 4, 9, 6}}};
  std::set<std::string> listed;
  for (const OpSpec& spec : AllOps()) {
    listed.insert(std::string(spec.name));
    ASSERT_TRUE(cases.count(std::string(spec.name))) << spec.name << " has no test case";
    const Shape got = cases[std::string(spec.name)]();
    auto want = expected.find(std::string(spec.name));
    const Shape same_as_input{2, 3};
    EXPECT_EQ(got, want == expected.end() ? same_as_input : want->second) << spec.name;
  }
  EXPECT_EQ(listed.size(), cases.size()) << "every case names a registered operation";
}

TEST(OpRegistryTableTest, EveryRecordedKindIsARunOperationOfItsName) {
  // A result's grad_fn (DescribeTensor) names an operation a client can Run.
  for (OpKind kind : kAllOpKinds) {
    EXPECT_NE(FindOp(OpKindName(kind)), nullptr) << OpKindName(kind);
  }
}

TEST_F(OpRegistryTest, OptimizersSplitTheirTensorsIntoListsAndSayWhichListsTheyTake) {
  const Tensor step = Step();
  const Tensor p = Iota(), g = Iota(), m = Iota();
  const Tensor next =
      Call("SGD", {step, p, g, m}, {{"lr", FloatAttr(1)}, {"momentum", FloatAttr(0.5f)}});
  EXPECT_EQ(next.At<int64_t>({}), 1) << "the new step count";
  EXPECT_EQ(p.At<float>({1, 2}), 0.0f) << "6 - 1 * 6";
  EXPECT_EQ(Call("ClipGradNorm", {Iota(Shape{2}), Iota(Shape{1})}, {{"max_norm", FloatAttr(10)}})
                .At<float>({}),
            std::sqrt(6.0f));
  EXPECT_EQ(ErrorOf([&] {
              Call("SGD", {step, p}, {{"lr", FloatAttr(1)}});
            }),
            "after its first 1 input it takes N params, then N grads (2 lists of equal length "
            "N >= 1), got 1 tensor");
  EXPECT_EQ(ErrorOf([&] {
              Call("AdamW", {step, p, g, m, Iota(), Iota()}, {{"amsgrad", IntAttr(0)}});
            }),
            "after its first 1 input it takes N params, then N grads, then N exp_avgs, then N "
            "exp_avg_sqs (4 lists of equal length N >= 1), got 5 tensors");
  EXPECT_EQ(ErrorOf([&] {
              Call("AdamW", {step, p, g, m, m}, {{"amsgrad", IntAttr(2)}});
            }),
            "attribute 'amsgrad' must be 0 or 1 (got 2)");
  EXPECT_EQ(ErrorOf([&] {
              Call("ClipGradNorm", {}, {{"max_norm", FloatAttr(1)}});
            }),
            "it takes at least 1 input (got 0)");
  EXPECT_EQ(ErrorOf([&] { Call("SGD", {step, p, g}); }), "attribute 'lr' (a float) is required");
  // A NaN or negative momentum is named as such (the core's error, which the service maps
  // to INVALID_ARGUMENT), not as a list count, with or without a momentum buffer list.
  for (const float momentum : {std::numeric_limits<float>::quiet_NaN(), -0.5f}) {
    for (const std::vector<Tensor>& inputs :
         {std::vector{step, p, g}, std::vector{step, p, g, m}}) {
      try {
        Call("SGD", inputs, {{"lr", FloatAttr(1)}, {"momentum", FloatAttr(momentum)}});
        ADD_FAILURE() << "momentum " << momentum << " was accepted";
      } catch (const TensorException& e) {
        EXPECT_NE(std::string(e.what()).find("invalid momentum"), std::string::npos) << e.what();
      }
    }
  }
}

TEST_F(OpRegistryTest, ResultsAreTheCoresResults) {
  const Tensor x = Iota();
  EXPECT_EQ(Call("Add", {x, x}).At<float>({1, 2}), 12.0f);
  EXPECT_EQ(Call("Sum", {x}).At<float>({}), 21.0f);
  EXPECT_EQ(Call("Cast", {x}, {{"to", IntAttr(7)}}).dtype(), DType::kInt64);
  const Tensor sliced =
      Call("Slice", {x}, {{"dim", IntAttr(1)}, {"start", IntAttr(1)}, {"stop", IntAttr(3)}});
  EXPECT_EQ(sliced.At<float>({1, 0}), 5.0f);
  EXPECT_EQ(Call("ToLayout", {Iota(Shape{1, 2, 2, 2})},
                 {{"layout", StringAttr("Blocked")}, {"block", IntAttr(4)}})
                .layout(),
            Layout::kBlocked);
  const Tensor weights = Call("ToLayout", {Iota(Shape{5, 2, 1, 1})},
                              {{"layout", StringAttr("blockedweights")}, {"block", IntAttr(4)}});
  EXPECT_EQ(weights.layout(), Layout::kBlockedWeights);
  EXPECT_EQ(weights.block_size(), 4);
}

TEST_F(OpRegistryTest, TensorOpsTakeTheirAttributes) {
  const Tensor x = Iota();  // 1..6
  const Tensor clipped = Call("Clip", {x}, {{"min", FloatAttr(2)}, {"max", FloatAttr(4.5f)}});
  EXPECT_EQ(clipped.At<float>({0, 0}), 2.0f);
  EXPECT_EQ(clipped.At<float>({1, 2}), 4.5f);
  EXPECT_EQ(Call("Clip", {x}, {{"max", IntAttr(3)}}).At<float>({0, 0}), 1.0f) << "min: -inf";
  const Tensor neg = Call("Neg", {x});
  EXPECT_EQ(Call("LeakyRelu", {neg}).At<float>({0, 1}), -2.0f * 0.01f) << "alpha: 0.01";
  EXPECT_EQ(Call("LeakyRelu", {neg}, {{"alpha", FloatAttr(0.5f)}}).At<float>({0, 1}), -1.0f);
  const Tensor mask = Call("GreaterEqual", {x, Iota(Shape{1})});
  EXPECT_EQ(mask.dtype(), DType::kBool);
  EXPECT_EQ(Call("Where", {mask, neg, x}).At<float>({1, 2}), -6.0f);
  const Tensor tanh_form = Call("Gelu", {neg});
  EXPECT_EQ(Call("Gelu", {neg}, {{"approximate", StringAttr("tanh")}}).At<float>({0, 0}),
            tanh_form.At<float>({0, 0}));
  EXPECT_NE(Call("Gelu", {neg}, {{"approximate", StringAttr("none")}}).At<float>({0, 0}),
            tanh_form.At<float>({0, 0}));
}

TEST_F(OpRegistryTest, MalformedTensorOpAttributesNameTheAttribute) {
  const Tensor x = Iota();
  EXPECT_EQ(ErrorOf([&] {
              Call("Gelu", {x}, {{"approximate", StringAttr("erf")}});
            }),
            "attribute 'approximate' must be \"tanh\" or \"none\" (got \"erf\")");
  EXPECT_THAT(ErrorOf([&] {
                Call("Gelu", {x}, {{"approximate", IntAttr(0)}});
              }),
              StartsWith("attribute 'approximate' must be a string (s) (got an int (i)): "));
  EXPECT_THAT(ErrorOf([&] {
                Call("Clip", {x}, {{"min", StringAttr("0")}});
              }),
              StartsWith("attribute 'min' must be a float (f) (got a string (s)): "));
  EXPECT_THAT(ErrorOf([&] {
                Call("LeakyRelu", {x}, {{"alpha", IntsAttr({1})}});
              }),
              StartsWith("attribute 'alpha' must be a float (f) (got a list of ints (ints)): "));
  EXPECT_EQ(ErrorOf([&] { Call("Where", {x, x}); }), "it takes 3 inputs (got 2)");
  EXPECT_EQ(ErrorOf([&] {
              Call("Equal", {x, x}, {{"axis", IntAttr(0)}});
            }),
            "there is no attribute 'axis' (it takes none)");
}

TEST_F(OpRegistryTest, SignatureErrorsSayWhatTheOperationTakes) {
  const Tensor x = Iota();
  EXPECT_EQ(ErrorOf([&] { Call("Add", {x}); }), "it takes 2 inputs (got 1)");
  EXPECT_EQ(ErrorOf([&] { Call("Relu", {x, x}); }), "it takes 1 input (got 2)");
  EXPECT_EQ(ErrorOf([&] { Call("Conv2d", {x}); }), "it takes 2 to 3 inputs (got 1)")
      << "Conv2d's bias is optional";
  EXPECT_EQ(ErrorOf([&] { Call("Conv2d", {x, x, x, x}); }), "it takes 2 to 3 inputs (got 4)");
  EXPECT_EQ(ErrorOf([&] {
              Call("Relu", {x}, {{"axis", IntAttr(0)}});
            }),
            "there is no attribute 'axis' (it takes none)");
  EXPECT_EQ(ErrorOf([&] {
              Call("Softmax", {x}, {{"axes", IntAttr(0)}});
            }),
            "there is no attribute 'axes' (it takes axis, scale)");
}

TEST_F(OpRegistryTest, AttributeErrorsSayWhatWasExpected) {
  const Tensor x = Iota();
  const Tensor img = Iota(Shape{1, 1, 4, 4});
  EXPECT_THAT(ErrorOf([&] {
                Call("Softmax", {x}, {{"axis", FloatAttr(1)}});
              }),
              StartsWith("attribute 'axis' must be an int (i) (got a float (f)): "));
  EXPECT_EQ(ErrorOf([&] { Call("Reshape", {x}); }),
            "attribute 'shape' (a list of ints) is required");
  EXPECT_EQ(ErrorOf([&] { Call("Cast", {x}); }), "attribute 'to' (an int) is required");
  // A wrong type says what the attribute means: Cast's 'to' is a type code, not a name.
  EXPECT_EQ(ErrorOf([&] {
              Call("Cast", {x}, {{"to", StringAttr("FLOAT")}});
            }),
            "attribute 'to' must be an int (i) (got a string (s)): the ONNX "
            "TensorProto.DataType (1 FLOAT, 10 FLOAT16, 7 INT64, ...)");
  EXPECT_EQ(ErrorOf([&] { Call("MaxPool2d", {img}); }),
            "attribute 'kernel_shape' (a list of two ints, [height, width]) is required");
  EXPECT_EQ(ErrorOf([&] {
              Call("MaxPool2d", {img}, {{"kernel_shape", IntsAttr({2})}});
            }),
            "attribute 'kernel_shape' must hold two values [height, width] (got 1)");
  EXPECT_EQ(ErrorOf([&] {
              Call("MaxPool2d", {img},
                   {{"kernel_shape", IntsAttr({2, 2})}, {"dilations", IntsAttr({1, 0})}});
            }),
            "attribute 'dilations' must hold values >= 1 (got [1, 0])");
  EXPECT_EQ(ErrorOf([&] {
              Call("ReluMaxPool2d", {img},
                   {{"kernel_shape", IntsAttr({2, 2})}, {"ceil_mode", IntAttr(2)}});
            }),
            "attribute 'ceil_mode' must be 0 or 1 (got 2)");
  EXPECT_EQ(ErrorOf([&] {
              Call("AvgPool2d", {img},
                   {{"kernel_shape", IntsAttr({2, 2})}, {"count_include_pad", IntAttr(-1)}});
            }),
            "attribute 'count_include_pad' must be 0 or 1 (got -1)");
  EXPECT_EQ(
      ErrorOf([&] {
        Call("AvgPool2d", {img}, {{"kernel_shape", IntsAttr({2, 2})}, {"pads", IntsAttr({-1, 0})}});
      }),
      "attribute 'pads' must hold values >= 0 (got [-1, 0])");
  EXPECT_EQ(ErrorOf([&] {
              Call("AvgPool2d", {img}, {{"kernel_shape", IntsAttr({0, 2})}});
            }),
            "attribute 'kernel_shape' must hold values >= 1 (got [0, 2])");
  EXPECT_EQ(ErrorOf([&] {
              Call("Unsqueeze", {x}, {{"dim", IntAttr(int64_t{1} << 40)}});
            }),
            "attribute 'dim' = 1099511627776 is out of range");
  EXPECT_EQ(ErrorOf([&] {
              Call("Permute", {x}, {{"perm", IntsAttr({0, int64_t{1} << 33})}});
            }),
            "attribute 'perm' holds 8589934592, which is out of range");
  EXPECT_EQ(ErrorOf([&] {
              Call("ToLayout", {img}, {{"layout", StringAttr("CHWN")}});
            }),
            "attribute 'layout' must be \"NCHW\", \"NHWC\", \"Blocked\" or \"BlockedWeights\" (got "
            "\"CHWN\")");
  EXPECT_EQ(ErrorOf([&] {
              Call("Slice", {x}, {{"dim", IntAttr(0)}, {"stop", IntAttr(1)}});
            }),
            "attribute 'start' (an int) is required");
  const Tensor w = Iota(Shape{2, 1, 3, 3});
  const std::vector<std::pair<std::pair<std::string, v1::Attribute>, std::string>> conv = {
      {{"strides", IntsAttr({1, 1, 1})},
       "attribute 'strides' must hold two values [height, width] (got 3)"},
      {{"strides", IntsAttr({0, 1})}, "attribute 'strides' must hold values >= 1 (got 0)"},
      {{"dilations", IntsAttr({1, -2})}, "attribute 'dilations' must hold values >= 1 (got -2)"},
      {{"pads", IntsAttr({1, 1, 1})},
       "attribute 'pads' must hold four values [top, left, bottom, right] or two [height, "
       "width] (got 3)"},
      {{"pads", IntsAttr({0, 0, -1, 0})}, "attribute 'pads' must hold values >= 0 (got -1)"},
      {{"group", IntAttr(0)},
       "attribute 'group' must be >= 1 and divide the input and output channels (got 0)"},
      {{"group", FloatAttr(2)},
       "attribute 'group' must be an int (i) (got a float (f)): channel groups; C and K are "
       "multiples (C: depthwise)"},
      {{"keep_layout", IntAttr(2)},
       "attribute 'keep_layout' must be 0 (NCHW output) or 1 (an NHWC input's layout) (got 2)"},
  };
  for (const auto& [attribute, message] : conv) {
    EXPECT_EQ(ErrorOf([&] { Call("Conv2d", {img, w}, {attribute}); }), message);
  }
}

TEST_F(OpRegistryTest, Conv2dTakesAnOptionalBiasAndSymmetricPads) {
  const Tensor img = Iota(Shape{1, 1, 4, 4});
  const Tensor w = Iota(Shape{2, 1, 3, 3});
  const Tensor b = Iota(Shape{2});
  const Tensor plain = Call("Conv2d", {img, w}, {{"pads", IntsAttr({1, 1})}});
  const Tensor biased = Call("Conv2d", {img, w, b}, {{"pads", IntsAttr({1, 1, 1, 1})}});
  ASSERT_EQ(plain.shape(), (Shape{1, 2, 4, 4}));
  ASSERT_EQ(biased.shape(), plain.shape());
  EXPECT_EQ(biased.At<float>({0, 1, 2, 3}), plain.At<float>({0, 1, 2, 3}) + 2.0f);
}

TEST_F(OpRegistryTest, Conv2dKeepLayoutWritesAnNhwcInputsLayout) {
  const Tensor img = Iota(Shape{1, 2, 4, 4}).ToLayout(Layout::kNhwc, pool_);
  const Tensor w = Iota(Shape{3, 2, 3, 3});
  const Tensor nchw = Call("Conv2d", {img, w}, {{"pads", IntsAttr({1, 1})}});
  const Tensor nhwc =
      Call("Conv2d", {img, w}, {{"pads", IntsAttr({1, 1})}, {"keep_layout", IntAttr(1)}});
  EXPECT_EQ(nchw.layout(), Layout::kNchw);
  ASSERT_EQ(nhwc.layout(), Layout::kNhwc);
  EXPECT_EQ(nhwc.At<float>({0, 2, 1, 3}), nchw.At<float>({0, 2, 1, 3}));
  const Tensor t = Call("ConvTranspose2d", {img, Iota(Shape{2, 3, 2, 2})},
                        {{"keep_layout", IntAttr(1)}});
  EXPECT_EQ(t.layout(), Layout::kNhwc);
}

TEST_F(OpRegistryTest, ConvTranspose2dTakesAnOptionalBiasAndChecksOutputPadding) {
  const Tensor img = Iota(Shape{1, 1, 3, 3});
  const Tensor w = Iota(Shape{1, 2, 2, 2});
  const Tensor b = Iota(Shape{2});
  const Tensor plain = Call("ConvTranspose2d", {img, w}, {{"strides", IntsAttr({2, 2})}});
  const Tensor biased = Call("ConvTranspose2d", {img, w, b},
                             {{"strides", IntsAttr({2, 2})}, {"output_padding", IntsAttr({1, 1})}});
  ASSERT_EQ(plain.shape(), (Shape{1, 2, 6, 6}));
  ASSERT_EQ(biased.shape(), (Shape{1, 2, 7, 7}));
  EXPECT_EQ(biased.At<float>({0, 1, 2, 3}), plain.At<float>({0, 1, 2, 3}) + 2.0f);
  EXPECT_EQ(biased.At<float>({0, 1, 6, 6}), 2.0f) << "output_padding's row: the bias alone";
  EXPECT_EQ(ErrorOf([&] {
              Call("ConvTranspose2d", {img, w}, {{"output_padding", IntsAttr({1, 1, 1})}});
            }),
            "attribute 'output_padding' must hold two values [height, width] (got 3)");
}

TEST_F(OpRegistryTest, AnIntIsTakenWhereAFloatOrAListOfIntsIsExpected) {
  const Tensor x = Iota();
  const Tensor by_int = Call("Softmax", {x}, {{"scale", IntAttr(2)}});
  const Tensor by_float = Call("Softmax", {x}, {{"scale", FloatAttr(2.0f)}});
  EXPECT_EQ(by_int.At<float>({1, 2}), by_float.At<float>({1, 2}));
  const Tensor summed = Call("Sum", {x}, {{"axes", IntAttr(1)}});
  EXPECT_EQ(summed.shape(), Shape{2});
  EXPECT_EQ(summed.At<float>({1}), 15.0f);
  EXPECT_THAT(ErrorOf([&] {
                Call("Sum", {x}, {{"axes", FloatAttr(1)}});
              }),
              StartsWith("attribute 'axes' must be a list of ints (ints) (got a float (f)): "));
}

TEST_F(OpRegistryTest, UnknownOperationsAreNotFound) {
  EXPECT_EQ(FindOp("Conv"), nullptr);
  EXPECT_EQ(FindOp("add"), nullptr) << "names are case-sensitive, as in ONNX";
  EXPECT_NE(FindOp("MaxPool2d"), nullptr);
}

TEST_F(OpRegistryTest, LossesReadTheirReductionAndDropoutItsSeed) {
  const Tensor x = Iota();  // [[1, 2, 3], [4, 5, 6]]
  EXPECT_EQ(Call("MSELoss", {x, Iota()}, {{"reduction", StringAttr("sum")}}).At<float>({}), 0.0f);
  EXPECT_EQ(ErrorOf([&] {
              Call("MSELoss", {x, x}, {{"reduction", StringAttr("avg")}});
            }),
            "attribute 'reduction' must be \"none\", \"mean\" or \"sum\" (got \"avg\")");
  EXPECT_EQ(ErrorOf([&] {
              Call("Dropout", {x}, {{"seed", IntAttr(1)}, {"training", IntAttr(2)}});
            }),
            "attribute 'training' must be 0 or 1 (got 2)");
  EXPECT_EQ(ErrorOf([&] { Call("Dropout", {x}); }), "attribute 'seed' (an int) is required");
  const Tensor off = Call("Dropout", {x}, {{"seed", IntAttr(1)}, {"training", IntAttr(0)}});
  EXPECT_EQ(off.buffer(), x.buffer()) << "training 0 is X itself";
  // The weight is optional; given, it weighs the mean.
  const float plain = Call("NLLLoss", {x, Labels({0, 2})}).At<float>({});
  EXPECT_EQ(plain, -3.5f);          // -(1 + 6) / 2
  const Tensor w = Iota(Shape{3});  // 1, 2, 3
  EXPECT_EQ(Call("NLLLoss", {x, Labels({0, 2}), w}).At<float>({}), -19.0f / 4);  // -(1 + 18) / 4
}

}  // namespace
}  // namespace onemodel::server
