// Logging of onemodeld: spdlog to stderr, one line per event, as text for people or as one
// JSON object per line for log collectors. Lines never carry tensor contents or secrets
// (session ids and tokens): sessions appear by their public serial ("s17").
//
//   ConfigureLogging("info", "json");
//   spdlog::info("session s{} created", serial);
#pragma once

#include <string>

namespace onemodel::server {

// Sets the level (trace..off) and the format (text | json) of the default logger.
void ConfigureLogging(const std::string& level, const std::string& format);

// `text` with the tag of every tensor handle in it ("p12.0123456789abcdef") replaced by
// "<tag>": failed calls are logged with their message, which may quote a handle.
std::string RedactHandleTags(std::string_view text);

// `text` with JSON string escapes (quotes, backslashes, control characters).
std::string JsonEscape(std::string_view text);

}  // namespace onemodel::server
