// Text from clients cannot forge log lines or smuggle control characters into status messages:
// a client name and an operation name with newlines, a NUL and a terminal escape are shown
// escaped (\n, \x00, \x1b) on the one line that logs them and in the status the client gets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "tests/client/server_test.h"
#include "tests/security/logged_server.h"

namespace onemodel::testing {
namespace {

using grpc::StatusCode;
using ::testing::HasSubstr;
using ::testing::Not;

// What a forger wants to appear as a line of its own.
constexpr char kForgedLine[] = "2026-12-03 13:00:00.000 info forged";

// True when `text` holds a byte below 0x20 or DEL.
bool HasControlCharacter(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return true;
  }
  return false;
}

TEST(LogInjectionTest, ClientNamesAndOperationNamesStayOnOneEscapedLine) {
  LoggedServer logged({}, "text");
  const std::string name = std::string("evil\n") + kForgedLine + "\r\x1b[2J";
  const std::string op = std::string("Neg\n") + kForgedLine + std::string("\0tail", 5);
  std::string status;
  {
    client::Client client(logged.server().grpc_address());
    client::Session session = client.CreateSession({.client_name = name});
    const client::TensorHandle x = session.Put<float>(std::vector<float>{1}, {1});
    client::RunBuilder run;
    run.Op(op, {x});
    try {
      session.Run(run);
      ADD_FAILURE() << "an unknown operation ran";
    } catch (const client::Error& e) {
      EXPECT_EQ(e.code(), StatusCode::INVALID_ARGUMENT);
      status = e.message();
    }
    session.Close();
  }
  // The status names the operation escaped, and holds no control character.
  EXPECT_FALSE(HasControlCharacter(status)) << status;
  EXPECT_THAT(status,
              HasSubstr("unknown operation 'Neg\\n2026-12-03 13:00:00.000 info forged\\x00tail'"));

  const std::string log = logged.StopAndReadLog();
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "no terminal escape reaches the log";
  EXPECT_EQ(log.find('\r'), std::string::npos);
  int forged_mentions = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_FALSE(line.starts_with(kForgedLine)) << "a forged line: " << line;
    if (line.find("info forged") == std::string::npos) continue;
    ++forged_mentions;
    // Each mention is inside a real line: the creation log, or the refused Run's failure.
    EXPECT_TRUE(line.find("session s1 created") != std::string::npos ||
                line.find("failed: INVALID_ARGUMENT") != std::string::npos)
        << line;
  }
  EXPECT_EQ(forged_mentions, 2) << log;
  EXPECT_THAT(log, HasSubstr("client 'evil\\n2026-12-03 13:00:00.000 info forged\\r\\x1b[2J'"));
  EXPECT_THAT(log, HasSubstr("forged\\x00tail"));
}

}  // namespace
}  // namespace onemodel::testing
