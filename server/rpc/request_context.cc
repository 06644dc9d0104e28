#include "server/rpc/request_context.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>

#include "core/common/cancellation.h"
#include "server/observability/logging.h"
#include "server/observability/serial_label.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

// The value of metadata `key`, or empty.
std::string_view Metadata(const grpc::CallbackServerContext& ctx, std::string_view key) {
  const auto& md = ctx.client_metadata();
  auto it = md.find(grpc::string_ref(key.data(), key.size()));
  return it == md.end() ? std::string_view()
                        : std::string_view(it->second.data(), it->second.size());
}

// Compares without an early exit, so the time taken does not reveal where they differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (b.empty() ? 0 : b[i % b.size()]));
  }
  return diff == 0;
}

// The error of a call the drain stopped at `where`.
RpcError Drained(std::string_view where) {
  return RpcError(grpc::StatusCode::UNAVAILABLE,
                  "the server is shutting down and stopped this call " + std::string(where) +
                      " when its drain time (--drain-seconds) ran out; nothing after that ran; "
                      "retry on another instance or after it restarts");
}

bool DrainStopped(const CancelToken* token) {
  return token && token->cause() == static_cast<int>(grpc::StatusCode::UNAVAILABLE);
}

}  // namespace

RequestPhases Split(const FinishedCall& call, std::chrono::nanoseconds duration) {
  RequestPhases phases = call.phases;
  phases[Phase::kQueue] = call.work_start ? *call.work_start - call.start : duration.zero();
  phases[Phase::kExecute] =
      std::max(duration.zero(),
               duration - phases[Phase::kQueue] - phases[Phase::kDecode] - phases[Phase::kEncode]);
  return phases;
}

std::string_view SessionHeaderOf(const grpc::CallbackServerContext& ctx) {
  const auto [first, last] = ctx.client_metadata().equal_range(kSessionHeader);
  for (auto it = first; it != last; ++it) {
    if (it->second != first->second) {
      throw InvalidArgument(
          "the 'onemodel-session' header is sent more than once with different values; send "
          "it once");
    }
  }
  return first == last ? std::string_view()
                       : std::string_view(first->second.data(), first->second.size());
}

std::string SessionIdOf(const grpc::CallbackServerContext& ctx, const std::string& field) {
  const std::string_view header = SessionHeaderOf(ctx);
  if (header.empty() && field.empty()) {
    throw InvalidArgument(
        "no session id: send the metadata header 'onemodel-session' or set session_id (create "
        "a session with CreateSession first)");
  }
  if (!header.empty() && !field.empty() && header != field) {
    throw InvalidArgument(
        "the 'onemodel-session' header and the session_id field name different sessions; send "
        "one, or the same id in both");
  }
  return header.empty() ? field : std::string(header);
}

bool BearerTokenMatches(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                        const std::string& token) {
  if (token.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  const auto [first, last] = metadata.equal_range("authorization");
  bool matches = first != last;
  for (auto it = first; it != last; ++it) {
    const std::string_view sent(it->second.data(), it->second.size());
    matches &= sent.substr(0, kBearer.size()) == kBearer &&
               ConstantTimeEquals(sent.substr(kBearer.size()), token);
  }
  return matches;
}

void CheckAuth(const grpc::CallbackServerContext& ctx, const std::string& token) {
  if (!BearerTokenMatches(ctx.client_metadata(), token)) {
    throw RpcError(grpc::StatusCode::UNAUTHENTICATED, kTokenRefusal);
  }
}

void CheckLive(const grpc::CallbackServerContext& ctx, std::string_view where) {
  const CancelToken* token = CurrentCancelToken();
  if (DrainStopped(token)) throw Drained(where);
  const bool late = std::chrono::system_clock::now() > ctx.deadline();
  if (!late && (ctx.IsCancelled() || Cancelled(token))) {
    throw RpcError(grpc::StatusCode::CANCELLED,
                   "the call was cancelled " + std::string(where) + "; nothing after that ran");
  }
  if (late) {
    throw RpcError(grpc::StatusCode::DEADLINE_EXCEEDED,
                   "the deadline passed " + std::string(where) + "; nothing after that ran");
  }
}

void CheckNotStopped(std::string_view where) {
  const CancelToken* token = CurrentCancelToken();
  if (DrainStopped(token)) throw Drained(where);
  if (Cancelled(token)) {
    throw RpcError(grpc::StatusCode::CANCELLED, "the call was cancelled or its deadline passed " +
                                                    std::string(where) +
                                                    "; nothing after that ran");
  }
}

std::string RequestIdOf(const grpc::CallbackServerContext& ctx) {
  static std::atomic<uint64_t> next{1};
  const std::string_view sent = Metadata(ctx, "x-request-id");
  if (!sent.empty() && sent.size() <= 64) {
    bool printable = true;
    for (char c : sent) printable &= c > 0x20 && c < 0x7F && c != '"' && c != '\\';
    if (printable) return std::string(sent);
  }
  return SerialLabel('r', next.fetch_add(1, std::memory_order_relaxed));
}

void CallObserver::Finished(const FinishedCall& call, const grpc::Status& status) const {
  const auto now = std::chrono::steady_clock::now();
  const auto duration = std::chrono::duration_cast<std::chrono::nanoseconds>(now - call.start);
  stats_.Record(call.method, status.error_code(), duration, Split(call, duration), call.ran_inline);
  const bool slow = slow_request_.count() > 0 && !call.open_ended && duration > slow_request_;
  if (status.ok() && !slow) return;
  int64_t held_back = 0;
  if (!warnings_.Allow(now, &held_back)) return;
  if (held_back > 0) {
    const std::string line =
        fmt::format("{} request warning(s) not logged: over --max-request-warnings-per-second {}",
                    held_back, warnings_.per_second());
    LogWithFields(spdlog::level::warn, LogFields{}, line, line);
  }
  const std::string& rpc = methods_[call.method];
  LogFields fields{.request_id = call.request_id,
                   .rpc = rpc,
                   .session_serial = call.session_serial,
                   .status = StatusCodeName(status.error_code()),
                   .duration = duration};
  if (call.work_start) fields.queued = *call.work_start - call.start;
  // Serial 0: the call reached no session (CreateSession, Ping, an unknown id).
  const std::string named =
      call.session_serial == 0
          ? fmt::format("request {} {}", call.request_id, rpc)
          : fmt::format("request {} {} session s{}", call.request_id, rpc, call.session_serial);
  if (!status.ok()) {
    const std::string message = RedactHandleTags(status.error_message());
    LogWithFields(spdlog::level::warn, fields,
                  fmt::format("{} failed: {}: {}", named, fields.status, message),
                  "failed: " + message);
  }
  if (slow) {
    const auto ms = [](std::chrono::nanoseconds d) { return d.count() / 1e6; };
    const std::string split = fields.queued
                                  ? fmt::format(" (queued {:.1f} ms, ran {:.1f} ms)",
                                                ms(*fields.queued), ms(duration - *fields.queued))
                                  : "";
    const std::string over = fmt::format("over --slow-request-ms {}", slow_request_.count());
    LogWithFields(spdlog::level::warn, fields,
                  fmt::format("{} slow: {} after {:.1f} ms{}, {}", named, fields.status,
                              ms(duration), split, over),
                  "slow request: " + over);
  }
}

}  // namespace onemodel::server
