// RunBuilder: a batch of operations sent as one Run request, where each operation may take
// tensors of the session, earlier outputs of the same batch, or inline tensors.
//
//   RunBuilder run;
//   RunOutput y = run.Op("MatMul", {x, w});
//   RunOutput s = run.Op("Sum", {y}, {{"axes", Ints{1}}, {"keepdims", 1}});
//   run.Op("Softmax", {s}, {{"axis", -1}, {"scale", 0.5f}}, v1::PLACEMENT_POOL);
//   RunResult result = session.Run(run.NoGrad());
//   std::vector<float> sums = session.Get<float>(result[s]);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/lib/tensor_data.h"
#include "client/lib/tensor_handle.h"
#include "onemodel/v1/onemodel.pb.h"

namespace onemodel::client {

// The output of an earlier operation of the same RunBuilder.
class RunOutput {
 public:
  int32_t index() const { return index_; }

 private:
  friend class RunBuilder;
  explicit RunOutput(int32_t index) : index_(index) {}
  int32_t index_;
};

// One input of an operation: a tensor handle, an earlier output, or an inline tensor (which
// the server places in the session's arena).
class RunInput {
 public:
  RunInput(const TensorHandle& handle) { proto_.set_handle(handle.id()); }                // NOLINT
  RunInput(RunOutput output) { proto_.set_output(output.index()); }                       // NOLINT
  RunInput(TensorData tensor) { *proto_.mutable_tensor() = ToProto(std::move(tensor)); }  // NOLINT

  const v1::Input& proto() const { return proto_; }

 private:
  v1::Input proto_;
};

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

// A typed attribute value: int, float, string, Ints or Floats.
class Attr {
 public:
  Attr(int value) : Attr(int64_t{value}) {}                    // NOLINT
  Attr(int64_t value) { proto_.set_i(value); }                 // NOLINT
  Attr(float value) { proto_.set_f(value); }                   // NOLINT
  Attr(double value) : Attr(static_cast<float>(value)) {}      // NOLINT
  Attr(const char* value) { proto_.set_s(value); }             // NOLINT
  Attr(std::string value) { proto_.set_s(std::move(value)); }  // NOLINT
  Attr(const Ints& values) {                                   // NOLINT
    proto_.mutable_ints()->mutable_values()->Add(values.begin(), values.end());
  }
  Attr(const Floats& values) {  // NOLINT
    proto_.mutable_floats()->mutable_values()->Add(values.begin(), values.end());
  }

  const v1::Attribute& proto() const { return proto_; }

 private:
  v1::Attribute proto_;
};

struct NamedAttr {
  std::string name;
  Attr value;
};

class RunBuilder {
 public:
  // Appends operation `op`; the result refers to its output in later operations and results.
  // Throws Error(INVALID_ARGUMENT), appending nothing, when two attributes share a name.
  RunOutput Op(const std::string& op, const std::vector<RunInput>& inputs,
               const std::vector<NamedAttr>& attributes = {},
               v1::Placement placement = v1::PLACEMENT_UNSPECIFIED);
  // Records nothing for backward.
  RunBuilder& NoGrad(bool on = true);
  // Resets the session's arena before the first operation.
  RunBuilder& ResetArena(bool on = true);

  int size() const { return request_.operations_size(); }
  const v1::RunRequest& request() const { return request_; }

 private:
  v1::RunRequest request_;
};

// The outputs of a run, one handle per operation.
class RunResult {
 public:
  explicit RunResult(const v1::RunReply& reply);

  const TensorHandle& operator[](RunOutput output) const { return outputs_.at(output.index()); }
  const TensorHandle& operator[](size_t index) const { return outputs_.at(index); }
  const TensorHandle& back() const { return outputs_.back(); }
  size_t size() const { return outputs_.size(); }

 private:
  std::vector<TensorHandle> outputs_;
};

}  // namespace onemodel::client
