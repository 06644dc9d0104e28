// RpcError: a failure the server reports as a gRPC status, with a message a person can act on.
//
// Server code throws RpcError for request problems the core cannot know about (unknown
// handle, bad attribute, malformed TensorProto, quota); core exceptions are mapped at the
// same boundary (server/rpc/status_mapping.h), so every failure of a request becomes one status.
//
//   if (!entry) throw RpcError(grpc::StatusCode::NOT_FOUND, "handle 'p7.1f..' is unknown");
#pragma once

#include <grpcpp/support/status.h>

#include <stdexcept>
#include <string>

namespace onemodel::server {

class RpcError : public std::runtime_error {
 public:
  RpcError(grpc::StatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  grpc::StatusCode code() const { return code_; }

 private:
  grpc::StatusCode code_;
};

// INVALID_ARGUMENT: the request itself is wrong (shape, dtype, attribute, TensorProto).
inline RpcError InvalidArgument(const std::string& message) {
  return RpcError(grpc::StatusCode::INVALID_ARGUMENT, message);
}
// NOT_FOUND: unknown session or handle.
inline RpcError NotFound(const std::string& message) {
  return RpcError(grpc::StatusCode::NOT_FOUND, message);
}
// FAILED_PRECONDITION: the state does not allow it (stale tensor, version change).
inline RpcError FailedPrecondition(const std::string& message) {
  return RpcError(grpc::StatusCode::FAILED_PRECONDITION, message);
}
// RESOURCE_EXHAUSTED: a limit or quota, named with its value.
inline RpcError ResourceExhausted(const std::string& message) {
  return RpcError(grpc::StatusCode::RESOURCE_EXHAUSTED, message);
}

}  // namespace onemodel::server
