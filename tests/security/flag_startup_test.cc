// onemodeld itself refuses the numeric flag values of issue 19 before it listens: exit code 2
// and a message naming the flag and its range (the whole table is
// tests/server/service/flag_ranges_test.cc, on ParseConfig).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/client/command.h"

namespace onemodel::testing {
namespace {

using ::testing::HasSubstr;

TEST(FlagStartupTest, OutOfRangeNumbersExitTwoNamingTheFlag) {
  const std::vector<std::vector<std::string>> cases = {
      {"--idle-timeout", "nan"},         {"--idle-timeout", "1e300", "--max-idle-timeout", "1e300"},
      {"--max-idle-timeout", "1e17"},    {"--session-memory-default", "-5"},
      {"--session-memory-default", "0"}, {"--memory-limit", "-1"},
      {"--pool-max-idle-bytes", "-1"},   {"--listen", "127.0.0.1:99999"},
  };
  for (const std::vector<std::string>& flags : cases) {
    // `timeout` turns a server that starts after all into a failure rather than a hang.
    std::vector<std::string> args = {
        "/usr/bin/timeout", "20", ONEMODELD_PATH, "--listen", "127.0.0.1:0",
        "--metrics-listen", "off"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult result = RunCommand(args);
    EXPECT_EQ(result.exit_code, 2) << flags[0] << " " << flags[1] << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr(flags[0] + ": must be")) << flags[1];
  }
}

}  // namespace
}  // namespace onemodel::testing
