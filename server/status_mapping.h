// The one boundary where failures become gRPC statuses (DESIGN.md section 4).
//
// RpcError keeps its code. Core exceptions map by kind: shape, type and layout problems are
// INVALID_ARGUMENT; stale tensors, version changes and freed graphs FAILED_PRECONDITION; memory
// limits RESOURCE_EXHAUSTED; anything else INTERNAL. The message is the exception's own (a
// std::bad_alloc or an unexpected std::exception gets a sentence around it).
//
//   try { ... } catch (...) { return CurrentExceptionStatus(); }
#pragma once

#include <grpcpp/support/status.h>

namespace onemodel::server {

// The status for the exception being handled; call only inside a catch block.
grpc::Status CurrentExceptionStatus();

}  // namespace onemodel::server
