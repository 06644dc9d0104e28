// The operations a Run request can name: every eager operation of core/ops, by name, with the
// inputs and attributes each takes (docs/protocol.md lists them).
//
// Each operation is one table row: its name, inputs, the attributes it accepts (kind, default,
// doc), whether backward goes through it, a doc line and a function that reads the attributes
// and calls the core. ListOperations serves the table itself (server/ops/op_catalog.h). Attribute
// readers check presence and type and say what was expected, so a malformed request fails with
// INVALID_ARGUMENT before any work.
//
//   const OpSpec* spec = FindOp("MaxPool2d");
//   Tensor y = spec->run(OpCall(inputs, operation.attributes(), ctx));
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"
#include "onemodel/v1/onemodel.pb.h"

namespace onemodel::server {

using AttributeMap = google::protobuf::Map<std::string, v1::Attribute>;
class GradientCache;  // server/ops/grad_op.h

struct OpSpec;

// One invocation of the operation `spec`: the inputs, the attributes and typed readers for them.
class OpCall {
 public:
  // `gradients`: the Run's backward pass kept for its Grad operations (null outside a Run).
  OpCall(const OpSpec& spec, std::span<const Tensor> inputs, const AttributeMap& attributes,
         const OpContext& ctx, GradientCache* gradients = nullptr)
      : spec_(spec), inputs_(inputs), attributes_(attributes), ctx_(ctx), gradients_(gradients) {}

  const Tensor& in(int i) const { return inputs_[static_cast<size_t>(i)]; }
  // Inputs i, i+1, ...: a variadic input's tensors.
  std::span<const Tensor> From(int i) const { return inputs_.subspan(static_cast<size_t>(i)); }
  // How many inputs the request gave (fewer than the row's when optional ones are left out).
  int size() const { return static_cast<int>(inputs_.size()); }
  const OpContext& ctx() const { return ctx_; }
  GradientCache* gradients() const { return gradients_; }
  bool Has(std::string_view name) const;
  // Readers: the attribute, or the fallback when absent; a wrong type throws RpcError.
  int64_t Int(std::string_view name) const;
  int64_t Int(std::string_view name, int64_t fallback) const;
  // An int that must fit in 32 bits (axes, dims).
  int Int32(std::string_view name, int fallback) const;
  float Float(std::string_view name) const;
  float Float(std::string_view name, float fallback) const;
  std::string_view String(std::string_view name) const;
  std::vector<int64_t> Ints(std::string_view name) const;
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> fallback) const;
  // Ints whose values must each fit in 32 bits.
  std::vector<int> Ints32(std::string_view name) const;
  std::vector<int> Ints32(std::string_view name, std::vector<int> fallback) const;

 private:
  // The attribute `name` holding `kind`, or null when absent; throws on another type, saying
  // what the attribute means (Cast's 'to' is a type code).
  const v1::Attribute* Get(std::string_view name, v1::Attribute::ValueCase kind) const;
  [[noreturn]] void Fail(const std::string& message) const;

  const OpSpec& spec_;
  std::span<const Tensor> inputs_;
  const AttributeMap& attributes_;
  const OpContext& ctx_;
  GradientCache* gradients_;
};

// One attribute an operation accepts. Its readers in the row's `run` must read it as `kind`
// with `fallback` as their default (op_registry_test checks each against the table).
struct AttrSpec {
  std::string_view name;
  v1::Attribute::ValueCase kind;
  std::string_view fallback;  // the default, written as the CLI's --attr value; "": required
  std::string_view doc;       // one line
};

struct OpSpec {
  std::string_view name;
  std::initializer_list<std::string_view> inputs;  // their names ("X", "A", "B"), in order
  std::initializer_list<AttrSpec> attributes;
  bool differentiable;   // backward goes through it (it records a node for floating inputs)
  std::string_view doc;  // one line
  Tensor (*run)(const OpCall& call);
  bool variadic = false;    // the last input repeats (one or more tensors; OpCall::From)
  int optional_inputs = 0;  // the last this many inputs may be left out (OpCall::size)
};

// The operation called `name`, or null.
const OpSpec* FindOp(std::string_view name);
// The operation called `name`; else throws RpcError `code` saying it is unknown and naming the
// nearest registered names ("did you mean 'Softmax'?").
const OpSpec& RequireOp(std::string_view name,
                        grpc::StatusCode code = grpc::StatusCode::INVALID_ARGUMENT);
// Every operation, in table order.
std::span<const OpSpec> AllOps();
// Throws RpcError (INVALID_ARGUMENT) unless `spec` takes `inputs` inputs (all of its inputs, all
// but some of its optional trailing ones, or at least its count when variadic) and knows every
// attribute in `attributes`.
void CheckSignature(const OpSpec& spec, int inputs, const AttributeMap& attributes);

}  // namespace onemodel::server
