#include "server/ops/op_registry.h"

#include <cctype>
#include <limits>

#include "core/dtype/dtype.h"
#include "core/ops/activation.h"
#include "core/ops/compare.h"
#include "core/ops/conv.h"
#include "core/ops/conversion.h"
#include "core/ops/cumsum.h"
#include "core/ops/elementwise.h"
#include "core/ops/indexing.h"
#include "core/ops/linear.h"
#include "core/ops/normalization.h"
#include "core/ops/pad_tile.h"
#include "core/ops/pooling.h"
#include "core/ops/reduce.h"
#include "core/ops/reduce_extrema.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
#include "server/observability/logging.h"
#include "server/ops/grad_op.h"
#include "server/ops/loss_ops.h"
#include "server/ops/nearest_names.h"
#include "server/ops/optimizer_ops.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

using Kind = v1::Attribute::ValueCase;

// The attribute of `spec` called `name`, or null when it takes none of that name.
const AttrSpec* FindAttribute(const OpSpec& spec, std::string_view name) {
  for (const AttrSpec& a : spec.attributes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case v1::Attribute::kI:
      return "an int (i)";
    case v1::Attribute::kF:
      return "a float (f)";
    case v1::Attribute::kS:
      return "a string (s)";
    case v1::Attribute::kInts:
      return "a list of ints (ints)";
    case v1::Attribute::kFloats:
      return "a list of floats (floats)";
    case v1::Attribute::VALUE_NOT_SET:
      break;
  }
  return "no value";
}

// The attribute `name` when it holds an int (i): taken where a float (scale=2 means 2.0) or a
// list of ints (axes=1 means [1]) is expected, as clients write them; nullptr otherwise.
const v1::Attribute* IntGiven(const AttributeMap& attributes, std::string_view name) {
  auto it = attributes.find(std::string(name));
  return it != attributes.end() && it->second.value_case() == v1::Attribute::kI ? &it->second
                                                                                : nullptr;
}

int32_t CheckedInt32(int64_t v) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgument("value " + std::to_string(v) + " does not fit in 32 bits");
  }
  return static_cast<int32_t>(v);
}

Layout ParseLayout(const OpCall& call) {
  std::string name(call.String("layout"));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name == "NCHW") return Layout::kNchw;
  if (name == "NHWC") return Layout::kNhwc;
  if (name == "BLOCKED") return Layout::kBlocked;
  if (name == "BLOCKEDWEIGHTS") return Layout::kBlockedWeights;
  throw InvalidArgument(
      "attribute 'layout' must be \"NCHW\", \"NHWC\", \"Blocked\" or \"BlockedWeights\" (got \"" +
      Printable(name, 32) + "\")");
}

// The attribute `name`: two values [height, width], each at least `min`.
std::vector<int> PoolPair(const OpCall& call, std::string_view name, std::vector<int> fallback,
                          int min) {
  std::vector<int> v = call.Ints32(name, std::move(fallback));
  if (v.size() != 2) {
    throw InvalidArgument("attribute '" + std::string(name) +
                          "' must hold two values [height, width] (got " +
                          std::to_string(v.size()) + ")");
  }
  if (v[0] < min || v[1] < min) {
    throw InvalidArgument("attribute '" + std::string(name) +
                          "' must hold values >= " + std::to_string(min) + " (got [" +
                          std::to_string(v[0]) + ", " + std::to_string(v[1]) + "])");
  }
  return v;
}

// The 0-or-1 attribute `name`.
bool PoolFlag(const OpCall& call, std::string_view name) {
  const int64_t v = call.Int(name, 0);
  if (v != 0 && v != 1) {
    throw InvalidArgument("attribute '" + std::string(name) + "' must be 0 or 1 (got " +
                          std::to_string(v) + ")");
  }
  return v == 1;
}

std::vector<int> KernelShape(const OpCall& call) {
  if (!call.Has("kernel_shape")) {
    throw InvalidArgument(
        "attribute 'kernel_shape' (a list of two ints, [height, width]) is required");
  }
  return PoolPair(call, "kernel_shape", {}, 1);
}

MaxPool2dParams PoolParams(const OpCall& call) {
  const std::vector<int> k = KernelShape(call);
  const std::vector<int> s = PoolPair(call, "strides", {1, 1}, 1);
  const std::vector<int> p = PoolPair(call, "pads", {0, 0}, 0);
  const std::vector<int> d = PoolPair(call, "dilations", {1, 1}, 1);
  return {k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], PoolFlag(call, "ceil_mode")};
}

AvgPool2dParams AvgParams(const OpCall& call) {
  const std::vector<int> k = KernelShape(call);
  const std::vector<int> s = PoolPair(call, "strides", {1, 1}, 1);
  const std::vector<int> p = PoolPair(call, "pads", {0, 0}, 0);
  return {k[0],
          k[1],
          s[0],
          s[1],
          p[0],
          p[1],
          PoolFlag(call, "ceil_mode"),
          PoolFlag(call, "count_include_pad")};
}

// A convolution attribute as ONNX spells it: two values [height, width], each >= lowest; pads
// also four [top, left, bottom, right] (two mean both sides). Returns four values for pads.
std::vector<int> ConvList(const OpCall& call, std::string_view name, std::vector<int> fallback,
                          int lowest) {
  std::vector<int> v = call.Ints32(name, std::move(fallback));
  const bool pads = name == "pads";
  if (v.size() != 2 && !(pads && v.size() == 4)) {
    throw InvalidArgument("attribute '" + std::string(name) + "' must hold " +
                          (pads ? "four values [top, left, bottom, right] or two [height, width]"
                                : "two values [height, width]") +
                          " (got " + std::to_string(v.size()) + ")");
  }
  for (int x : v) {
    if (x < lowest) {
      throw InvalidArgument("attribute '" + std::string(name) + "' must hold values >= " +
                            std::to_string(lowest) + " (got " + std::to_string(x) + ")");
    }
  }
  if (v.size() == 2) v.insert(v.end(), {v[0], v[1]});
  return v;
}

// Conv2d's attributes as ONNX's Conv spells them: strides and dilations [height, width] (each
// >= 1), pads [top, left, bottom, right] or [height, width] for both sides (each >= 0), and
// group (>= 1), keep_layout (0 or 1).
Conv2dParams ConvParams(const OpCall& call) {
  const std::vector<int> s = ConvList(call, "strides", {1, 1}, 1);
  const std::vector<int> p = ConvList(call, "pads", {0, 0, 0, 0}, 0);
  const std::vector<int> d = ConvList(call, "dilations", {1, 1}, 1);
  const int64_t group = call.Int("group", 1);
  if (group < 1 || group > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgument("attribute 'group' must be >= 1 and divide the input and output " +
                          std::string("channels (got ") + std::to_string(group) + ")");
  }
  const int64_t keep = call.Int("keep_layout", 0);
  if (keep != 0 && keep != 1) {
    throw InvalidArgument("attribute 'keep_layout' must be 0 (NCHW output) or 1 (an NHWC " +
                          std::string("input's layout) (got ") + std::to_string(keep) + ")");
  }
  Conv2dParams params{s[0], s[1], p[0], p[1], p[2], p[3], d[0], d[1], static_cast<int32_t>(group)};
  params.keep_layout = static_cast<int32_t>(keep);
  return params;
}

// ConvTranspose2d's attributes: Conv2d's, plus output_padding [height, width] (each >= 0).
ConvTranspose2dParams ConvTransposeParams(const OpCall& call) {
  const std::vector<int> o = ConvList(call, "output_padding", {0, 0}, 0);
  return {ConvParams(call), o[0], o[1]};
}

// Gelu's `approximate`: "tanh" (the default, spec 8) or "none" (the erf form), as PyTorch.
ops::GeluApproximation ParseGeluApproximation(const OpCall& call) {
  if (!call.Has("approximate")) return ops::GeluApproximation::kTanh;
  const std::string_view name = call.String("approximate");
  if (name == "tanh") return ops::GeluApproximation::kTanh;
  if (name == "none") return ops::GeluApproximation::kNone;
  throw InvalidArgument("attribute 'approximate' must be \"tanh\" or \"none\" (got \"" +
                        Printable(name, 32) + "\")");
}

// Pad's `mode`: "constant" (the default), "reflect", "edge" or "wrap". An unknown mode is shown
// escaped and cut to 32 bytes, as every string a client sends.
ops::PadMode ParsePadMode(const OpCall& call) {
  if (!call.Has("mode")) return ops::PadMode::kConstant;
  const std::string_view name = call.String("mode");
  for (std::string_view known : {"constant", "reflect", "edge", "wrap"}) {
    if (name == known) return ops::ParsePadMode(name);
  }
  throw InvalidArgument(
      "attribute 'mode' must be \"constant\", \"reflect\", \"edge\" or \"wrap\" (got \"" +
      Printable(name, 32) + "\")");
}

Tensor RunBinary(BinaryOp op, const OpCall& c) {
  return ops::Binary(op, c.in(0), c.in(1), c.ctx());
}
Tensor RunUnary(UnaryOp op, const OpCall& c) { return ops::Unary(op, c.in(0), c.ctx()); }

constexpr Kind kI = v1::Attribute::kI;
constexpr Kind kF = v1::Attribute::kF;
constexpr Kind kS = v1::Attribute::kS;
constexpr Kind kInts = v1::Attribute::kInts;

// clang-format off
#define ONEMODEL_BINARY(Name, Doc)                                       \
  {#Name, {"A", "B"}, {}, true, Doc,                                     \
   [](const OpCall& c) { return RunBinary(BinaryOp::k##Name, c); }}
#define ONEMODEL_UNARY(Name, Doc)                                        \
  {#Name, {"X"}, {}, true, Doc,                                          \
   [](const OpCall& c) { return RunUnary(UnaryOp::k##Name, c); }}
#define ONEMODEL_COMPARE(Name, Doc)                                      \
  {#Name, {"A", "B"}, {}, false, Doc " (BOOL; NaN compares false)",     \
   [](const OpCall& c) {                                                 \
     return ops::Compare(ops::CompareOp::k##Name, c.in(0), c.in(1), c.ctx()); }}

constexpr AttrSpec kAxes = {"axes", kInts, "[]", "the axes to reduce; [] reduces all"};
constexpr AttrSpec kKeepDims = {"keepdims", kI, "0", "1 keeps each reduced axis with extent 1"};
constexpr AttrSpec kAxis = {"axis", kI, "-1", "the axis to normalize over"};
constexpr AttrSpec kKeepLayout = {"keep_layout", kI, "0",
                                  "1 writes the output NHWC when X is NHWC (else NCHW)"};
constexpr AttrSpec kArgAxis = {"axis", kI, "0", "the axis to search along"};
constexpr AttrSpec kSelectLastIndex = {"select_last_index", kI, "0",
                                       "1 returns the last of equal extrema, not the first"};
constexpr AttrSpec kScale = {"scale", kF, "1", "multiplies X first (1/temperature)"};
constexpr AttrSpec kKernelShape = {"kernel_shape", kInts, "", "the window [height, width]"};
constexpr AttrSpec kStrides = {"strides", kInts, "[1, 1]", "the window's step [height, width]"};
constexpr AttrSpec kPads = {"pads", kInts, "[0, 0]",
                            "padding [height, width] on both sides, less than the window"};
constexpr AttrSpec kDilations = {"dilations", kInts, "[1, 1]",
                                 "the step between window elements [height, width]"};
constexpr AttrSpec kCeilMode = {"ceil_mode", kI, "0",
                                "1 rounds the output extent up (ONNX, PyTorch)"};

// A plain array, so each row's lists live as long as the table.
const OpSpec kOps[] = {
    ONEMODEL_BINARY(Add, "A + B, elementwise with numpy broadcasting"),
    ONEMODEL_BINARY(Sub, "A - B, elementwise with numpy broadcasting"),
    ONEMODEL_BINARY(Mul, "A * B, elementwise with numpy broadcasting"),
    ONEMODEL_BINARY(Div, "A / B, elementwise with numpy broadcasting"),
    ONEMODEL_BINARY(Max, "the larger of A and B, elementwise with numpy broadcasting"),
    ONEMODEL_BINARY(Min, "the smaller of A and B, elementwise with numpy broadcasting"),
    ONEMODEL_BINARY(Pow, "A to the power B, elementwise with numpy broadcasting"),
    ONEMODEL_UNARY(Neg, "-X"), ONEMODEL_UNARY(Abs, "|X|"),
    ONEMODEL_UNARY(Exp, "e to the power X"), ONEMODEL_UNARY(Log, "the natural logarithm of X"),
    ONEMODEL_UNARY(Sqrt, "the square root of X"),
    ONEMODEL_UNARY(Relu, "max(X, 0)"), ONEMODEL_UNARY(Sigmoid, "1 / (1 + e^-X)"),
    ONEMODEL_UNARY(Tanh, "the hyperbolic tangent of X"),
    {"Gelu", {"X"},
     {{"approximate", kS, "tanh", "tanh (the tanh approximation) or none (the erf form)"}}, true,
     "GELU of X", [](const OpCall& c) {
       return ops::Gelu(c.in(0), ParseGeluApproximation(c), c.ctx()); }},
    ONEMODEL_UNARY(Erf, "the error function of X"),
    ONEMODEL_COMPARE(Equal, "A == B, elementwise with numpy broadcasting"),
    ONEMODEL_COMPARE(Less, "A < B, elementwise with numpy broadcasting"),
    ONEMODEL_COMPARE(LessEqual, "A <= B, elementwise with numpy broadcasting"),
    ONEMODEL_COMPARE(Greater, "A > B, elementwise with numpy broadcasting"),
    ONEMODEL_COMPARE(GreaterEqual, "A >= B, elementwise with numpy broadcasting"),
    {"Where", {"condition", "A", "B"}, {}, true,
     "A where condition (BOOL) is true, else B, with numpy broadcasting of all three",
     [](const OpCall& c) { return ops::Where(c.in(0), c.in(1), c.in(2), c.ctx()); }},
    {"Clip", {"X"},
     {{"min", kF, "-inf", "the lower bound"}, {"max", kF, "inf", "the upper bound (wins over min)"}},
     true, "X limited to [min, max] (torch.clamp)", [](const OpCall& c) {
       return ops::Clip(c.in(0), c.Float("min", -std::numeric_limits<float>::infinity()),
                        c.Float("max", std::numeric_limits<float>::infinity()), c.ctx()); }},
    {"LeakyRelu", {"X"}, {{"alpha", kF, "0.01", "the slope for X <= 0"}}, true,
     "X where X > 0, else alpha * X",
     [](const OpCall& c) { return ops::LeakyRelu(c.in(0), c.Float("alpha", 0.01f), c.ctx()); }},
    {"MatMul", {"A", "B"}, {}, true, "matrix product of A and B (numpy matmul: batched, 1-d)",
     [](const OpCall& c) { return ops::MatMul(c.in(0), c.in(1), c.ctx()); }},
    {"MaxPool2d", {"X"}, {kKernelShape, kStrides, kPads, kDilations, kCeilMode}, true,
     "window maxima of an (N, C, H, W) FLOAT tensor",
     [](const OpCall& c) { return ops::MaxPool2d(c.in(0), PoolParams(c), c.ctx()); }},
    {"Conv2d", {"X", "W", "B"},
     {{"strides", kInts, "[1, 1]", "the kernel's step [height, width]"},
      {"pads", kInts, "[0, 0, 0, 0]", "zero padding [top, left, bottom, right] (or [height, width])"},
      {"dilations", kInts, "[1, 1]", "the spacing of the kernel's taps [height, width]"},
      {"group", kI, "1", "channel groups; C and K are multiples (C: depthwise)"},
      kKeepLayout},
     true, "convolution of X (N, C, H, W) with W (K, C / group, KH, KW), plus B (K) if given",
     [](const OpCall& c) {
       return ops::Conv2d(c.in(0), c.in(1), c.size() > 2 ? &c.in(2) : nullptr, ConvParams(c),
                          c.ctx()); }, /*variadic=*/false, /*optional_inputs=*/1},
    {"ReluMaxPool2d", {"X"}, {kKernelShape, kStrides, kPads, kDilations, kCeilMode}, true,
     "MaxPool2d of Relu(X) in one pass; windows without a positive element pass no gradient",
     [](const OpCall& c) { return ops::ReluMaxPool2d(c.in(0), PoolParams(c), c.ctx()); }},
    {"AvgPool2d", {"X"},
     {kKernelShape, kStrides, kPads, kCeilMode,
      {"count_include_pad", kI, "0", "1 divides by the window's size including padding"}},
     true, "window averages of an (N, C, H, W) FLOAT tensor",
     [](const OpCall& c) { return ops::AvgPool2d(c.in(0), AvgParams(c), c.ctx()); }},
    {"GlobalAvgPool2d", {"X"}, {}, true, "the mean of each (n, c) plane, shape (N, C, 1, 1)",
     [](const OpCall& c) { return ops::GlobalAvgPool2d(c.in(0), c.ctx()); }},
    {"Sum", {"X"}, {kAxes, kKeepDims}, true, "the sum over axes", [](const OpCall& c) {
       return ops::Sum(c.in(0), c.Ints32("axes", {}), c.Int("keepdims", 0) != 0, c.ctx()); }},
    {"Mean", {"X"}, {kAxes, kKeepDims}, true, "the mean over axes", [](const OpCall& c) {
       return ops::Mean(c.in(0), c.Ints32("axes", {}), c.Int("keepdims", 0) != 0, c.ctx()); }},
    {"Softmax", {"X"}, {kAxis, kScale}, true, "softmax of scale * X over axis",
     [](const OpCall& c) {
       return ops::Softmax(c.in(0), c.Int32("axis", -1), c.ctx(), c.Float("scale", 1.0f)); }},
    {"LogSoftmax", {"X"}, {kAxis, kScale}, true, "log of the softmax of scale * X over axis",
     [](const OpCall& c) {
       return ops::LogSoftmax(c.in(0), c.Int32("axis", -1), c.ctx(), c.Float("scale", 1.0f)); }},
    {"Cast", {"X"},
     {{"to", kI, "", "the ONNX TensorProto.DataType (1 FLOAT, 10 FLOAT16, 7 INT64, ...)"}}, true,
     "X converted to another data type", [](const OpCall& c) {
       return ops::Cast(c.in(0), FromOnnx(CheckedInt32(c.Int("to"))), c.ctx()); }},
    {"Contiguous", {"X"}, {}, true, "X in a dense row-major buffer (X itself when it is one)",
     [](const OpCall& c) { return ops::Contiguous(c.in(0), c.ctx()); }},
    {"Copy", {"X"}, {}, true, "a copy of X in a new buffer",
     [](const OpCall& c) { return ops::Copy(c.in(0), c.ctx()); }},
    {"Detach", {"X"}, {}, false, "X without gradient tracking (shares its buffer)",
     [](const OpCall& c) { return c.in(0).Detach(); }},
    {"ToLayout", {"X"},
     {{"layout", kS, "", "NCHW, NHWC, Blocked or BlockedWeights"},
      {"block", kI, "16", "channels per block, for Blocked and BlockedWeights"}},
     true, "X (N, C, H, W) in another physical layout", [](const OpCall& c) {
       return ops::ToLayout(c.in(0), ParseLayout(c), c.ctx(), c.Int32("block", 16)); }},
    {"Reshape", {"X"}, {{"shape", kInts, "", "the new shape; one -1 is inferred"}}, true,
     "X with another shape and the same elements (a view when strides allow)",
     [](const OpCall& c) { return ops::Reshape(c.in(0), c.Ints("shape"), c.ctx()); }},
    {"Permute", {"X"}, {{"perm", kInts, "", "the new order of X's dimensions, one per dimension"}},
     true, "a view of X with its dimensions reordered",
     [](const OpCall& c) { return ops::Permute(c.in(0), c.Ints32("perm"), c.ctx()); }},
    {"Transpose", {"X"},
     {{"dim0", kI, "0", "one dimension to swap"}, {"dim1", kI, "1", "the other"}}, true,
     "a view of X with two dimensions swapped", [](const OpCall& c) {
       return ops::Transpose(c.in(0), c.Int32("dim0", 0), c.Int32("dim1", 1), c.ctx()); }},
    {"Slice", {"X"},
     {{"dim", kI, "0", "the dimension to slice"},
      {"start", kI, "", "the first index (negative: from the end)"},
      {"stop", kI, "", "one past the last index (negative: from the end)"},
      {"step", kI, "1", "the stride (negative: backwards)"}},
     true, "a view of X[start:stop:step] along dim", [](const OpCall& c) {
       return ops::Slice(c.in(0), c.Int32("dim", 0), c.Int("start"), c.Int("stop"),
                         c.Int("step", 1), c.ctx()); }},
    {"Expand", {"X"}, {{"shape", kInts, "", "the shape to broadcast X to"}}, true,
     "a broadcast view of X (stride 0 along expanded dimensions)", [](const OpCall& c) {
       return ops::Expand(c.in(0), Shape(std::span<const int64_t>(c.Ints("shape"))), c.ctx()); }},
    {"Squeeze", {"X"}, {{"axes", kInts, "[]", "extent-1 dimensions to remove; [] removes all"}},
     true, "a view of X without extent-1 dimensions",
     [](const OpCall& c) { return ops::Squeeze(c.in(0), c.Ints32("axes", {}), c.ctx()); }},
    {"Unsqueeze", {"X"}, {{"dim", kI, "0", "where the new extent-1 dimension goes"}}, true,
     "a view of X with one more dimension, of extent 1",
     [](const OpCall& c) { return ops::Unsqueeze(c.in(0), c.Int32("dim", 0), c.ctx()); }},
    {"SGD", {"step", "tensors"},
     {{"lr", kF, "", "the learning rate"},
      {"momentum", kF, "0", "the momentum factor; not 0 adds the momentum_buffers list"},
      {"dampening", kF, "0", "dampening for momentum"},
      {"nesterov", kI, "0", "1 uses Nesterov momentum"},
      {"weight_decay", kF, "0", "L2 penalty added to the gradient"}},
     false, "torch.optim.SGD's step on params, grads[, momentum_buffers] in place; the new step",
     &RunSgd, /*variadic=*/true},
    {"AdamW", {"step", "tensors"},
     {{"lr", kF, "0.001", "the learning rate"},
      {"beta1", kF, "0.9", "decay of the running mean of gradients"},
      {"beta2", kF, "0.999", "decay of the running mean of squared gradients"},
      {"eps", kF, "1e-08", "added to the denominator"},
      {"weight_decay", kF, "0.01", "decoupled weight decay"},
      {"amsgrad", kI, "0", "1 uses AMSGrad (adds the max_exp_avg_sqs list)"}},
     false,
     "torch.optim.AdamW's step on params, grads, exp_avgs, exp_avg_sqs in place; the new step",
     &RunAdamW, /*variadic=*/true},
    {"Grad", {"Y", "X"},
     {{"index", kI, "", "which X to give the gradient of (0 is the first after Y)"},
      {"retain_graph", kI, "0", "1 keeps Y's graph for another backward pass"}},
     false,
     "d Y / d X[index] for a one-element Y; the Grad operations of one Run with the same Y "
     "and X share one backward pass",
     &RunGrad, /*variadic=*/true},
    {"ClipGradNorm", {"grads"},
     {{"max_norm", kF, "", "the largest total norm left unscaled"},
      {"norm_type", kF, "2", "the p of the p-norm (inf: the largest magnitude)"},
      {"error_if_nonfinite", kI, "0", "1 refuses a NaN or infinite total norm"}},
     false, "scales grads in place to a total norm of at most max_norm; the total norm",
     &RunClipGradNorm, /*variadic=*/true},
    {"Embedding", {"table", "indices"},
     {{"skip_id", kI, "-1", "a row that gets no gradient (PyTorch's padding_idx); -1: none"}},
     true, "the rows of table (V, D) picked by indices (INT32/INT64), shape indices + [D]",
     [](const OpCall& c) {
       const int64_t skip = c.Int("skip_id", -1);
       return ops::Embedding(c.in(0), c.in(1), skip == -1 ? std::nullopt : std::optional(skip),
                             c.ctx()); }},
    {"Gather", {"data", "indices"},
     {{"axis", kI, "0", "the axis indices pick along (negative: from the end)"}}, true,
     "ONNX Gather: the slices of data along axis at indices (INT32/INT64, negative from the end)",
     [](const OpCall& c) {
       return ops::Gather(c.in(0), c.in(1), c.Int32("axis", 0), c.ctx()); }},
    {"Concat", {"inputs"}, {{"axis", kI, "0", "the axis to join along (negative: from the end)"}},
     true, "the inputs joined along axis (equal extents elsewhere)",
     [](const OpCall& c) { return ops::Concat(c.From(0), c.Int32("axis", 0), c.ctx()); },
     /*variadic=*/true},
    {"Split", {"X"},
     {{"axis", kI, "0", "the axis to cut (negative: from the end)"},
      {"split", kInts, "[]", "the piece sizes, summing to the axis' extent; []: num_outputs"},
      {"num_outputs", kI, "1", "with split [], this many pieces of ceil(n / num_outputs)"},
      {"index", kI, "", "which piece to return (one operation per piece)"}},
     true, "piece index of X cut along axis (ONNX Split's output index; a view)",
     [](const OpCall& c) {
       return ops::Split(c.in(0), c.Int32("axis", 0), c.Ints("split", {}),
                         c.Int("num_outputs", 1), c.Int("index"), c.ctx()); }},
    {"ReduceMax", {"X"}, {kAxes, kKeepDims}, true,
     "the largest element over axes (NaN wins; empty: -inf); gradient to the first largest",
     [](const OpCall& c) {
       return ops::ReduceMax(c.in(0), c.Ints32("axes", {}), c.Int("keepdims", 0) != 0,
                             c.ctx()); }},
    {"ReduceMin", {"X"}, {kAxes, kKeepDims}, true,
     "the smallest element over axes (NaN wins; empty: +inf); gradient to the first smallest",
     [](const OpCall& c) {
       return ops::ReduceMin(c.in(0), c.Ints32("axes", {}), c.Int("keepdims", 0) != 0,
                             c.ctx()); }},
    {"ArgMax", {"X"}, {kArgAxis, kKeepDims, kSelectLastIndex}, false,
     "the INT64 index of the largest element along axis (NaN counts as largest)",
     [](const OpCall& c) {
       return ops::ArgMax(c.in(0), c.Int32("axis", 0), c.Int("keepdims", 0) != 0,
                          PoolFlag(c, "select_last_index"), c.ctx()); }},
    {"ArgMin", {"X"}, {kArgAxis, kKeepDims, kSelectLastIndex}, false,
     "the INT64 index of the smallest element along axis (NaN counts as smallest)",
     [](const OpCall& c) {
       return ops::ArgMin(c.in(0), c.Int32("axis", 0), c.Int("keepdims", 0) != 0,
                          PoolFlag(c, "select_last_index"), c.ctx()); }},
    {"Pad", {"X"},
     {{"pads", kInts, "", "[x1_begin, x2_begin, ..., x1_end, x2_end, ...]; negative crops"},
      {"mode", kS, "constant", "constant, reflect, edge or wrap"},
      {"value", kF, "0", "the constant of constant mode"}},
     true, "X padded (or cropped) along each axis, as ONNX Pad", [](const OpCall& c) {
       return ops::Pad(c.in(0), c.Ints("pads"),
                       ParsePadMode(c),
                       c.Float("value", 0.0f), c.ctx()); }},
    {"Tile", {"X"}, {{"repeats", kInts, "", "how many copies along each axis (>= 0)"}}, true,
     "X repeated along each axis", [](const OpCall& c) {
       return ops::Tile(c.in(0), c.Ints("repeats"), c.ctx()); }},
    {"CumSum", {"X"},
     {{"axis", kI, "0", "the axis to sum along"},
      {"exclusive", kI, "0", "1 leaves each element out of its own sum"},
      {"reverse", kI, "0", "1 sums from the end"}},
     true, "running sums of X along axis (in order, in double)", [](const OpCall& c) {
       return ops::CumSum(c.in(0), c.Int32("axis", 0), PoolFlag(c, "exclusive"),
                          PoolFlag(c, "reverse"), c.ctx()); }},
    {"LayerNorm", {"X", "Scale", "B"},
     {{"axis", kI, "-1", "the first normalized axis; it normalizes over X.shape[axis:]"},
      {"epsilon", kF, "1e-05", "added to the variance"}},
     true, "(X - mean) / sqrt(var + epsilon) * Scale + B over the last axes (Scale, B optional)",
     [](const OpCall& c) {
       return ops::LayerNorm(c.in(0), c.size() > 1 ? &c.in(1) : nullptr,
                             c.size() > 2 ? &c.in(2) : nullptr, c.Int32("axis", -1),
                             c.Float("epsilon", 1e-5f), c.ctx()); },
     /*variadic=*/false, /*optional_inputs=*/2},
    {"RMSNorm", {"X", "Scale"},
     {{"axis", kI, "-1", "the first normalized axis; it normalizes over X.shape[axis:]"},
      {"epsilon", kF, "1e-05", "added to the mean square"}},
     true, "X / sqrt(mean(X^2) + epsilon) * Scale over the last axes (Scale optional)",
     [](const OpCall& c) {
       return ops::RMSNorm(c.in(0), c.size() > 1 ? &c.in(1) : nullptr, c.Int32("axis", -1),
                           c.Float("epsilon", 1e-5f), c.ctx()); },
     /*variadic=*/false, /*optional_inputs=*/1},
    {"BatchNorm2d", {"X", "running_mean", "running_var", "Scale", "B"},
     {{"training", kI, "0", "1 uses the batch's statistics and updates the running ones in place"},
      {"momentum", kF, "0.1", "running = (1 - momentum) * running + momentum * batch"},
      {"epsilon", kF, "1e-05", "added to the variance"}},
     true, "per-channel normalization of X (N, C, H, W) * Scale + B (Scale, B optional)",
     [](const OpCall& c) {
       return ops::BatchNorm2d(c.in(0), c.in(1), c.in(2), c.size() > 3 ? &c.in(3) : nullptr,
                               c.size() > 4 ? &c.in(4) : nullptr,
                               {.training = PoolFlag(c, "training"),
                                .momentum = c.Float("momentum", 0.1f),
                                .eps = c.Float("epsilon", 1e-5f)}, c.ctx()); },
     /*variadic=*/false, /*optional_inputs=*/2},
    {"CrossEntropy", {"X", "target", "weight"},
     {{"ignore_index", kI, "-100", "targets equal to it add nothing"},
      {"reduction", kS, "mean", "none, mean (over the weights of the counted targets) or sum"},
      {"label_smoothing", kF, "0", "mixes the target with the uniform distribution, in [0, 1]"}},
     true, "torch's cross_entropy of logits X (N, C, ...) and class indices target (INT64)",
     &RunCrossEntropy, /*variadic=*/false, /*optional_inputs=*/1},
    {"NLLLoss", {"X", "target", "weight"},
     {{"ignore_index", kI, "-100", "targets equal to it add nothing"},
      {"reduction", kS, "mean", "none, mean (over the weights of the counted targets) or sum"}},
     true, "torch's nll_loss of log-probabilities X (N, C, ...) and class indices target (INT64)",
     &RunNllLoss, /*variadic=*/false, /*optional_inputs=*/1},
    {"MSELoss", {"X", "target"},
     {{"reduction", kS, "mean", "none, mean or sum"}}, true,
     "the squared differences of X and target (same shape), reduced", &RunMseLoss},
    {"Dropout", {"X"},
     {{"ratio", kF, "0.5", "the probability of zeroing an element, in [0, 1]"},
      {"seed", kI, "", "the mask's seed: the same seed gives the same mask"},
      {"training", kI, "1", "0 returns X unchanged"}},
     true, "X with elements zeroed at random (a seeded mask) and the rest scaled by 1/(1-ratio)",
     &RunDropout},
    {"ConvTranspose2d", {"X", "W", "B"},
     {{"strides", kInts, "[1, 1]", "the kernel's step [height, width] over the output"},
      {"pads", kInts, "[0, 0, 0, 0]", "rows and columns cut from the output [top, left, bottom, right] (or [height, width])"},
      {"dilations", kInts, "[1, 1]", "the spacing of the kernel's taps [height, width]"},
      {"group", kI, "1", "channel groups; C is a multiple"},
      {"output_padding", kInts, "[0, 0]", "rows and columns added at the bottom and right [height, width]"},
      kKeepLayout},
     true, "transposed convolution of X (N, C, H, W) with W (C, K / group, KH, KW), plus B (K) if given",
     [](const OpCall& c) {
       return ops::ConvTranspose2d(c.in(0), c.in(1), c.size() > 2 ? &c.in(2) : nullptr,
                                   ConvTransposeParams(c), c.ctx()); }, /*variadic=*/false,
     /*optional_inputs=*/1},
};
// clang-format on

#undef ONEMODEL_BINARY
#undef ONEMODEL_UNARY
#undef ONEMODEL_COMPARE

}  // namespace

bool OpCall::Has(std::string_view name) const {
  return attributes_.find(std::string(name)) != attributes_.end();
}

const v1::Attribute* OpCall::Get(std::string_view name, Kind kind) const {
  auto it = attributes_.find(std::string(name));
  if (it == attributes_.end()) return nullptr;
  if (it->second.value_case() != kind) {
    const AttrSpec* known = FindAttribute(spec_, name);
    Fail("attribute '" + std::string(name) + "' must be " + std::string(KindName(kind)) + " (got " +
         std::string(KindName(it->second.value_case())) + ")" +
         (known ? ": " + std::string(known->doc) : ""));
  }
  return &it->second;
}

void OpCall::Fail(const std::string& message) const { throw InvalidArgument(message); }

int64_t OpCall::Int(std::string_view name) const {
  const v1::Attribute* a = Get(name, v1::Attribute::kI);
  if (!a) Fail("attribute '" + std::string(name) + "' (an int) is required");
  return a->i();
}

int64_t OpCall::Int(std::string_view name, int64_t fallback) const {
  const v1::Attribute* a = Get(name, v1::Attribute::kI);
  return a ? a->i() : fallback;
}

int OpCall::Int32(std::string_view name, int fallback) const {
  const int64_t v = Int(name, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    Fail("attribute '" + std::string(name) + "' = " + std::to_string(v) + " is out of range");
  }
  return static_cast<int>(v);
}

float OpCall::Float(std::string_view name) const {
  if (!Has(name)) Fail("attribute '" + std::string(name) + "' (a float) is required");
  return Float(name, 0);
}

float OpCall::Float(std::string_view name, float fallback) const {
  if (const v1::Attribute* i = IntGiven(attributes_, name)) return static_cast<float>(i->i());
  const v1::Attribute* a = Get(name, v1::Attribute::kF);
  return a ? a->f() : fallback;
}

std::string_view OpCall::String(std::string_view name) const {
  const v1::Attribute* a = Get(name, v1::Attribute::kS);
  if (!a) Fail("attribute '" + std::string(name) + "' (a string) is required");
  return a->s();
}

std::vector<int64_t> OpCall::Ints(std::string_view name) const {
  if (const v1::Attribute* i = IntGiven(attributes_, name)) return {i->i()};
  const v1::Attribute* a = Get(name, v1::Attribute::kInts);
  if (!a) Fail("attribute '" + std::string(name) + "' (a list of ints) is required");
  return {a->ints().values().begin(), a->ints().values().end()};
}

std::vector<int64_t> OpCall::Ints(std::string_view name, std::vector<int64_t> fallback) const {
  return Has(name) ? Ints(name) : std::move(fallback);
}

std::vector<int> OpCall::Ints32(std::string_view name) const {
  if (!Has(name)) Fail("attribute '" + std::string(name) + "' (a list of ints) is required");
  return Ints32(name, {});
}

std::vector<int> OpCall::Ints32(std::string_view name, std::vector<int> fallback) const {
  if (!Has(name)) return fallback;
  std::vector<int> out;
  for (int64_t v : Ints(name)) {
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      Fail("attribute '" + std::string(name) + "' holds " + std::to_string(v) +
           ", which is out of range");
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

const OpSpec* FindOp(std::string_view name) {
  for (const OpSpec& spec : kOps) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::span<const OpSpec> AllOps() { return kOps; }

const OpSpec& RequireOp(std::string_view name, grpc::StatusCode code) {
  if (const OpSpec* spec = FindOp(name)) return *spec;
  std::vector<std::string_view> names;
  for (const OpSpec& spec : kOps) names.push_back(spec.name);
  const std::vector<std::string_view> near = NearestNames(name, names);
  std::string hint;
  for (size_t i = 0; i < near.size(); ++i) {
    hint += i == 0 ? "did you mean '" : (i + 1 == near.size() ? " or '" : ", '");
    hint += std::string(near[i]) + "'";
  }
  throw RpcError(code, "unknown operation '" + Printable(name, 64) + "'; " +
                           (hint.empty() ? "" : hint + "? ") +
                           "ListOperations (onemodel ops) lists the operations");
}

void CheckSignature(const OpSpec& spec, int inputs, const AttributeMap& attributes) {
  const int want = static_cast<int>(spec.inputs.size());
  const int least = want - spec.optional_inputs;
  if (inputs < least || (!spec.variadic && inputs > want)) {
    const std::string range = spec.variadic    ? "at least "
                              : least < want ? std::to_string(least) + " to "
                                             : "";
    throw InvalidArgument("it takes " + range +
                          std::to_string(want) + (want == 1 ? " input" : " inputs") + " (got " +
                          std::to_string(inputs) + ")");
  }
  for (const auto& [name, value] : attributes) {
    if (FindAttribute(spec, name)) continue;
    std::string known;
    for (const AttrSpec& a : spec.attributes)
      known += (known.empty() ? "" : ", ") + std::string(a.name);
    throw InvalidArgument("there is no attribute '" + Printable(name, 64) + "' (" +
                          (known.empty() ? "it takes none" : "it takes " + known) + ")");
  }
}

}  // namespace onemodel::server
