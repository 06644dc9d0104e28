// The ListOperations reply, made from the operation table (server/ops/op_registry.h) itself, so
// what clients discover is what Run accepts.
//
//   v1::ListOperationsReply reply;
//   ListOperations("", &reply);          // every operation, in table order
//   ListOperations("Softmax", &reply);   // one; an unknown name throws NOT_FOUND with hints
#pragma once

#include <string_view>

#include "onemodel/v1/onemodel.pb.h"
#include "server/ops/op_registry.h"

namespace onemodel::server {

// `spec` as the wire describes an operation.
void FillOperationSpec(const OpSpec& spec, v1::OperationSpec* out);
// Every operation (`name` empty) or the one called `name` (else throws RpcError NOT_FOUND
// naming the nearest names).
void ListOperations(std::string_view name, v1::ListOperationsReply* reply);

}  // namespace onemodel::server
