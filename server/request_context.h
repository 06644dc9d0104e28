// What every RPC handler does with its call before and after the work: authenticate, find the
// session id (metadata header or message field), honour cancellation and deadlines, and, when
// the call ends, count it and log a failure.
//
//   CheckAuth(ctx, token);
//   std::string id = SessionIdOf(*ctx, request.session_id());
//   ... CheckLive(*ctx, "after 3 of 10 operations") ...
//   observer.Finished(method, start, status, request_id, session_serial);
#pragma once

#include <grpcpp/server_context.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/rpc_stats.h"

namespace onemodel::server {

// The request metadata header that names the session (proxies route by it).
inline constexpr char kSessionHeader[] = "onemodel-session";
// The reply metadata header that names the server instance.
inline constexpr char kInstanceHeader[] = "onemodel-instance";

// The 'onemodel-session' header of a call, or empty. Throws RpcError INVALID_ARGUMENT when it
// is sent more than once with different values (no copy may silently win).
std::string_view SessionHeaderOf(const grpc::CallbackServerContext& ctx);

// The session id of a call: the metadata header and the message field must agree when both
// are given. Throws RpcError INVALID_ARGUMENT when neither is given or they differ.
std::string SessionIdOf(const grpc::CallbackServerContext& ctx, const std::string& field);

// The message of a call refused for its bearer token.
inline constexpr char kTokenRefusal[] =
    "missing or wrong bearer token: send the metadata 'authorization: Bearer <token>' with the "
    "token the server was given (--auth-token-file)";

// True when `token` is empty or `authorization` is "Bearer <token>" (compared in constant time).
bool BearerTokenMatches(std::string_view authorization, const std::string& token);

// Throws RpcError UNAUTHENTICATED unless `token` is empty or the call sends
// "authorization: Bearer <token>" (compared in constant time).
void CheckAuth(const grpc::CallbackServerContext& ctx, const std::string& token);

// Throws RpcError (saying `where`) once the call is over: UNAVAILABLE when the drain stopped
// it (the thread's CancelToken, core/common/cancellation.h), DEADLINE_EXCEEDED once its
// deadline passed, CANCELLED when the client cancelled it.
void CheckLive(const grpc::CallbackServerContext& ctx, std::string_view where);

// As CheckLive, from the thread's CancelToken alone: UNAVAILABLE (drain) or CANCELLED.
void CheckNotStopped(std::string_view where);

// The client's x-request-id header (printable, at most 64 characters) or a server number.
std::string RequestIdOf(const grpc::CallbackServerContext& ctx);

// Counts finished calls (RpcStats) and logs each failure with its request id.
class CallObserver {
 public:
  // `methods` names the RpcStats method indices, in order.
  CallObserver(RpcStats& stats, std::vector<std::string> methods)
      : stats_(stats), methods_(std::move(methods)) {}
  void Finished(int method, std::chrono::steady_clock::time_point start, const grpc::Status& status,
                const std::string& request_id, int64_t session_serial) const;

 private:
  RpcStats& stats_;
  const std::vector<std::string> methods_;
};

}  // namespace onemodel::server
