// The gRPC name of a status code ("OK", "INVALID_ARGUMENT", ...), shared by the server's
// statistics and the clients' error messages (both depend on the wire, not on each other).
//
//   StatusCodeName(grpc::StatusCode::NOT_FOUND) == "NOT_FOUND"
#pragma once

#include <array>
#include <string_view>

namespace onemodel {

// gRPC status codes run from OK (0) to UNAUTHENTICATED (16).
inline constexpr int kStatusCodeCount = 17;

// The name of `code`; "UNKNOWN" outside 0..16.
constexpr std::string_view StatusCodeName(int code) {
  constexpr std::array<std::string_view, kStatusCodeCount> kNames = {"OK",
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
  return code >= 0 && code < kStatusCodeCount ? kNames[static_cast<size_t>(code)] : "UNKNOWN";
}

}  // namespace onemodel
