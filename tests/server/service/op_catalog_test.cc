// ListOperations against the operation table it is made from: every registered operation is
// listed with exactly the attributes Run accepts, each with the kind and default the
// operation's readers really use; unknown names get the nearest names.
#include "server/ops/op_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <span>

#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/compare.h"
#include "core/ops/reduce.h"
#include "server/ops/nearest_names.h"
#include "server/rpc/rpc_error.h"
#include "tests/common/proto_attributes.h"

namespace onemodel::server {
namespace {

using onemodel::testing::FloatAttr;
using onemodel::testing::IntAttr;
using onemodel::testing::IntsAttr;
using onemodel::testing::StringAttr;
using ::testing::HasSubstr;
using ::testing::Not;

// A value for each required attribute ("Op.attribute") that works on [1, 2, 4, 4] FLOAT inputs.
const v1::Attribute& RequiredValue(const std::string& op, const std::string& attribute) {
  static const auto* values =
      new std::map<std::string, v1::Attribute>{{"MaxPool2d.kernel_shape", IntsAttr({2, 2})},
                                               {"ReluMaxPool2d.kernel_shape", IntsAttr({2, 2})},
                                               {"AvgPool2d.kernel_shape", IntsAttr({2, 2})},
                                               {"Cast.to", IntAttr(1)},
                                               {"ToLayout.layout", StringAttr("NCHW")},
                                               {"Reshape.shape", IntsAttr({4, -1})},
                                               {"Expand.shape", IntsAttr({2, 1, 2, 4, 4})},
                                               {"Slice.start", IntAttr(0)},
                                               {"Slice.stop", IntAttr(1)},
                                               {"Permute.perm", IntsAttr({0, 2, 3, 1})},
                                               {"SGD.lr", FloatAttr(0.1f)},
                                               {"ClipGradNorm.max_norm", FloatAttr(1)},
                                               {"Split.index", IntAttr(0)},
                                               {"Grad.index", IntAttr(0)},
                                               {"Pad.pads", IntsAttr({0, 1, 0, 1, 0, 0, 1, 0})},
                                               {"Tile.repeats", IntsAttr({1, 2, 1, 3})},
                                               {"Dropout.seed", IntAttr(7)}};
  return values->at(op + "." + attribute);
}

// An attribute of another kind than `kind`.
v1::Attribute WrongKind(v1::AttributeKind kind) {
  return kind == v1::ATTRIBUTE_KIND_STRING ? IntAttr(1) : StringAttr("x");
}

// What OpCall says a reader expected ("an int (i)", ...).
std::string ExpectedKindText(v1::AttributeKind kind) {
  switch (kind) {
    case v1::ATTRIBUTE_KIND_INT:
      return "an int (i)";
    case v1::ATTRIBUTE_KIND_FLOAT:
      return "a float (f)";
    case v1::ATTRIBUTE_KIND_STRING:
      return "a string (s)";
    case v1::ATTRIBUTE_KIND_INTS:
      return "a list of ints (ints)";
    default:
      return "a list of floats (floats)";
  }
}

class OpCatalogTest : public ::testing::Test {
 protected:
  // [1, 2, 4, 4] holding 1, 2, 3, ...
  Tensor Input(bool requires_grad = false) {
    Tensor t = Tensor::Empty(Shape{1, 2, 4, 4}, DType::kFloat, pool_);
    auto d = t.MutableData<float>();
    for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(i % 7 + 1);
    return requires_grad ? t.WithRequiresGrad() : t;
  }
  // Input() as a (16, 2) table.
  Tensor Table(bool requires_grad) {
    const Tensor t = *Input().TryReshape({16, 2});
    return requires_grad ? t.WithRequiresGrad() : t;
  }
  // Inputs for `spec`: the same [1, 2, 4, 4] tensor for each, or for a variadic operation (an
  // optimizer) a zero step counter when it takes one and distinct tensors for its lists at
  // default attributes; for Grad, the sum of a tensor that requires gradients and the tensor.
  std::vector<Tensor> Inputs(const OpSpec& spec, bool requires_grad) {
    if (!spec.variadic) {  // the optional inputs left out
      std::vector<Tensor> inputs;
      const size_t given = spec.inputs.size() - static_cast<size_t>(spec.optional_inputs);
      for (std::string_view name : std::span(spec.inputs.begin(), given)) {
        // Where's condition is BOOL: a comparison of the input with itself shifted.
        // BatchNorm2d's running statistics: one per channel. A class loss's target is INT64
        // class indices (zeros) of the input's shape without axis 1. ConvTranspose2d's weights
        // lead with the input's channels: [2, 1, 4, 4].
        if (name == "running_mean" || name == "running_var") {
          inputs.push_back(Input().Slice(2, 0, 1).Slice(3, 0, 1).Reshape({2}, pool_));
          continue;
        }
        if (name == "target" && spec.name != "MSELoss") {
          inputs.push_back(Tensor::Empty(Shape{1, 4, 4}, DType::kInt64, pool_, /*zero=*/true));
          continue;
        }
        if (spec.name == "ConvTranspose2d" && name == "W") {
          const Tensor w = Input().Transpose(0, 1);
          inputs.push_back(requires_grad ? w.WithRequiresGrad() : w);
          continue;
        }
        inputs.push_back(name == "condition"
                             ? ops::Less(Input(), Input().Slice(3, -1, -5, -1), ctx_)
                         : name == "indices"  // Embedding's and Gather's: all 0
                             ? Tensor::Empty(Shape{3}, DType::kInt64, pool_, /*zero=*/true)
                         : name == "table"  // Embedding's (V, D)
                             ? Table(requires_grad)
                             : Input(requires_grad));
      }
      return inputs;
    }
    if (spec.name == "Grad") {  // Y: a recorded one-element function of its X
      const Tensor x = Input(/*requires_grad=*/true);
      return {ops::Sum(x, {}, false, ctx_), x};
    }
    static const std::map<std::string_view, int> lists = {
        {"SGD", 2}, {"AdamW", 4}, {"ClipGradNorm", 1}, {"Concat", 2}};
    std::vector<Tensor> inputs;
    if (spec.inputs.size() == 2)
      inputs.push_back(Tensor::Empty(Shape{}, DType::kInt64, pool_, true));
    for (int i = 0; i < lists.at(spec.name); ++i) inputs.push_back(Input(requires_grad));
    return inputs;
  }
  // Runs `spec` as the service does: signature check, then the row's readers and the core.
  Tensor Call(const OpSpec& spec, const std::map<std::string, v1::Attribute>& attributes,
              bool requires_grad = false) {
    AttributeMap map;
    for (const auto& [k, v] : attributes) map[k] = v;
    const std::vector<Tensor> inputs = Inputs(spec, requires_grad);
    CheckSignature(spec, static_cast<int>(inputs.size()), map);
    return spec.run(OpCall(spec, inputs, map, ctx_));
  }
  // The required attributes of `op` with working values.
  std::map<std::string, v1::Attribute> Required(const v1::OperationSpec& op) {
    std::map<std::string, v1::Attribute> out;
    for (const v1::AttributeSpec& a : op.attributes()) {
      if (a.required()) out[a.name()] = RequiredValue(op.name(), a.name());
    }
    return out;
  }
  // The values of `t` as bytes, row-major.
  std::string Bytes(const Tensor& t) {
    const Tensor c = t.Contiguous(pool_);
    const auto raw = c.RawData();
    return {reinterpret_cast<const char*>(raw.data()), raw.size()};
  }

  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Get(KernelChoice::kExact)};
};

TEST_F(OpCatalogTest, EveryRegisteredOperationIsListedWithItsAttributes) {
  v1::ListOperationsReply reply;
  ListOperations("", &reply);
  ASSERT_EQ(static_cast<size_t>(reply.operations_size()), AllOps().size());
  for (size_t i = 0; i < AllOps().size(); ++i) {
    const OpSpec& spec = AllOps()[i];
    const v1::OperationSpec& op = reply.operations(static_cast<int>(i));
    EXPECT_EQ(op.name(), spec.name);
    EXPECT_FALSE(op.doc().empty()) << op.name();
    EXPECT_EQ(static_cast<size_t>(op.inputs_size()), spec.inputs.size()) << op.name();
    ASSERT_EQ(static_cast<size_t>(op.attributes_size()), spec.attributes.size()) << op.name();
    auto attribute = spec.attributes.begin();
    for (const v1::AttributeSpec& a : op.attributes()) {
      EXPECT_EQ(a.name(), (attribute++)->name) << op.name();
      EXPECT_NE(a.kind(), v1::ATTRIBUTE_KIND_UNSPECIFIED) << op.name() << "." << a.name();
      EXPECT_EQ(a.has_default_value(), !a.required()) << op.name() << "." << a.name();
      EXPECT_FALSE(a.doc().empty()) << op.name() << "." << a.name();
    }
  }
}

// The drift check: what the table says of each attribute is what the operation's readers do.
TEST_F(OpCatalogTest, KindsDefaultsAndRequiredAreWhatRunDoes) {
  v1::ListOperationsReply reply;
  ListOperations("", &reply);
  for (const v1::OperationSpec& op : reply.operations()) {
    const OpSpec& spec = RequireOp(op.name());
    const std::map<std::string, v1::Attribute> required = Required(op);
    const Tensor plain = Call(spec, required);
    for (const v1::AttributeSpec& a : op.attributes()) {
      const std::string where = op.name() + "." + a.name();
      std::map<std::string, v1::Attribute> attributes = required;
      attributes[a.name()] = WrongKind(a.kind());
      try {
        Call(spec, attributes);
        ADD_FAILURE() << where << " accepted a value of another kind";
      } catch (const RpcError& e) {
        EXPECT_THAT(e.what(),
                    HasSubstr("attribute '" + a.name() + "' must be " + ExpectedKindText(a.kind())))
            << where;
      }
      if (a.required()) {
        attributes.erase(a.name());
        try {
          Call(spec, attributes);
          ADD_FAILURE() << where << " is listed as required but Run works without it";
        } catch (const RpcError& e) {
          EXPECT_THAT(e.what(), HasSubstr("'" + a.name() + "'")) << where;
          EXPECT_THAT(e.what(), HasSubstr("required")) << where;
        }
        continue;
      }
      attributes[a.name()] = a.default_value();
      const Tensor explicit_default = Call(spec, attributes);
      EXPECT_EQ(explicit_default.shape(), plain.shape()) << where;
      EXPECT_EQ(explicit_default.layout(), plain.layout()) << where;
      EXPECT_EQ(Bytes(explicit_default), Bytes(plain)) << where << ": the listed default differs";
    }
  }
}

TEST_F(OpCatalogTest, DifferentiableIsWhetherTheOperationRecordsForBackward) {
  v1::ListOperationsReply reply;
  ListOperations("", &reply);
  for (const v1::OperationSpec& op : reply.operations()) {
    const Tensor y = Call(RequireOp(op.name()), Required(op), /*requires_grad=*/true);
    EXPECT_EQ(y.requires_grad(), op.differentiable()) << op.name();
  }
}

TEST_F(OpCatalogTest, DefaultsAreTypedValues) {
  v1::ListOperationsReply reply;
  ListOperations("MaxPool2d", &reply);
  ASSERT_EQ(reply.operations_size(), 1);
  const v1::OperationSpec& pool = reply.operations(0);
  EXPECT_EQ(pool.inputs(0).name(), "X");
  EXPECT_TRUE(pool.attributes(0).required());
  EXPECT_EQ(pool.attributes(1).name(), "strides");
  EXPECT_EQ(pool.attributes(1).kind(), v1::ATTRIBUTE_KIND_INTS);
  EXPECT_THAT(pool.attributes(1).default_value().ints().values(), ::testing::ElementsAre(1, 1));
  reply.Clear();
  ListOperations("Softmax", &reply);
  EXPECT_EQ(reply.operations(0).attributes(0).default_value().i(), -1);
  EXPECT_EQ(reply.operations(0).attributes(1).default_value().f(), 1.0f);
  EXPECT_EQ(reply.operations(0).attributes(1).kind(), v1::ATTRIBUTE_KIND_FLOAT);
  reply.Clear();
  ListOperations("Conv2d", &reply);
  const v1::OperationSpec& conv = reply.operations(0);
  ASSERT_EQ(conv.inputs_size(), 3);
  EXPECT_FALSE(conv.inputs(1).optional());
  EXPECT_TRUE(conv.inputs(2).optional()) << "the bias B may be left out";
  EXPECT_FALSE(conv.inputs(0).optional());
}

TEST_F(OpCatalogTest, TheOptimizersLastInputIsVariadic) {
  v1::ListOperationsReply reply;
  ListOperations("AdamW", &reply);
  ASSERT_EQ(reply.operations(0).inputs_size(), 2);
  EXPECT_EQ(reply.operations(0).inputs(0).name(), "step");
  EXPECT_FALSE(reply.operations(0).inputs(0).variadic());
  EXPECT_TRUE(reply.operations(0).inputs(1).variadic());
  reply.Clear();
  ListOperations("Add", &reply);
  EXPECT_FALSE(reply.operations(0).inputs(1).variadic());
}

TEST_F(OpCatalogTest, UnknownNamesSuggestTheNearest) {
  v1::ListOperationsReply reply;
  try {
    ListOperations("Softmx", &reply);
    ADD_FAILURE() << "no error";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(e.what(), HasSubstr("unknown operation 'Softmx'; did you mean 'Softmax'?"));
  }
  auto message = [](std::string_view name) {
    try {
      RequireOp(name);
    } catch (const RpcError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
      return std::string(e.what());
    }
    return std::string("(found)");
  };
  EXPECT_THAT(message("relu"), HasSubstr("did you mean 'Relu'?")) << "case-insensitive";
  EXPECT_THAT(message("Su"), HasSubstr("did you mean 'Sub' or 'Sum'?"));
  EXPECT_THAT(message("Convolution3d"), Not(HasSubstr("did you mean")));
  EXPECT_THAT(message("Convolution3d"), HasSubstr("ListOperations"));
  EXPECT_THAT(message(std::string("Re\nlu\x1b[2J\xff", 10)),
              HasSubstr("unknown operation 'Re\\nlu\\x1b[2J\\xff'"))
      << "control characters and non-ASCII bytes are escaped";
  EXPECT_THAT(message(std::string(100, 'A')), HasSubstr("'" + std::string(64, 'A') + "...'"))
      << "long names are cut";
}

TEST(NearestNamesTest, SmallestDistanceWithinAThirdOfTheLength) {
  const std::vector<std::string_view> names = {"Softmax", "LogSoftmax", "Sum", "Sub", "Mean"};
  EXPECT_THAT(NearestNames("SOFTMAX", names), ::testing::ElementsAre("Softmax"));
  EXPECT_THAT(NearestNames("Sux", names), ::testing::ElementsAre("Sum", "Sub"));
  EXPECT_THAT(NearestNames("logsoftmx", names), ::testing::ElementsAre("LogSoftmax"));
  EXPECT_TRUE(NearestNames("Transpose", names).empty());
  EXPECT_TRUE(NearestNames(std::string(1000, 'S'), names).empty());
}

}  // namespace
}  // namespace onemodel::server
