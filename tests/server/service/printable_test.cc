// Printable(): the one function that makes client text safe for a log line or a status
// message, and the log formatter that applies it to every message.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <string>

#include "server/observability/logging.h"

namespace onemodel::server {
namespace {

TEST(Printable, EscapesControlCharacters) {
  EXPECT_EQ(Printable("evil\nline"), "evil\\nline");
  EXPECT_EQ(Printable("\r\t"), "\\r\\t");
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(Printable("\x1b[2J\x7f"), "\\x1b[2J\\x7f");
}

TEST(Printable, KeepsPrintableUtf8AndBackslashes) {
  for (const char* text : {"plain ASCII ~!@#$%^&*()", "h\xc3\xa9llo", "\xe6\x97\xa5\xe6\x9c\xac",
                           "\xf0\x9f\x98\x80", "back\\slash \\n"}) {
    EXPECT_EQ(Printable(text), text);
  }
}

TEST(Printable, EscapesInvisibleControlsAboveAscii) {
  EXPECT_EQ(Printable("\xc2\x85"), "\\u0085");          // NEL, a C1 control
  EXPECT_EQ(Printable("a\xe2\x80\xa8z"), "a\\u2028z");  // line separator
  EXPECT_EQ(Printable("\xe2\x80\xae"), "\\u202e");      // right-to-left override
  EXPECT_EQ(Printable("\xe2\x81\xa6"), "\\u2066");      // left-to-right isolate
}

TEST(Printable, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(Printable("\xff"), "\\xff");
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(Printable("\xe6\x97"), "\\xe6\\x97");                    // cut short
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(Printable, CutsAtMaxBytesAndSaysSo) {
  EXPECT_EQ(Printable("abcdef", 3), "abc...");
  EXPECT_EQ(Printable("abc", 3), "abc");
  EXPECT_EQ(Printable("\n\n\n\n", 2), "\\n\\n...");
  EXPECT_EQ(Printable(std::string(100000, 'x'), 48).size(), 51u);
}

TEST(Printable, IsIdempotentAndLeavesNoControlByte) {
  std::mt19937 random(12);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text(random() % 24, ' ');
    for (char& c : text) c = static_cast<char>(random());
    const std::string once = Printable(text);
    EXPECT_EQ(Printable(once), once);
    for (char c : once) {
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7F) << once;
    }
  }
}

// What the default logger writes for one message, in `format`.
std::string Logged(const std::string& format, const std::string& message) {
  ConfigureLogging("info", format);
  testing::internal::CaptureStderr();
  spdlog::info("client '{}' said hi", message);
  spdlog::default_logger()->flush();
  return testing::internal::GetCapturedStderr();
}

TEST(LogFormatter, EveryMessageStaysOneLineInBothFormats) {
  const std::string forged = "x\n2026-12-03 13:00:00.000 info forged\x1b[31m";
  const std::string text = Logged("text", forged);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("client 'x\\n2026-12-03 13:00:00.000 info forged\\x1b[31m' said hi"),
            std::string::npos)
      << text;
  const std::string json = Logged("json", forged);
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 1) << json;
  EXPECT_NE(
      json.find(R"("msg":"client 'x\\n2026-12-03 13:00:00.000 info forged\\x1b[31m' said hi")"),
      std::string::npos)
      << json;
}

}  // namespace
}  // namespace onemodel::server
