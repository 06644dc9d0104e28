// What the server's log lines keep and hide: handle tags are redacted from failure messages.
#include "server/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

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
  testing::internal::CaptureStderr();
  spdlog::warn("request r1 Run session s0 failed: UNAVAILABLE");
  EXPECT_NE(testing::internal::GetCapturedStderr().find("request r1 Run"), std::string::npos);
}

}  // namespace
}  // namespace onemodel::server
