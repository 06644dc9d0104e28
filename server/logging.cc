#include "server/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <regex>
#include <string_view>
#include <utility>

namespace onemodel::server {
namespace {

// %* in a pattern: the message on one line (Printable), and for JSON escaped for a string.
class MessageFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit MessageFlag(bool json) : json_(json) {}
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string text = Printable({msg.payload.data(), msg.payload.size()});
    if (json_) text = JsonEscape(text);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<MessageFlag>(json_);
  }

 private:
  const bool json_;
};

// The length of the UTF-8 sequence at the start of `s` and its code point, or {0, 0} when it
// is not valid UTF-8 (a stray, overlong, surrogate or out-of-range sequence).
std::pair<size_t, char32_t> DecodeUtf8(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b = byte(0);
  const size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
  if (n == 0 || b > 0xF4 || s.size() < n) return {0, 0};
  char32_t cp = b & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  const char32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {n, cp};
}

// Code points above ASCII that move or reorder text on a terminal or in a viewer: C1 controls,
// line and paragraph separators, bidirectional marks and overrides.
bool IsInvisibleControl(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string RedactHandleTags(std::string_view text) {
  static const std::regex kHandle("([ap][1-9][0-9]*)\\.[0-9a-f]{16}");
  return std::regex_replace(std::string(text), kHandle, "$1.<tag>");
}

std::string Printable(std::string_view text, size_t max_bytes) {
  const bool cut = text.size() > max_bytes;
  if (cut) text = text.substr(0, max_bytes);
  std::string out;
  out.reserve(text.size());
  char code[12];
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
    } else if (const auto [n, cp] = DecodeUtf8(text.substr(i)); n > 0 && !IsInvisibleControl(cp)) {
      out.append(text.substr(i, n));
      i += n;
    } else if (n > 0) {
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(cp));
      out += code;
      i += n;
    } else {
      std::snprintf(code, sizeof code, "\\x%02x", c);
      out += code;
      ++i;
    }
  }
  if (cut) out += "...";
  return out;
}

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char code[8];
          std::snprintf(code, sizeof code, "\\u%04x", c);
          out += code;
        } else {
          out += c;
        }
    }
  }
  return out;
}

void ConfigureLogging(const std::string& level, const std::string& format) {
  auto logger = std::make_shared<spdlog::logger>("onemodeld",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == "json") {
    formatter->add_flag<MessageFlag>('*', true).set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","thread":%t,"msg":"%*"})");
  } else {
    formatter->add_flag<MessageFlag>('*', false).set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %*");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

void FlushLogs() { spdlog::default_logger_raw()->flush(); }

}  // namespace onemodel::server
