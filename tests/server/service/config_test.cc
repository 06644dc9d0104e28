#include "server/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

namespace onemodel::server {
namespace {

// Parses `args` (after the program name); returns ParseConfig's result.
int Parse(std::vector<std::string> args, ServerConfig* config) {
  args.insert(args.begin(), "onemodeld");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseConfig(static_cast<int>(argv.size()), argv.data(), config);
}

TEST(Config, DefaultsNeedNothing) {
  ServerConfig c;
  EXPECT_EQ(Parse({}, &c), -1);
  EXPECT_EQ(c.listen, "127.0.0.1:50051");
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9464");
  EXPECT_EQ(c.max_message_bytes, int64_t{64} << 20);
  EXPECT_GE(c.workers, 1) << "0 becomes one per core";
  EXPECT_EQ(c.blas_threads, 1) << "sessions run in parallel; one MatMul stays on its worker";
  EXPECT_EQ(c.slow_request_ms, 1000);
  EXPECT_EQ(c.max_request_warnings_per_second, 100);
  EXPECT_EQ(c.inline_max_bytes, 256 << 10);
  EXPECT_GT(EffectiveMemoryLimit(c), 0);
}

TEST(Config, FlagsTakeSizesWithUnits) {
  ServerConfig c;
  EXPECT_EQ(
      Parse({"--listen", "0.0.0.0:7000", "--max-message-bytes", "16MiB", "--session-memory-max",
             "2GiB", "--pool-max-idle-bytes", "4096", "--idle-timeout", "2.5", "--workers", "3",
             "--log-format", "json", "--blas-threads", "0", "--inline-max-bytes", "1MiB"},
            &c),
      -1);
  EXPECT_EQ(c.listen, "0.0.0.0:7000");
  EXPECT_EQ(c.max_message_bytes, int64_t{16} << 20);
  EXPECT_EQ(c.session_memory_max, int64_t{2} << 30);
  EXPECT_EQ(c.pool_max_idle_bytes, 4096);
  EXPECT_EQ(c.idle_timeout_seconds, 2.5);
  EXPECT_EQ(c.workers, 3);
  EXPECT_EQ(c.blas_threads, 0);
  EXPECT_EQ(c.inline_max_bytes, 1 << 20);
  EXPECT_EQ(c.log_format, "json");
  c.memory_limit_bytes = 12345;
  EXPECT_EQ(EffectiveMemoryLimit(c), 12345);
}

TEST(Config, EnvironmentVariablesSetAndFlagsWin) {
  setenv("ONEMODEL_MAX_SESSIONS", "7", 1);
  setenv("ONEMODEL_METRICS_LISTEN", "off", 1);
  ServerConfig c;
  EXPECT_EQ(Parse({}, &c), -1);
  EXPECT_EQ(c.max_sessions, 7);
  EXPECT_EQ(c.metrics_listen, "") << "off disables metrics";
  ServerConfig d;
  EXPECT_EQ(Parse({"--max-sessions", "9"}, &d), -1);
  EXPECT_EQ(d.max_sessions, 9);
  unsetenv("ONEMODEL_MAX_SESSIONS");
  unsetenv("ONEMODEL_METRICS_LISTEN");
}

// A variable set to the empty string counts as its flag given as '': CLI11 alone skipped it,
// so ONEMODEL_AUTH_TOKEN_FILE= started a server without authentication while
// --auth-token-file '' was refused.
TEST(Config, AnEmptyEnvironmentVariableCountsAsItsFlagGivenEmpty) {
  testing::internal::CaptureStderr();
  for (const char* env : {"ONEMODEL_AUTH_TOKEN_FILE", "ONEMODEL_LISTEN", "ONEMODEL_TLS_CERT",
                          "ONEMODEL_MAX_SESSIONS", "ONEMODEL_LOG_LEVEL"}) {
    setenv(env, "", 1);
    ServerConfig c;
    EXPECT_EQ(Parse({}, &c), 2) << env;
    unsetenv(env);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ONEMODEL_AUTH_TOKEN_FILE is set to the empty string, which counts as "
                     "--auth-token-file ''; unset it for the default"),
            std::string::npos)
      << err;
  setenv("ONEMODEL_METRICS_LISTEN", "", 1);  // '' is a value this flag takes: off
  setenv("ONEMODEL_MAX_SESSIONS", "", 1);
  ServerConfig c;
  EXPECT_EQ(Parse({"--max-sessions", "5"}, &c), -1) << "the command line still wins";
  EXPECT_EQ(c.metrics_listen, "");
  EXPECT_EQ(c.max_sessions, 5);
  ServerConfig d;
  EXPECT_EQ(Parse({"--max-sessions=6"}, &d), -1);
  EXPECT_EQ(d.max_sessions, 6);
  unsetenv("ONEMODEL_METRICS_LISTEN");
  unsetenv("ONEMODEL_MAX_SESSIONS");
}

TEST(Config, BadSettingsExitWithUsageErrorTwo) {
  ServerConfig c;
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"--log-level", "loud"}, &c), 2);
  EXPECT_EQ(Parse({"--max-sessions", "0"}, &c), 2);
  EXPECT_EQ(Parse({"--no-such-flag"}, &c), 2);
  EXPECT_EQ(Parse({"--tls-cert", "/etc/hostname"}, &c), 2) << "a certificate needs its key";
  ServerConfig fresh;
  EXPECT_EQ(Parse({"--session-memory-default", "8GiB", "--session-memory-max", "1GiB"}, &fresh), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--tls-cert and --tls-key must be given together"), std::string::npos);
  EXPECT_NE(err.find("--session-memory-default"), std::string::npos);
}

// `flag` (an integer from `low` to `high`) sets `member` at both ends and is refused, naming
// its range, one past either end and as a fraction.
void ExpectIntegerFlag(const std::string& flag, int64_t low, int64_t high,
                       int64_t ServerConfig::*member) {
  for (const int64_t value : {low, high}) {
    ServerConfig c;
    EXPECT_EQ(Parse({flag, std::to_string(value)}, &c), -1) << flag << " " << value;
    EXPECT_EQ(c.*member, value) << flag;
  }
  testing::internal::CaptureStderr();
  ServerConfig c;
  EXPECT_EQ(Parse({flag, std::to_string(low - 1)}, &c), 2);
  EXPECT_EQ(Parse({flag, std::to_string(high + 1)}, &c), 2);
  EXPECT_EQ(Parse({flag, "0.5"}, &c), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find(flag + ": must be an integer from " +
                                                        std::to_string(low) + " to " +
                                                        std::to_string(high)),
            std::string::npos)
      << flag;
}

TEST(Config, SlowRequestMsIsOffAtZeroAndRefusedOutsideZeroToAnHour) {
  ExpectIntegerFlag("--slow-request-ms", 0, 3600000, &ServerConfig::slow_request_ms);
}

TEST(Config, RequestWarningsPerSecondIsOffAtZeroAndRefusedOutsideZeroToAMillion) {
  ExpectIntegerFlag("--max-request-warnings-per-second", 0, 1000000,
                    &ServerConfig::max_request_warnings_per_second);
}

TEST(Config, StatusPageIsOnOrOffAndMetricsSessionsACount) {
  ServerConfig c;
  EXPECT_EQ(Parse({}, &c), -1);
  EXPECT_TRUE(c.status_page);
  EXPECT_EQ(c.metrics_sessions, 10);
  EXPECT_EQ(Parse({"--status-page", "off", "--metrics-sessions", "0"}, &c), -1);
  EXPECT_FALSE(c.status_page);
  EXPECT_EQ(c.metrics_sessions, 0);
  EXPECT_EQ(Parse({"--status-page", "on"}, &c), -1);
  EXPECT_TRUE(c.status_page);
  ServerConfig d;
  EXPECT_EQ(Parse({"--status-page", "maybe"}, &d), 2);
  EXPECT_EQ(Parse({"--metrics-sessions", "-1"}, &d), 2);
}

TEST(Config, HelpDocumentsEverySettingAndExitsZero) {
  ServerConfig c;
  testing::internal::CaptureStdout();
  EXPECT_EQ(Parse({"--help"}, &c), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  for (const char* flag :
       {"--listen", "--metrics-listen", "--pool-max-idle-bytes", "--max-sessions",
        "--session-memory-default", "--session-memory-max", "--idle-timeout", "--max-message-bytes",
        "--workers", "--blas-threads", "--log-level", "--log-format", "--tls-cert", "--tls-key",
        "--tls-client-ca", "--auth-token-file", "--slow-request-ms", "--inline-max-bytes",
        "ONEMODEL_LISTEN"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace onemodel::server
