#include "client/lib/error.h"

#include "proto/status_code_name.h"

namespace onemodel::client {

std::string_view StatusCodeName(grpc::StatusCode code) {
  return onemodel::StatusCodeName(static_cast<int>(code));
}

Error::Error(std::string_view rpc, const grpc::Status& status)
    : std::runtime_error(std::string(rpc) +
                         " failed: " + std::string(StatusCodeName(status.error_code())) + ": " +
                         status.error_message()),
      code_(status.error_code()),
      message_(status.error_message()) {}

Error::Error(grpc::StatusCode code, const std::string& message)
    : std::runtime_error(message), code_(code), message_(message) {}

}  // namespace onemodel::client
