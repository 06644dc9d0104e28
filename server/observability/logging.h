// Logging of onemodeld: spdlog to stderr, one line per event, as text for people or as one
// JSON object per line for log collectors (nlohmann-json writes it: time, level, thread, msg,
// and for a line about a request or a session its fields, see LogFields). Lines never carry
// tensor contents or secrets
// (session ids and tokens): sessions appear by their public serial ("s17"). Text from clients
// (names, operation names, handles) goes through Printable() before it reaches a log line or a
// status message, and every message is passed through it again when written, so a client
// cannot start a line of its own or send terminal escapes.
//
//   ConfigureLogging("info", "json");
//   spdlog::info("listening on {}", address);
//   LogWithFields(spdlog::level::warn, {.request_id = "r7", .rpc = "Run", .session_serial = 3},
//                 "request r7 Run session s3 failed: ...", "failed: ...");
#pragma once

#include <spdlog/common.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace onemodel::server {

// Sets the level (trace..off) and the format (text | json) of the default logger.
void ConfigureLogging(const std::string& level, const std::string& format);

// What a log line is about besides its message. A JSON line carries each field that is set as
// a member of its own; a text line shows none of them (its text names the request for people).
struct LogFields {
  std::string_view request_id{};  // "request_id": the client's x-request-id or "r123"
  std::string_view rpc{};         // "rpc": the method's name ("Run")
  int64_t session_serial = 0;     // "session": "s17"; 0 when the line is about no session
  std::string_view status{};      // "status": a status code name ("NOT_FOUND", "OK")
  // "duration_ms": from the request's arrival to its status.
  std::optional<std::chrono::nanoseconds> duration{};
  // "queued_ms": the part of the duration spent waiting behind the session's earlier requests,
  // and "run_ms" the rest; for the requests that wait for their session.
  std::optional<std::chrono::nanoseconds> queued{};
};

// Logs one line at `level`: as text `text`, as JSON `message` (msg) with `fields` beside it.
// Both go through Printable() as every message does.
void LogWithFields(spdlog::level::level_enum level, const LogFields& fields, std::string_view text,
                   std::string_view message);

// Writes out every line the default logger holds. The logger stays usable: the process exits
// while gRPC still refuses late calls on other threads, and those refusals are logged.
void FlushLogs();

// `text` with the tag of every tensor handle in it ("p12.0123456789abcdef") replaced by
// "<tag>": failed calls are logged with their message, which may quote a handle.
std::string RedactHandleTags(std::string_view text);

// `text` (from a client) made safe to show on one line: its first `max_bytes` bytes with
// control characters escaped (\n, \r, \t, \x00-\x1f, \x7f, and as \u0085 the C1 controls, line
// and paragraph separators and bidirectional overrides), bytes that are not UTF-8 as \xNN, and
// "..." after a cut. Valid printable UTF-8 and backslashes stay, so applying it twice changes
// nothing more than once.
std::string Printable(std::string_view text, size_t max_bytes = std::string_view::npos);

}  // namespace onemodel::server
