// What every RPC handler does with its call before and after the work: authenticate, find the
// session id (metadata header or message field), honour cancellation and deadlines, and, when
// the call ends, count it and log it when it failed or was slow.
//
//   CheckAuth(ctx, token);
//   std::string id = SessionIdOf(*ctx, request.session_id());
//   ... CheckLive(*ctx, "after 3 of 10 operations") ...
//   observer.Finished({.method = 10, .start = start, .request_id = id}, status);
#pragma once

#include <grpcpp/server_context.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/observability/log_rate_limit.h"
#include "server/observability/rpc_stats.h"

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
    "missing or wrong bearer token: send the metadata 'authorization: Bearer <token>' once, "
    "with the token the server was given (--auth-token-file)";

// True when `token` is empty, or `metadata` holds "authorization: Bearer <token>" and no other
// authorization value (compared in constant time): no copy of the header silently wins.
bool BearerTokenMatches(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                        const std::string& token);

// Throws RpcError UNAUTHENTICATED unless BearerTokenMatches(the call's metadata, `token`).
void CheckAuth(const grpc::CallbackServerContext& ctx, const std::string& token);

// Throws RpcError (saying `where`) once the call is over: UNAVAILABLE when the drain stopped
// it (the thread's CancelToken, core/common/cancellation.h), DEADLINE_EXCEEDED once its
// deadline passed, CANCELLED when the client cancelled it.
void CheckLive(const grpc::CallbackServerContext& ctx, std::string_view where);

// As CheckLive, from the thread's CancelToken alone: UNAVAILABLE (drain) or CANCELLED.
void CheckNotStopped(std::string_view where);

// The client's x-request-id header (printable, at most 64 characters) or a server number.
std::string RequestIdOf(const grpc::CallbackServerContext& ctx);

// A call that has ended, as CallObserver counts and logs it.
struct FinishedCall {
  int method = 0;                                 // index into the observer's method names
  std::chrono::steady_clock::time_point start{};  // its arrival
  // When its work began, after waiting behind its session's earlier requests (for the calls
  // that wait for their session).
  std::optional<std::chrono::steady_clock::time_point> work_start{};
  std::string_view request_id{};
  // Its decode and encode time (request_phases.h); Finished() fills in queue and execute.
  RequestPhases phases{};
  bool ran_inline = false;     // its work ran on the gRPC thread that received it
  int64_t session_serial = 0;  // 0: it named no session
  bool open_ended = false;     // it lasts as long as its client wants (WatchStats): never slow
};

// The time split of `call`, which took `duration` in all: its decode and encode as recorded,
// queue until its work began (0 for calls that do not wait for a session), execute the rest.
RequestPhases Split(const FinishedCall& call, std::chrono::nanoseconds duration);

// Counts finished calls (RpcStats) and logs each failure and each slow call.
class CallObserver {
 public:
  // `methods` names the RpcStats method indices, in order. A call that takes longer than
  // `slow_request` is logged as slow (0: none is). At most `warnings_per_second` calls a
  // second are logged (0: all are; --max-request-warnings-per-second).
  CallObserver(RpcStats& stats, std::vector<std::string> methods,
               std::chrono::milliseconds slow_request, int64_t warnings_per_second)
      : stats_(stats),
        methods_(std::move(methods)),
        slow_request_(slow_request),
        warnings_(warnings_per_second) {}
  // Counts `call` with `status`; logs a warning when it failed, and one when it was slow,
  // within the rate limit: the first call logged after some were held back says how many.
  void Finished(const FinishedCall& call, const grpc::Status& status) const;

 private:
  RpcStats& stats_;
  const std::vector<std::string> methods_;
  const std::chrono::milliseconds slow_request_;
  mutable LogRateLimit warnings_;
};

}  // namespace onemodel::server
