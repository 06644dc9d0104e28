#include "server/observability/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string_view>
#include <utility>

#include "server/observability/serial_label.h"

namespace onemodel::server {
namespace {

// %* in a text pattern: the message on one line (Printable).
class MessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text = Printable({msg.payload.data(), msg.payload.size()});
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<MessageFlag>();
  }
};

// The fields and JSON message of the line LogWithFields is writing on this thread, if any. The
// logger's sink is synchronous: its formatter runs inside the logging call, on this thread.
struct PendingLine {
  const LogFields& fields;
  std::string_view message;
};
thread_local const PendingLine* pending_line = nullptr;

// `d` in milliseconds, to the microsecond.
double Milliseconds(std::chrono::nanoseconds d) {
  return std::round(static_cast<double>(d.count()) / 1e3) / 1e3;
}

// Adds the fields of `f` that are set to `line`.
void AddFields(const LogFields& f, nlohmann::ordered_json& line) {
  if (!f.request_id.empty()) line["request_id"] = f.request_id;
  if (!f.rpc.empty()) line["rpc"] = f.rpc;
  if (f.session_serial != 0) line["session"] = SerialLabel('s', f.session_serial);
  if (!f.status.empty()) line["status"] = f.status;
  if (f.duration) line["duration_ms"] = Milliseconds(*f.duration);
  if (f.duration && f.queued) {
    line["queued_ms"] = Milliseconds(*f.queued);
    line["run_ms"] = Milliseconds(*f.duration - *f.queued);
  }
}

// One JSON object per line: time, level, thread, msg (Printable), then the pending line's
// fields. Written by nlohmann-json, so any message is valid JSON (Printable leaves only valid
// UTF-8, and bytes that are not are replaced rather than thrown about).
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    spdlog::memory_buf_t time;
    time_.format(msg, time);
    nlohmann::ordered_json line;
    line["time"] = std::string_view(time.data(), time.size());
    const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
    line["level"] = std::string_view(level.data(), level.size());
    line["thread"] = msg.thread_id;
    line["msg"] =
        Printable(pending_line ? pending_line->message
                               : std::string_view(msg.payload.data(), msg.payload.size()));
    if (pending_line) AddFields(pending_line->fields, line);
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }

 private:
  spdlog::pattern_formatter time_{"%Y-%m-%dT%H:%M:%S.%e%z", spdlog::pattern_time_type::local, ""};
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

void LogWithFields(spdlog::level::level_enum level, const LogFields& fields, std::string_view text,
                   std::string_view message) {
  spdlog::logger* logger = spdlog::default_logger_raw();
  if (!logger->should_log(level)) return;
  const PendingLine line{fields, message};
  pending_line = &line;
  logger->log(level, "{}", text);
  pending_line = nullptr;
}

void ConfigureLogging(const std::string& level, const std::string& format) {
  auto logger = std::make_shared<spdlog::logger>("onemodeld",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<MessageFlag>('*').set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %*");
    logger->set_formatter(std::move(formatter));
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

void FlushLogs() { spdlog::default_logger_raw()->flush(); }

}  // namespace onemodel::server
