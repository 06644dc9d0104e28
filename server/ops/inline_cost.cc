#include "server/ops/inline_cost.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "server/codec/tensor_codec.h"

namespace onemodel::server {
namespace {

// Sums and products stop here, far above any limit and far below overflow.
constexpr int64_t kCap = int64_t{1} << 62;

// a + b for a and b in [0, kCap], at most kCap (kCap + kCap would overflow int64).
int64_t CappedAdd(int64_t a, int64_t b) { return a > kCap - b ? kCap : a + b; }
int64_t CappedMul(int64_t a, int64_t b) {
  return a != 0 && b > kCap / a ? kCap : std::min(kCap, a * b);
}

// What the estimate knows of a value: its element count and size, and its shape when known.
struct Extent {
  int64_t elements = 0;
  int64_t element_bytes = 0;
  std::optional<Shape> shape;
  int64_t bytes() const { return CappedMul(elements, element_bytes); }
};

Extent OfShape(const Shape& shape, DType dtype) {
  return {shape.ElementCount(), ElementSize(dtype), shape};
}

// How an operation's output relates to its inputs.
enum class Rule {
  kSame,         // the shape and type of input 0 (elementwise, normalization, copies)
  kWidened,      // the shape of input 0 in a type of up to 8 bytes (Cast)
  kAtMostInput,  // at most input 0's elements, shape unknown (reductions and views)
  kBroadcast,    // numpy broadcasting of inputs 0 and 1
  kMatMul,       // numpy matmul of inputs 0 and 1; one more byte per multiply-add
  kExpand,       // the 'shape' attribute's elements (a broadcast view)
};

constexpr std::pair<std::string_view, Rule> kRules[] = {
    {"Add", Rule::kBroadcast},
    {"Sub", Rule::kBroadcast},
    {"Mul", Rule::kBroadcast},
    {"Div", Rule::kBroadcast},
    {"Max", Rule::kBroadcast},
    {"Min", Rule::kBroadcast},
    {"Pow", Rule::kBroadcast},
    {"Neg", Rule::kSame},
    {"Abs", Rule::kSame},
    {"Exp", Rule::kSame},
    {"Log", Rule::kSame},
    {"Sqrt", Rule::kSame},
    {"Relu", Rule::kSame},
    {"Sigmoid", Rule::kSame},
    {"Tanh", Rule::kSame},
    {"Gelu", Rule::kSame},
    {"Softmax", Rule::kSame},
    {"LogSoftmax", Rule::kSame},
    {"Contiguous", Rule::kSame},
    {"Copy", Rule::kSame},
    {"Detach", Rule::kSame},
    {"Cast", Rule::kWidened},
    {"Sum", Rule::kAtMostInput},
    {"Mean", Rule::kAtMostInput},
    {"Reshape", Rule::kAtMostInput},
    {"Permute", Rule::kAtMostInput},
    {"Transpose", Rule::kAtMostInput},
    {"Slice", Rule::kAtMostInput},
    {"Squeeze", Rule::kAtMostInput},
    {"Unsqueeze", Rule::kAtMostInput},
    {"MatMul", Rule::kMatMul},
    {"Expand", Rule::kExpand},
    {"Erf", Rule::kSame},
    {"Clip", Rule::kSame},
    {"LeakyRelu", Rule::kSame},
    {"Equal", Rule::kBroadcast},
    {"Less", Rule::kBroadcast},
    {"LessEqual", Rule::kBroadcast},
    {"Greater", Rule::kBroadcast},
    {"GreaterEqual", Rule::kBroadcast},
    {"CrossEntropy", Rule::kAtMostInput},  // reads all its inputs, writes at most x's elements
    {"NLLLoss", Rule::kAtMostInput},
    {"MSELoss", Rule::kBroadcast},  // same shapes (or refused)
    {"Dropout", Rule::kSame},
    // MaxPool2d, ReluMaxPool2d, AvgPool2d and GlobalAvgPool2d (padding and ceil_mode can
    // make the output larger than the input), ToLayout (blocks pad the channels), Where
    // (three operands), Conv2d (work grows with the kernel) and the optimizers (variadic
    // lists) are not bounded here: they run on a worker.
    {"ReduceMax", Rule::kAtMostInput},
    {"ReduceMin", Rule::kAtMostInput},
    {"CumSum", Rule::kSame},
    // Pad and Tile (their attributes set the output's size) and ArgMax/ArgMin (an INT64
    // output twice a FLOAT input's bytes) run on a worker.
};

std::optional<Rule> RuleOf(std::string_view op) {
  for (const auto& [name, rule] : kRules) {
    if (name == op) return rule;
  }
  return std::nullopt;
}

// Input `input` of a Run's operation; `outputs` are the extents of the earlier operations.
Extent InputExtent(Session& session, const v1::Input& input, const std::vector<Extent>& outputs) {
  switch (input.source_case()) {
    case v1::Input::kHandle:
      try {
        const Tensor& t = session.handles().Find(input.handle()).tensor;
        return OfShape(t.shape(), t.dtype());
      } catch (...) {
        return {};  // the run fails here
      }
    case v1::Input::kOutput:
      if (input.output() >= 0 && static_cast<size_t>(input.output()) < outputs.size()) {
        return outputs[static_cast<size_t>(input.output())];
      }
      return {};
    case v1::Input::kTensor:
      try {
        const onnx::TensorProto& proto = input.tensor();
        const TensorHeader h = DecodeHeader(
            proto.data_type(), {proto.dims().data(), static_cast<size_t>(proto.dims_size())});
        return OfShape(h.shape, h.dtype);
      } catch (...) {
        return {};
      }
    case v1::Input::SOURCE_NOT_SET:
      break;
  }
  return {};
}

// The output of a binary elementwise operation: the broadcast shape when both are known, else
// at most the product of the element counts (or the larger one when either is a single value).
Extent Broadcast(const Extent& a, const Extent& b) {
  const int64_t element_bytes = std::max(a.element_bytes, b.element_bytes);
  if (a.shape && b.shape) {
    try {
      const Shape s = Shape::Broadcast(*a.shape, *b.shape);
      return {s.ElementCount(), element_bytes, s};
    } catch (...) {
      return {};  // the operation fails on the same shapes before any work
    }
  }
  if (a.elements <= 1 || b.elements <= 1) {
    return {std::max(a.elements, b.elements), element_bytes, std::nullopt};
  }
  return {CappedMul(a.elements, b.elements), element_bytes, std::nullopt};
}

// The count of matrix products: the broadcast of the batch dimensions (all but the last two
// of a rank >= 2 shape), aligned from the right as numpy does. Extents that do not broadcast
// count as the larger (the operation refuses them before any work).
int64_t BatchCount(const Shape& x, const Shape& y) {
  const int bx = std::max(x.rank() - 2, 0), by = std::max(y.rank() - 2, 0);
  int64_t count = 1;
  for (int i = 0; i < std::max(bx, by); ++i) {
    const int64_t ex = i < bx ? x[bx - 1 - i] : 1;
    const int64_t ey = i < by ? y[by - 1 - i] : 1;
    count = CappedMul(count, ex == 1 ? ey : (ey == 1 ? ex : std::max(ex, ey)));
  }
  return count;
}

// The output of MatMul and its multiply-adds (numpy rules: 1-d operands gain an extent-1
// dimension; batch dimensions broadcast). Unknown shapes: both bounded by the elements'
// product.
std::pair<Extent, int64_t> MatMul(const Extent& a, const Extent& b) {
  const int64_t element_bytes = std::max(a.element_bytes, b.element_bytes);
  if (!a.shape || !b.shape || a.shape->rank() == 0 || b.shape->rank() == 0) {
    const int64_t bound =
        CappedMul(std::max<int64_t>(a.elements, 1), std::max<int64_t>(b.elements, 1));
    return {{bound, element_bytes, std::nullopt}, bound};
  }
  const Shape& x = *a.shape;
  const Shape& y = *b.shape;
  const int64_t m = x.rank() >= 2 ? x[x.rank() - 2] : 1;
  const int64_t k = x[x.rank() - 1];
  const int64_t n = y.rank() >= 2 ? y[y.rank() - 1] : 1;
  const int64_t out = CappedMul(CappedMul(BatchCount(x, y), m), n);
  return {{out, element_bytes, std::nullopt}, CappedMul(out, k)};
}

Extent Expand(const Extent& in, const v1::Operation& op) {
  const auto it = op.attributes().find("shape");
  if (it == op.attributes().end()) return {};
  int64_t elements = 1;
  for (int64_t d : it->second.ints().values()) {
    elements = CappedMul(elements, d < 0 ? std::max<int64_t>(in.elements, 1) : d);
  }
  return {elements, in.element_bytes, std::nullopt};
}

}  // namespace

int64_t RunCost(Session& session, const v1::RunRequest& request) {
  std::vector<Extent> outputs;
  outputs.reserve(static_cast<size_t>(request.operations_size()));
  int64_t cost = 0;
  for (const v1::Operation& op : request.operations()) {
    const std::optional<Rule> rule = RuleOf(op.op());
    if (!rule) return kNotInline;
    std::vector<Extent> in;
    for (const v1::Input& input : op.inputs()) {
      in.push_back(InputExtent(session, input, outputs));
      cost = CappedAdd(cost, in.back().bytes());
    }
    const Extent x = in.empty() ? Extent{} : in[0];
    const Extent y = in.size() < 2 ? Extent{} : in[1];
    Extent out;
    switch (*rule) {
      case Rule::kSame:
        out = x;
        break;
      case Rule::kWidened:
        out = {x.elements, 8, x.shape};
        break;
      case Rule::kAtMostInput:
        out = {x.elements, x.element_bytes, std::nullopt};
        break;
      case Rule::kBroadcast:
        out = Broadcast(x, y);
        break;
      case Rule::kMatMul: {
        int64_t multiply_adds = 0;
        std::tie(out, multiply_adds) = MatMul(x, y);
        cost = CappedAdd(cost, multiply_adds);
        break;
      }
      case Rule::kExpand:
        out = Expand(x, op);
        break;
    }
    cost = CappedAdd(cost, out.bytes());
    outputs.push_back(std::move(out));
  }
  return cost;
}

int64_t TensorProtoCost(const onnx::TensorProto& proto) {
  try {
    return DecodeHeader(proto.data_type(),
                        {proto.dims().data(), static_cast<size_t>(proto.dims_size())})
        .bytes;
  } catch (...) {
    return 0;  // decoding fails before it writes anything
  }
}

int64_t HandleCost(Session& session, const std::string& handle) {
  try {
    const Tensor& t = session.handles().Find(handle).tensor;
    return CappedMul(t.shape().ElementCount(), ElementSize(t.dtype()));
  } catch (...) {
    return 0;
  }
}

}  // namespace onemodel::server
