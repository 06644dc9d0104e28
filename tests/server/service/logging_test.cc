// What the server's log lines keep and hide: handle tags are redacted from failure messages;
// JSON lines are one valid object each whatever the message holds, with a line's fields as
// members of their own; text lines are the text they are given.
#include "server/observability/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/common/parse_json.h"

namespace onemodel::server {
namespace {

TEST(RedactHandleTags, HidesEveryTagAndKeepsTheSerials) {
  EXPECT_EQ(
      RedactHandleTags("tensor handle p12.0123456789abcdef not found; a7.fedcba9876543210 too"),
      "tensor handle p12.<tag> not found; a7.<tag> too");
}

TEST(RedactHandleTags, LeavesTextWithoutHandlesAlone) {
  for (const char* text : {"", "no handle here", "p12.0123 (short)", "q12.0123456789abcdef",
                           "p0.0123456789abcdef", "version 1.2.3"}) {
    EXPECT_EQ(RedactHandleTags(text), text) << text;
  }
}

TEST(RedactHandleTags, RedactsATagFollowedByMoreHex) {
  // A tag is 16 hex digits; whatever follows is not part of the handle and stays.
  EXPECT_EQ(RedactHandleTags("p3.0123456789abcdef00"), "p3.<tag>00");
}

TEST(FlushLogs, LeavesTheLoggerUsableForCallsRefusedDuringTheExit) {
  ConfigureLogging("info", "text");
  FlushLogs();
  ASSERT_NE(spdlog::default_logger_raw(), nullptr);
  ::testing::internal::CaptureStderr();
  spdlog::warn("request r1 Run session s0 failed: UNAVAILABLE");
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("request r1 Run"), std::string::npos);
}

// What `log` wrote to stderr, one parsed JSON object per line.
std::vector<nlohmann::json> JsonLines(const std::string& written) {
  std::vector<nlohmann::json> lines;
  for (size_t begin = 0, end; (end = written.find('\n', begin)) != std::string::npos;
       begin = end + 1) {
    lines.push_back(testing::ParseJson(written.substr(begin, end - begin)));
  }
  return lines;
}

// A message with everything a client might send: quotes, backslashes, control characters,
// bytes that are not UTF-8 (a stray continuation, an overlong slash, a cut sequence), a line
// separator and a terminal escape.
const std::string kHostile = std::string("quote \" backslash \\ nl\n cr\r nul") +
                             std::string(1, '\0') +
                             " esc\x1b[2J bad \xff\xc0\xaf\xe2\x82 ls\u2028 end";

TEST(JsonLogs, EveryMessageIsOneValidObjectWithTimeLevelThreadAndMessage) {
  ConfigureLogging("info", "json");
  ::testing::internal::CaptureStderr();
  spdlog::warn("client '{}'", kHostile);
  const std::string written = ::testing::internal::GetCapturedStderr();
  const std::vector<nlohmann::json> lines = JsonLines(written);
  ASSERT_EQ(lines.size(), 1u) << written;
  const nlohmann::json& line = lines[0];
  std::vector<std::string> keys;
  for (const auto& [key, value] : line.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"level", "msg", "thread", "time"}));
  EXPECT_TRUE(written.starts_with("{\"time\":")) << written;
  EXPECT_EQ(line["level"], "warning");
  EXPECT_TRUE(line["thread"].is_number_unsigned());
  EXPECT_EQ(line["msg"], "client '" + Printable(kHostile) + "'");
}

TEST(JsonLogs, ALineWithFieldsCarriesThemAsMembersAndItsMessageAsMsg) {
  ConfigureLogging("info", "json");
  ::testing::internal::CaptureStderr();
  LogWithFields(spdlog::level::warn,
                {.request_id = "r7",
                 .rpc = "Run",
                 .session_serial = 3,
                 .status = "NOT_FOUND",
                 .duration = std::chrono::microseconds(1500),
                 .queued = std::chrono::microseconds(500)},
                "request r7 Run session s3 failed: NOT_FOUND: gone", "failed: gone " + kHostile);
  LogWithFields(spdlog::level::info, {.session_serial = 4}, "session s4 closed", "session closed");
  const std::vector<nlohmann::json> lines = JsonLines(::testing::internal::GetCapturedStderr());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["msg"], "failed: gone " + Printable(kHostile));
  EXPECT_EQ(lines[0]["request_id"], "r7");
  EXPECT_EQ(lines[0]["rpc"], "Run");
  EXPECT_EQ(lines[0]["session"], "s3");
  EXPECT_EQ(lines[0]["status"], "NOT_FOUND");
  EXPECT_EQ(lines[0]["duration_ms"], 1.5);
  EXPECT_EQ(lines[0]["queued_ms"], 0.5);
  EXPECT_EQ(lines[0]["run_ms"], 1.0);
  // Fields not set are left out.
  EXPECT_EQ(lines[1]["msg"], "session closed");
  EXPECT_EQ(lines[1]["session"], "s4");
  for (const char* absent : {"request_id", "rpc", "status", "duration_ms", "queued_ms"}) {
    EXPECT_FALSE(lines[1].contains(absent)) << absent;
  }
}

TEST(TextLogs, ALineWithFieldsIsItsTextOnOneLine) {
  ConfigureLogging("info", "text");
  ::testing::internal::CaptureStderr();
  LogWithFields(spdlog::level::warn, {.request_id = "r7", .rpc = "Run", .session_serial = 3},
                "request r7 Run session s3 failed: NOT_FOUND: a\nb", "failed: a\nb");
  const std::string written = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(written.ends_with(" warning request r7 Run session s3 failed: NOT_FOUND: a\\nb\n"))
      << written;
}

}  // namespace
}  // namespace onemodel::server
