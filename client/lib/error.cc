#include "client/lib/error.h"

#include <array>

namespace onemodel::client {

std::string_view StatusCodeName(grpc::StatusCode code) {
  static constexpr std::array<std::string_view, 17> kNames = {"OK",
                                                              "CANCELLED",
                                                              "UNKNOWN",
                                                              "INVALID_ARGUMENT",
                                                              "DEADLINE_EXCEEDED",
                                                              "NOT_FOUND",
                                                              "ALREADY_EXISTS",
                                                              "PERMISSION_DENIED",
                                                              "RESOURCE_EXHAUSTED",
                                                              "FAILED_PRECONDITION",
                                                              "ABORTED",
                                                              "OUT_OF_RANGE",
                                                              "UNIMPLEMENTED",
                                                              "INTERNAL",
                                                              "UNAVAILABLE",
                                                              "DATA_LOSS",
                                                              "UNAUTHENTICATED"};
  const auto index = static_cast<size_t>(code);
  return index < kNames.size() ? kNames[index] : "UNKNOWN";
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
