// Writes the seed corpus of the fuzz targets: serialized TensorProto and RunRequest messages
// that reach every element type, data field, operation, attribute and error path, so the
// fuzzers start deep and the replay tests cover them. The files are checked in; run this again
// after changing it (it rewrites the seed-* files and leaves regression inputs alone).
//
//   build/dev/tests/fuzz/make_fuzz_corpus tests/fuzz/corpus
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/v1/onemodel.pb.h"
#include "onnx/onnx.pb.h"
#include "tests/common/proto_attributes.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = onemodel::v1;
using onnx::TensorProto;

// Writes `message` to dir/seed-<name>, serialized deterministically (map order fixed).
void Write(const fs::path& dir, const std::string& name, const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  std::ofstream(dir / ("seed-" + name), std::ios::binary) << bytes;
}

// A TensorProto header: ONNX type code and dims, no data.
TensorProto Header(int32_t type, std::vector<int64_t> dims) {
  TensorProto p;
  p.set_data_type(type);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

// A FLOAT tensor with the given values in float_data.
TensorProto Floats(std::vector<int64_t> dims, std::vector<float> values) {
  TensorProto p = Header(TensorProto::FLOAT, std::move(dims));
  for (float v : values) p.add_float_data(v);
  return p;
}

// One supported element type: its name, code, bytes per element and ONNX typed field.
enum class Field { kFloat, kInt32, kInt64, kDouble, kUint64 };
struct TypeRow {
  const char* name;
  int32_t code;
  int size;
  Field field;
};
constexpr TypeRow kTypes[] = {
    {"float", TensorProto::FLOAT, 4, Field::kFloat},
    {"uint8", TensorProto::UINT8, 1, Field::kInt32},
    {"int8", TensorProto::INT8, 1, Field::kInt32},
    {"uint16", TensorProto::UINT16, 2, Field::kInt32},
    {"int16", TensorProto::INT16, 2, Field::kInt32},
    {"int32", TensorProto::INT32, 4, Field::kInt32},
    {"int64", TensorProto::INT64, 8, Field::kInt64},
    {"bool", TensorProto::BOOL, 1, Field::kInt32},
    {"float16", TensorProto::FLOAT16, 2, Field::kInt32},
    {"double", TensorProto::DOUBLE, 8, Field::kDouble},
    {"uint32", TensorProto::UINT32, 4, Field::kUint64},
    {"uint64", TensorProto::UINT64, 8, Field::kUint64},
    {"bfloat16", TensorProto::BFLOAT16, 2, Field::kInt32},
};

// A [2, 3] tensor of `t` in raw_data: bytes 0, 1, 0, 1, ... (valid for every type).
TensorProto RawOf(const TypeRow& t) {
  TensorProto p = Header(t.code, {2, 3});
  std::string raw(static_cast<size_t>(6 * t.size), '\0');
  for (size_t i = 0; i < raw.size(); i += 2) raw[i] = 1;
  p.set_raw_data(raw);
  return p;
}

// A [2, 3] tensor of `t` in its typed field: 0, 1, 0, 1, ... (bit patterns for 16-bit floats:
// 0 and 15360 or 16256, their 1.0).
TensorProto TypedOf(const TypeRow& t) {
  TensorProto p = Header(t.code, {2, 3});
  const int64_t one = t.code == TensorProto::FLOAT16    ? 15360
                      : t.code == TensorProto::BFLOAT16 ? 16256
                                                        : 1;
  for (int i = 0; i < 6; ++i) {
    const int64_t v = i % 2 ? one : 0;
    switch (t.field) {
      case Field::kFloat:
        p.add_float_data(static_cast<float>(v));
        break;
      case Field::kInt32:
        p.add_int32_data(static_cast<int32_t>(v));
        break;
      case Field::kInt64:
        p.add_int64_data(v);
        break;
      case Field::kDouble:
        p.add_double_data(static_cast<double>(v));
        break;
      case Field::kUint64:
        p.add_uint64_data(static_cast<uint64_t>(v));
        break;
    }
  }
  return p;
}

// Every TensorProto seed: each type in raw_data and in its typed field, then edge cases and
// each way a proto can be malformed.
std::vector<std::pair<std::string, TensorProto>> TensorSeeds() {
  std::vector<std::pair<std::string, TensorProto>> seeds;
  for (const TypeRow& t : kTypes) {
    seeds.emplace_back(std::string(t.name) + "-raw", RawOf(t));
    seeds.emplace_back(std::string(t.name) + "-typed", TypedOf(t));
  }
  auto add = [&](std::string name, TensorProto p) { seeds.emplace_back(std::move(name), p); };
  add("scalar", Floats({}, {2.5f}));
  add("empty-0x3", Header(TensorProto::FLOAT, {0, 3}));
  TensorProto empty_raw = Header(TensorProto::INT64, {3, 0});
  empty_raw.set_raw_data("");
  add("empty-raw", empty_raw);
  TensorProto rank8 = Header(TensorProto::FLOAT, {1, 1, 1, 1, 1, 1, 2, 2});
  rank8.set_raw_data(std::string(16, '\x3f'));
  add("rank8", rank8);
  TensorProto named = Floats({1}, {1.0f});
  named.set_name("x");
  named.set_doc_string("a named tensor");
  add("name-and-doc", named);
  using Double = std::numeric_limits<double>;
  TensorProto specials = Header(TensorProto::DOUBLE, {4});
  for (double v : {Double::quiet_NaN(), Double::infinity(), -0.0, Double::max()}) {
    specials.add_double_data(v);
  }
  add("double-specials", specials);
  TensorProto extremes = Header(TensorProto::INT64, {2});
  extremes.add_int64_data(std::numeric_limits<int64_t>::min());
  extremes.add_int64_data(std::numeric_limits<int64_t>::max());
  add("int64-extremes", extremes);
  TensorProto u64 = Header(TensorProto::UINT64, {2});
  u64.add_uint64_data(0);
  u64.add_uint64_data(std::numeric_limits<uint64_t>::max());
  add("uint64-extremes", u64);

  add("bad-undefined-type", Floats({1}, {1.0f}));
  seeds.back().second.set_data_type(TensorProto::UNDEFINED);
  TensorProto strings = Header(TensorProto::STRING, {1});
  strings.add_string_data("a");
  add("bad-string-type", strings);
  TensorProto complex = Header(TensorProto::COMPLEX64, {1});
  complex.set_raw_data(std::string(8, '\0'));
  add("bad-complex64", complex);
  TensorProto float8 = Header(17, {1});  // FLOAT8E4M3FN, newer than Debian's onnx.proto
  float8.set_raw_data(std::string(1, '\0'));
  add("bad-float8", float8);
  add("bad-type-code-1000", Header(1000, {1}));
  TensorProto rank9 = Header(TensorProto::FLOAT, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  rank9.set_raw_data(std::string(4, '\0'));
  add("bad-rank9", rank9);
  add("bad-negative-dim", Header(TensorProto::FLOAT, {-1}));
  add("bad-huge-dims", Header(TensorProto::FLOAT, {2147483647, 2147483647}));
  add("bad-4gib", Header(TensorProto::FLOAT, {1073741824}));
  add("bad-dim-over-int32", Header(TensorProto::UINT8, {4294967296}));
  add("bad-no-data", Header(TensorProto::FLOAT, {2}));
  TensorProto both = Floats({1}, {1.0f});
  both.set_raw_data(std::string(4, '\0'));
  add("bad-raw-and-typed", both);
  TensorProto wrong = Header(TensorProto::FLOAT, {1});
  wrong.add_int64_data(1);
  add("bad-wrong-field", wrong);
  TensorProto short_raw = Header(TensorProto::FLOAT, {2, 3});
  short_raw.set_raw_data(std::string(5, '\0'));
  add("bad-raw-short", short_raw);
  add("bad-typed-count", Floats({2, 3}, {1, 2, 3, 4, 5}));
  TensorProto int8 = Header(TensorProto::INT8, {2});
  int8.add_int32_data(1);
  int8.add_int32_data(300);
  add("bad-int8-range", int8);
  TensorProto uint32 = Header(TensorProto::UINT32, {1});
  uint32.add_uint64_data(uint64_t{1} << 40);
  add("bad-uint32-range", uint32);
  TensorProto half = Header(TensorProto::FLOAT16, {1});
  half.add_int32_data(70000);
  add("bad-float16-range", half);
  TensorProto bool_raw = Header(TensorProto::BOOL, {3});
  bool_raw.set_raw_data(std::string("\0\1\2", 3));
  add("bad-bool-raw", bool_raw);
  TensorProto bool_typed = Header(TensorProto::BOOL, {2});
  bool_typed.add_int32_data(1);
  bool_typed.add_int32_data(2);
  add("bad-bool-typed", bool_typed);
  TensorProto external = Header(TensorProto::FLOAT, {1});
  external.set_data_location(TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = external.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  add("bad-external-data", external);
  TensorProto segment = Floats({1}, {1.0f});
  segment.mutable_segment()->set_begin(0);
  segment.mutable_segment()->set_end(1);
  add("bad-segment", segment);
  return seeds;
}

// ---- Run requests ----

v1::Input Handle(const std::string& h) {
  v1::Input in;
  in.set_handle(h);
  return in;
}
v1::Input Output(int32_t i) {
  v1::Input in;
  in.set_output(i);
  return in;
}
v1::Input Inline(const TensorProto& t) {
  v1::Input in;
  *in.mutable_tensor() = t;
  return in;
}

using onemodel::testing::FloatAttr;
using onemodel::testing::IntAttr;
using onemodel::testing::IntsAttr;
using onemodel::testing::StringAttr;

using Attributes = std::vector<std::pair<std::string, v1::Attribute>>;

v1::Operation Op(const std::string& name, std::vector<v1::Input> inputs, Attributes attributes = {},
                 v1::Placement placement = v1::PLACEMENT_UNSPECIFIED) {
  v1::Operation op;
  op.set_op(name);
  for (v1::Input& in : inputs) *op.add_inputs() = std::move(in);
  for (auto& [key, value] : attributes) (*op.mutable_attributes())[key] = value;
  op.set_placement(placement);
  return op;
}

v1::RunRequest Run(std::vector<v1::Operation> ops) {
  v1::RunRequest r;
  for (v1::Operation& op : ops) *r.add_operations() = std::move(op);
  return r;
}

// Every RunRequest seed: each operation with typical and bad attributes, chains of outputs,
// placements, inline tensors of every type, and each kind of bad reference. Handles "$0".."$9"
// are the fuzz target's known tensors (run_request_fuzzer.cc, Preload).
std::vector<std::pair<std::string, v1::RunRequest>> RunSeeds() {
  std::vector<std::pair<std::string, v1::RunRequest>> seeds;
  auto add = [&](std::string name, std::vector<v1::Operation> ops) {
    seeds.emplace_back(std::move(name), Run(std::move(ops)));
  };
  const v1::Input x = Handle("$0"), y = Handle("$1"), xt = Handle("$2"), image = Handle("$3");
  const v1::Input ints = Handle("$4"), half = Handle("$5"), scalar = Handle("$6");
  const v1::Input empty = Handle("$7");
  const v1::Input row = Inline(Floats({1, 3}, {1, 2, 3}));

  add("add", {Op("Add", {x, x})});
  add("sub-broadcast", {Op("Sub", {x, row})});
  add("mul-scalar", {Op("Mul", {x, scalar})});
  add("div-shape-mismatch", {Op("Div", {x, y})});
  add("max-strided", {Op("Max", {y, xt})});
  add("min-float16-cast", {Op("Cast", {half}, {{"to", IntAttr(TensorProto::FLOAT)}}),
                           Op("Min", {Output(0), Output(0)})});
  add("pow-inline", {Op("Pow", {x, Inline(Floats({}, {2.0f}))})});
  add("neg-scalar", {Op("Neg", {scalar})});
  add("abs-strided", {Op("Abs", {xt})});
  add("exp", {Op("Exp", {x})});
  add("log-int64", {Op("Log", {ints})});
  add("sqrt-image", {Op("Sqrt", {image})});
  add("relu-empty", {Op("Relu", {empty})});
  add("sigmoid", {Op("Sigmoid", {x})});
  add("tanh-float16", {Op("Tanh", {half})});
  add("gelu", {Op("Gelu", {y})});
  add("gelu-erf-form", {Op("Gelu", {y}, {{"approximate", StringAttr("none")}})});
  add("gelu-bad-approximate", {Op("Gelu", {x}, {{"approximate", StringAttr("erf")}})});
  add("erf-strided", {Op("Erf", {xt})});
  add("equal-broadcast", {Op("Equal", {x, row})});
  add("less-strided", {Op("Less", {y, xt})});
  add("lessequal-int64", {Op("LessEqual", {ints, x})});
  add("greater-scalar", {Op("Greater", {x, scalar})});
  add("greaterequal-empty", {Op("GreaterEqual", {empty, empty})});
  add("where", {Op("Less", {x, row}), Op("Where", {Output(0), x, scalar})});
  add("where-float-condition", {Op("Where", {x, x, x})});
  add("clip", {Op("Clip", {x}, {{"min", FloatAttr(-1)}, {"max", FloatAttr(1)}})});
  add("clip-inverted-int-bounds", {Op("Clip", {xt}, {{"min", IntAttr(2)}, {"max", IntAttr(-2)}})});
  add("leakyrelu", {Op("LeakyRelu", {image}, {{"alpha", FloatAttr(0.2f)}})});
  add("leakyrelu-alpha-string", {Op("LeakyRelu", {x}, {{"alpha", StringAttr("0.1")}})});
  add("matmul", {Op("MatMul", {x, y})});
  add("matmul-mismatch", {Op("MatMul", {x, x})});
  add("matmul-vector", {Op("MatMul", {x, Inline(Floats({3}, {1, 0, -1}))})});
  add("maxpool", {Op("MaxPool2d", {image},
                     {{"kernel_shape", IntsAttr({2, 2})},
                      {"strides", IntsAttr({2, 2})},
                      {"pads", IntsAttr({0, 0})}})});
  add("maxpool-padded",
      {Op("MaxPool2d", {image}, {{"kernel_shape", IntsAttr({3, 3})}, {"pads", IntsAttr({1, 1})}})});
  add("maxpool-no-kernel", {Op("MaxPool2d", {image})});
  add("maxpool-kernel-one-value", {Op("MaxPool2d", {image}, {{"kernel_shape", IntsAttr({1})}})});
  add("conv", {Op("Conv2d", {image, image, Inline(Floats({1}, {0.5f}))},
                  {{"strides", IntsAttr({2, 1})},
                   {"pads", IntsAttr({1, 0, 2, 1})},
                   {"dilations", IntsAttr({1, 2})},
                   {"group", IntAttr(1)}})});
  add("conv-depthwise", {Op("Conv2d", {image, Inline(Floats({2, 1, 1, 1}, {1, -1}))},
                            {{"group", IntAttr(2)}, {"pads", IntsAttr({1, 1})}})});
  add("conv-bad-group", {Op("Conv2d", {image, image}, {{"group", IntAttr(3)}})});
  add("conv-pads-three-values", {Op("Conv2d", {image, image}, {{"pads", IntsAttr({1, 1, 1})}})});
  add("conv-no-weights", {Op("Conv2d", {image})});
  add("maxpool-dilated-ceil", {Op("MaxPool2d", {image},
                                  {{"kernel_shape", IntsAttr({2, 2})},
                                   {"dilations", IntsAttr({2, 1})},
                                   {"ceil_mode", IntAttr(1)}})});
  add("relumaxpool", {Op("ReluMaxPool2d", {image}, {{"kernel_shape", IntsAttr({2, 2})}})});
  add("avgpool", {Op("AvgPool2d", {image},
                     {{"kernel_shape", IntsAttr({3, 3})},
                      {"pads", IntsAttr({1, 1})},
                      {"ceil_mode", IntAttr(1)},
                      {"count_include_pad", IntAttr(1)}})});
  add("globalavgpool", {Op("GlobalAvgPool2d", {image})});
  add("sum-axis-keepdims", {Op("Sum", {x}, {{"axes", IntsAttr({1})}, {"keepdims", IntAttr(1)}})});
  add("sum-bad-axis", {Op("Sum", {x}, {{"axes", IntsAttr({5})}})});
  add("mean-image", {Op("Mean", {image}, {{"axes", IntsAttr({2, 3})}})});
  add("mean-all", {Op("Mean", {xt})});
  add("softmax", {Op("Softmax", {x}, {{"axis", IntAttr(1)}, {"scale", FloatAttr(0.5f)}})});
  add("logsoftmax", {Op("LogSoftmax", {image}, {{"axis", IntAttr(-1)}})});
  add("cast-int64", {Op("Cast", {x}, {{"to", IntAttr(TensorProto::INT64)}})});
  add("cast-float16", {Op("Cast", {ints}, {{"to", IntAttr(TensorProto::FLOAT16)}})});
  add("cast-string", {Op("Cast", {x}, {{"to", IntAttr(TensorProto::STRING)}})});
  add("cast-over-int32", {Op("Cast", {x}, {{"to", IntAttr(int64_t{1} << 32)}})});
  add("contiguous-strided", {Op("Contiguous", {xt})});
  add("copy-float16", {Op("Copy", {half})});
  add("detach", {Op("Detach", {x})});
  add("tolayout-nhwc", {Op("ToLayout", {image}, {{"layout", StringAttr("nhwc")}})});
  add("tolayout-blocked",
      {Op("Detach", {image}),
       Op("ToLayout", {Output(0)}, {{"layout", StringAttr("Blocked")}, {"block", IntAttr(8)}}),
       Op("ToLayout", {Output(1)}, {{"layout", StringAttr("NCHW")}})});
  add("tolayout-blocked-grad", {Op("ToLayout", {image}, {{"layout", StringAttr("Blocked")}})});
  add("tolayout-bad", {Op("ToLayout", {image}, {{"layout", StringAttr("XYZ")}})});
  add("reshape-infer", {Op("Reshape", {x}, {{"shape", IntsAttr({3, -1})}})});
  add("reshape-bad-count", {Op("Reshape", {x}, {{"shape", IntsAttr({7})}})});
  add("reshape-strided", {Op("Reshape", {xt}, {{"shape", IntsAttr({6})}})});
  add("permute", {Op("Permute", {image}, {{"perm", IntsAttr({0, 2, 3, 1})}})});
  add("permute-repeated", {Op("Permute", {image}, {{"perm", IntsAttr({0, 0, 1, 2})}})});
  add("transpose", {Op("Transpose", {x}, {{"dim0", IntAttr(0)}, {"dim1", IntAttr(1)}})});
  add("slice-step", {Op("Slice", {x},
                        {{"dim", IntAttr(1)},
                         {"start", IntAttr(0)},
                         {"stop", IntAttr(3)},
                         {"step", IntAttr(2)}})});
  add("slice-negative-step", {Op("Slice", {x},
                                 {{"dim", IntAttr(1)},
                                  {"start", IntAttr(2)},
                                  {"stop", IntAttr(-4)},
                                  {"step", IntAttr(-1)}})});
  add("slice-step-zero",
      {Op("Slice", {x}, {{"start", IntAttr(0)}, {"stop", IntAttr(1)}, {"step", IntAttr(0)}})});
  add("expand-scalar", {Op("Expand", {scalar}, {{"shape", IntsAttr({2, 3})}})});
  add("expand-huge", {Op("Expand", {scalar}, {{"shape", IntsAttr({2147483647, 2147483647})}})});
  add("squeeze",
      {Op("Squeeze", {Inline(Floats({1, 3, 1}, {1, 2, 3}))}, {{"axes", IntsAttr({0})}})});
  add("unsqueeze", {Op("Unsqueeze", {x}, {{"dim", IntAttr(2)}})});
  TensorProto step_proto = Header(TensorProto::INT64, {});
  step_proto.add_int64_data(0);
  const v1::Input step = Inline(step_proto);
  const v1::Input g = Inline(Floats({2, 3}, {1, -2, 3, -4, 5, -6}));
  const auto zeros = [] { return Inline(Floats({2, 3}, {0, 0, 0, 0, 0, 0})); };
  add("sgd-momentum",
      {Op("SGD", {step, x, g, zeros()},
          {{"lr", FloatAttr(0.1f)}, {"momentum", FloatAttr(0.9f)}, {"nesterov", IntAttr(1)}})});
  add("sgd-uneven-lists", {Op("SGD", {step, x, g, y}, {{"lr", FloatAttr(0.1f)}})});
  add("sgd-float-step", {Op("SGD", {scalar, x, g}, {{"lr", FloatAttr(0.1f)}})});
  add("grad-step", {Op("Mul", {x, x}), Op("Sum", {Output(0)}),
                    Op("Grad", {Output(1), x}, {{"index", IntAttr(0)}}),
                    Op("SGD", {step, x, Output(2)}, {{"lr", FloatAttr(0.1f)}})});
  add("grad-again", {Op("Sum", {x}), Op("Grad", {Output(0), x}, {{"index", IntAttr(0)}}),
                     Op("Grad", {Output(0), x}, {{"index", IntAttr(0)}})});
  add("grad-of-a-plain-input",
      {Op("Sum", {x}), Op("Grad", {Output(0), x, y}, {{"index", IntAttr(1)}})});
  add("adamw-amsgrad", {Op("AdamW", {step, x, g, zeros(), zeros(), zeros()},
                           {{"amsgrad", IntAttr(1)}, {"eps", FloatAttr(0)}})});
  add("adamw-aliased", {Op("AdamW", {step, x, x, xt, zeros()})});
  add("adamw-strided-param", {Op("AdamW", {step, xt, g, zeros(), zeros()})});
  add("clipgradnorm", {Op("ClipGradNorm", {x, y},
                          {{"max_norm", FloatAttr(0.5f)},
                           {"norm_type", FloatAttr(std::numeric_limits<float>::infinity())}})});
  add("clipgradnorm-empty", {Op("ClipGradNorm", {empty, image},
                                {{"max_norm", FloatAttr(1)}, {"error_if_nonfinite", IntAttr(1)}})});
  TensorProto bad_ids = Header(TensorProto::INT64, {2});
  bad_ids.add_int64_data(1);
  bad_ids.add_int64_data(-1);
  add("embedding-skip-id", {Op("Embedding", {x, ints}, {{"skip_id", IntAttr(0)}})});
  add("embedding-negative-index", {Op("Embedding", {y, Inline(bad_ids)})});
  add("gather-negative", {Op("Gather", {image, Inline(bad_ids)}, {{"axis", IntAttr(-1)}})});
  add("gather-float-indices", {Op("Gather", {x, x})});
  add("concat-three", {Op("Concat", {x, row, xt}, {{"axis", IntAttr(0)}})});
  add("concat-mismatch", {Op("Concat", {x, image}, {{"axis", IntAttr(-1)}})});
  add("split-piece", {Op("Split", {image}, {{"axis", IntAttr(1)}, {"split", IntsAttr({1, 1})},
                                           {"index", IntAttr(1)}})});
  add("reducemax",
      {Op("ReduceMax", {image}, {{"axes", IntsAttr({1, -1})}, {"keepdims", IntAttr(1)}})});
  add("reducemin-empty", {Op("ReduceMin", {empty}, {{"axes", IntsAttr({0})}})});
  add("argmax-last",
      {Op("ArgMax", {xt}, {{"axis", IntAttr(-1)}, {"select_last_index", IntAttr(1)}})});
  add("argmin-empty-axis", {Op("ArgMin", {empty}, {{"axis", IntAttr(0)}})});
  add("pad-reflect-crop", {Op("Pad", {image}, {{"pads", IntsAttr({0, 0, -1, 1, 0, 0, 1, -1})},
                                               {"mode", StringAttr("reflect")}})});
  add("pad-edge-empty",
      {Op("Pad", {empty}, {{"pads", IntsAttr({1, 0, 0, 0})}, {"mode", StringAttr("edge")}})});
  add("pad-unknown-mode",
      {Op("Pad", {x}, {{"pads", IntsAttr({0, 0, 0, 0})}, {"mode", StringAttr("mirror")}})});
  add("tile", {Op("Tile", {xt}, {{"repeats", IntsAttr({2, 3})}})});
  add("cumsum-exclusive-reverse",
      {Op("CumSum", {x},
          {{"axis", IntAttr(-1)}, {"exclusive", IntAttr(1)}, {"reverse", IntAttr(1)}})});
  add("layernorm",
      {Op("LayerNorm", {x, Inline(Floats({3}, {1, 2, 3})), Inline(Floats({3}, {0, 1, 0}))},
          {{"axis", IntAttr(-1)}, {"epsilon", FloatAttr(1e-3f)}})});
  add("layernorm-bad-scale", {Op("LayerNorm", {xt, row}, {{"axis", IntAttr(0)}})});
  add("rmsnorm-axis-min", {Op("RMSNorm", {image}, {{"axis", IntAttr(-2147483648LL)}})});
  add("batchnorm-training",
      {Op("BatchNorm2d", {image, Inline(Floats({2}, {0, 0})), Inline(Floats({2}, {1, 1}))},
          {{"training", IntAttr(1)}, {"momentum", FloatAttr(0.5f)}})});
  add("batchnorm-bad-stats", {Op("BatchNorm2d", {image, y, y}, {{"epsilon", FloatAttr(-1)}})});
  TensorProto labels = Header(TensorProto::INT64, {2});  // class indices for x [2, 3]
  labels.add_int64_data(2);
  labels.add_int64_data(-100);
  TensorProto bad_labels = Header(TensorProto::INT64, {2});
  bad_labels.add_int64_data(0);
  bad_labels.add_int64_data(std::numeric_limits<int64_t>::max());
  add("crossentropy", {Op("CrossEntropy", {x, Inline(labels)},
                          {{"reduction", StringAttr("none")},
                           {"label_smoothing", FloatAttr(0.1f)},
                           {"ignore_index", IntAttr(-100)}})});
  TensorProto column_labels = Header(TensorProto::INT32, {3});  // for xt [3, 2]
  for (int32_t v : {1, 0, 1}) column_labels.add_int32_data(v);
  add("crossentropy-weighted-strided",
      {Op("CrossEntropy", {xt, Inline(column_labels), Inline(Floats({2}, {0.5f, 2}))}),
       Op("CrossEntropy", {y, ints, row})});
  add("crossentropy-target-out-of-range", {Op("CrossEntropy", {x, Inline(bad_labels)})});
  add("crossentropy-float-target", {Op("CrossEntropy", {x, x})});
  add("crossentropy-smoothing-nan",
      {Op("CrossEntropy", {x, Inline(labels)},
          {{"label_smoothing", FloatAttr(std::numeric_limits<float>::quiet_NaN())}})});
  add("nllloss-sum", {Op("NLLLoss", {x, Inline(labels)}, {{"reduction", StringAttr("sum")}})});
  add("nllloss-image-shape-mismatch", {Op("NLLLoss", {image, ints})});
  add("nllloss-empty", {Op("NLLLoss", {empty, Inline(Header(TensorProto::INT64, {0}))})});
  add("mseloss",
      {Op("MSELoss", {x, x}, {{"reduction", StringAttr("none")}}), Op("MSELoss", {Output(0), x}),
       Op("MSELoss", {xt, y}, {{"reduction", StringAttr("sum")}})});
  add("mseloss-bad-reduction", {Op("MSELoss", {x, x}, {{"reduction", StringAttr("avg")}})});
  add("dropout", {Op("Dropout", {image}, {{"ratio", FloatAttr(0.3f)}, {"seed", IntAttr(3)}})});
  add("dropout-eval-and-extremes",
      {Op("Dropout", {x},
          {{"seed", IntAttr(std::numeric_limits<int64_t>::min())}, {"training", IntAttr(0)}}),
       Op("Dropout", {xt}, {{"seed", IntAttr(-1)}, {"ratio", FloatAttr(1)}})});
  add("dropout-ratio-out-of-range",
      {Op("Dropout", {x}, {{"seed", IntAttr(1)}, {"ratio", FloatAttr(2)}})});
  add("dropout-no-seed", {Op("Dropout", {empty})});

  // Extreme attribute values: overflow and range checks.
  const int64_t i64_min = std::numeric_limits<int64_t>::min();
  const int64_t i64_max = std::numeric_limits<int64_t>::max();
  const int64_t i32_min = std::numeric_limits<int32_t>::min();
  const int64_t i32_max = std::numeric_limits<int32_t>::max();
  add("slice-extremes", {Op("Slice", {x},
                            {{"dim", IntAttr(-1)},
                             {"start", IntAttr(i64_min)},
                             {"stop", IntAttr(i64_max)},
                             {"step", IntAttr(i64_max)}})});
  add("slice-step-min",
      {Op("Slice", {x},
          {{"start", IntAttr(i64_max)}, {"stop", IntAttr(i64_min)}, {"step", IntAttr(i64_min)}})});
  add("maxpool-huge", {Op("MaxPool2d", {image},
                          {{"kernel_shape", IntsAttr({i32_max, i32_max})},
                           {"strides", IntsAttr({i32_max, 1})},
                           {"pads", IntsAttr({i32_max, i32_max})}})});
  add("maxpool-negative", {Op("MaxPool2d", {image},
                              {{"kernel_shape", IntsAttr({-1, 2})},
                               {"strides", IntsAttr({0, -1})},
                               {"pads", IntsAttr({-1, 0})}})});
  add("maxpool-pads-over-kernel",
      {Op("MaxPool2d", {image}, {{"kernel_shape", IntsAttr({2, 2})}, {"pads", IntsAttr({3, 3})}})});
  add("maxpool-dilation-huge", {Op("MaxPool2d", {image},
                                   {{"kernel_shape", IntsAttr({2, 2})},
                                    {"dilations", IntsAttr({i32_max, 0})},
                                    {"ceil_mode", IntAttr(-1)}})});
  add("avgpool-bad-flag",
      {Op("AvgPool2d", {image},
          {{"kernel_shape", IntsAttr({i32_max, 1})}, {"count_include_pad", IntAttr(i64_max)}})});
  add("tolayout-block-zero",
      {Op("Detach", {image}),
       Op("ToLayout", {Output(0)}, {{"layout", StringAttr("Blocked")}, {"block", IntAttr(0)}})});
  add("tolayout-block-huge", {Op("Detach", {image}), Op("ToLayout", {Output(0)},
                                                        {{"layout", StringAttr("Blocked")},
                                                         {"block", IntAttr(i32_max)}})});
  add("unsqueeze-min", {Op("Unsqueeze", {x}, {{"dim", IntAttr(i32_min)}})});
  add("pad-huge", {Op("Pad", {x}, {{"pads", IntsAttr({i32_max, 0, i64_min, i32_max})}})});
  add("pad-max-extent", {Op("Pad", {x}, {{"pads", IntsAttr({0, i32_max - 2, 0, 0})}})});
  add("tile-huge", {Op("Tile", {x}, {{"repeats", IntsAttr({i32_max, i32_max})}})});
  add("cumsum-axis-min", {Op("CumSum", {x}, {{"axis", IntAttr(i32_min)}})});
  add("softmax-axis-min", {Op("Softmax", {x}, {{"axis", IntAttr(i32_min)}})});
  add("split-extremes", {Op("Split", {x}, {{"num_outputs", IntAttr(i64_max)},
                                           {"index", IntAttr(i64_max - 1)}}),
                         Op("Split", {x}, {{"split", IntsAttr({i64_max, i64_min})},
                                           {"index", IntAttr(i64_min)}})});
  add("embedding-skip-id-min", {Op("Embedding", {x, ints}, {{"skip_id", IntAttr(i64_min)}})});
  add("transpose-negative",
      {Op("Transpose", {image}, {{"dim0", IntAttr(-1)}, {"dim1", IntAttr(-4)}})});
  add("reshape-zero-infer", {Op("Reshape", {empty}, {{"shape", IntsAttr({0, -1})}})});
  add("reshape-two-infers", {Op("Reshape", {x}, {{"shape", IntsAttr({-1, -1})}})});
  add("reshape-huge", {Op("Reshape", {x}, {{"shape", IntsAttr({i64_max, 2})}})});
  add("permute-negative", {Op("Permute", {image}, {{"perm", IntsAttr({-1, -2, -3, -4})}})});
  add("squeeze-negative",
      {Op("Squeeze", {Inline(Floats({3, 1}, {1, 2, 3}))}, {{"axes", IntsAttr({-1, i32_min})}})});
  add("sum-axes-repeated",
      {Op("Sum", {image}, {{"axes", IntsAttr({1, -3})}, {"keepdims", IntAttr(i64_min)}})});
  add("expand-then-sum", {Op("Expand", {scalar}, {{"shape", IntsAttr({256, 1024})}}),
                          Op("Sum", {Output(0)}, {{"axes", IntsAttr({0})}})});
  add("expand-then-copy", {Op("Expand", {row}, {{"shape", IntsAttr({4096, 3})}}),
                           Op("Copy", {Output(0)}, {}, v1::PLACEMENT_POOL)});
  add("expand-over-budget",
      {Op("Expand", {scalar}, {{"shape", IntsAttr({512, 1024})}}), Op("Exp", {Output(0)})});

  add("chain-forward", {Op("MatMul", {x, y}), Op("Relu", {Output(0)}),
                        Op("Sum", {Output(1)}, {}, v1::PLACEMENT_POOL)});
  add("chain-views-pool", {Op("Copy", {image}, {}, v1::PLACEMENT_POOL),
                           Op("Transpose", {Output(0)},
                              {{"dim0", IntAttr(2)}, {"dim1", IntAttr(3)}}, v1::PLACEMENT_POOL),
                           Op("Relu", {Output(1)}, {}, v1::PLACEMENT_ARENA),
                           Op("Detach", {x}, {}, v1::PLACEMENT_POOL)});
  add("chain-fails-late", {Op("Copy", {x}, {}, v1::PLACEMENT_POOL), Op("Add", {Output(0), y})});
  add("output-ahead", {Op("Add", {Output(5), x})});
  add("output-negative", {Op("Neg", {Output(-1)})});
  add("no-source", {Op("Neg", {v1::Input()})});
  add("unknown-op", {Op("Conv", {x})});
  add("wrong-arity", {Op("Add", {x})});
  add("unknown-attribute", {Op("Relu", {x}, {{"alpha", FloatAttr(0.1f)}})});
  add("wrong-attribute-type", {Op("Transpose", {x}, {{"dim0", FloatAttr(0.0f)}})});
  add("handle-malformed", {Op("Neg", {Handle("garbage")})});
  add("handle-unknown", {Op("Neg", {Handle("p1.0000000000000000")})});
  add("handle-stale", {Op("Neg", {Handle("$8")})});
  add("handle-released", {Op("Neg", {Handle("$9")})});
  add("placement-undefined", {Op("Neg", {x}, {}, static_cast<v1::Placement>(7))});
  add("inline-malformed", {Op("Add", {x, Inline(Header(TensorProto::FLOAT, {2, 3}))})});

  std::vector<v1::Operation> every_type;
  for (const TypeRow& t : kTypes) every_type.push_back(Op("Copy", {Inline(RawOf(t))}));
  add("inline-every-type", std::move(every_type));

  add("reset-arena", {Op("Relu", {image})});
  seeds.back().second.set_reset_arena(true);
  add("no-grad", {Op("Mul", {x, x}), Op("Sum", {Output(0)})});
  seeds.back().second.set_no_grad(true);
  add("exact-kernels", {Op("MatMul", {x, y}), Op("Softmax", {Output(0)}), Op("Gelu", {Output(1)})});
  seeds.back().second.set_session_id("exact");
  add("too-many-operations", std::vector<v1::Operation>(4097, Op("Neg", {scalar})));
  add("convtranspose", {Op("ConvTranspose2d", {image, image, Inline(Floats({1}, {0.5f}))},
                           {{"strides", IntsAttr({2, 2})},
                            {"pads", IntsAttr({1, 0, 0, 1})},
                            {"dilations", IntsAttr({1, 2})},
                            {"output_padding", IntsAttr({1, 1})}})});
  add("convtranspose-output-padding-too-large",
      {Op("ConvTranspose2d", {image, image}, {{"output_padding", IntsAttr({1, 0})}})});
  return seeds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR (tests/fuzz/corpus)\n";
    return 2;
  }
  const fs::path root = argv[1];
  fs::create_directories(root / "tensor_proto");
  fs::create_directories(root / "run_request");
  for (const auto& [name, proto] : TensorSeeds()) Write(root / "tensor_proto", name, proto);
  for (const auto& [name, request] : RunSeeds()) Write(root / "run_request", name, request);
  return 0;
}
