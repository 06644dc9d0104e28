// Error: the one exception type of the onemodel C++ client.
//
// A failed RPC becomes an Error carrying the gRPC status code and the server's message, with
// what() reading "<Rpc> failed: <CODE>: <message>". Client-side problems (a dtype mismatch,
// a malformed file) are Errors too, with the code that best describes them.
//
//   try {
//     session.Run(run);
//   } catch (const onemodel::client::Error& e) {
//     if (e.code() == grpc::StatusCode::INVALID_ARGUMENT) std::cerr << e.what() << "\n";
//   }
#pragma once

#include <grpcpp/support/status.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace onemodel::client {

class Error : public std::runtime_error {
 public:
  // A failed call of `rpc` ("Run", "PutTensor", ...) with its status.
  Error(std::string_view rpc, const grpc::Status& status);
  // A client-side failure: what() is `message`.
  Error(grpc::StatusCode code, const std::string& message);

  grpc::StatusCode code() const { return code_; }
  // The server's message alone (or the client-side message).
  const std::string& message() const { return message_; }

 private:
  grpc::StatusCode code_;
  std::string message_;
};

// The canonical upper-case name of `code` ("INVALID_ARGUMENT").
std::string_view StatusCodeName(grpc::StatusCode code);

// Throws Error(rpc, status) unless status is OK.
inline void CheckStatus(std::string_view rpc, const grpc::Status& status) {
  if (!status.ok()) throw Error(rpc, status);
}

}  // namespace onemodel::client
