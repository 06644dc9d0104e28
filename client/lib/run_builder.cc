#include "client/lib/run_builder.h"

#include "client/lib/error.h"

namespace onemodel::client {

RunOutput RunBuilder::Op(const std::string& op, const std::vector<RunInput>& inputs,
                         const std::vector<NamedAttr>& attributes, v1::Placement placement) {
  v1::Operation* operation = request_.add_operations();
  operation->set_op(op);
  for (const RunInput& input : inputs) *operation->add_inputs() = input.proto();
  for (const NamedAttr& attribute : attributes) {
    const auto [_, added] =
        operation->mutable_attributes()->insert({attribute.name, attribute.value.proto()});
    if (!added) {
      request_.mutable_operations()->RemoveLast();
      throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                  "operation " + op + " was given attribute '" + attribute.name +
                      "' more than once; give each attribute once");
    }
  }
  operation->set_placement(placement);
  return RunOutput(request_.operations_size() - 1);
}

RunBuilder& RunBuilder::NoGrad(bool on) {
  request_.set_no_grad(on);
  return *this;
}

RunBuilder& RunBuilder::ResetArena(bool on) {
  request_.set_reset_arena(on);
  return *this;
}

RunResult::RunResult(const v1::RunReply& reply) {
  outputs_.reserve(reply.outputs_size());
  for (const v1::TensorInfo& info : reply.outputs()) outputs_.emplace_back(info);
}

}  // namespace onemodel::client
