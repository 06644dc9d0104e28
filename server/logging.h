// Logging of onemodeld: spdlog to stderr, one line per event, as text for people or as one
// JSON object per line for log collectors. Lines never carry tensor contents or secrets
// (session ids and tokens): sessions appear by their public serial ("s17"). Text from clients
// (names, operation names, handles) goes through Printable() before it reaches a log line or a
// status message, and every message is passed through it again when written, so a client
// cannot start a line of its own or send terminal escapes.
//
//   ConfigureLogging("info", "json");
//   spdlog::info("session s{} created", serial);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace onemodel::server {

// Sets the level (trace..off) and the format (text | json) of the default logger.
void ConfigureLogging(const std::string& level, const std::string& format);

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

// `text` with JSON string escapes (quotes, backslashes, control characters).
std::string JsonEscape(std::string_view text);

}  // namespace onemodel::server
