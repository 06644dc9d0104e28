// The onemodel-load program against a real onemodeld: a few seconds of 4 sessions with the
// JSON report checked field by field, JSON on stdout, and the exit codes of a failed --check,
// a usage error and an unreachable server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/client/command.h"
#include "tests/client/server_test.h"
#include "tests/common/parse_json.h"

namespace onemodel::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// The number `key` of the object `value` (a missing key fails the test with json's message).
double Number(const json& value, const std::string& key) { return value.at(key).get<double>(); }

// Runs onemodel-load against `address` with `args`.
CommandResult Load(const std::string& address, std::vector<std::string> args) {
  args.insert(args.begin(), {ONEMODEL_LOAD_PATH, "--server", address});
  return RunCommand(args);
}

class LoadCliTest : public ServerTest {};

TEST_F(LoadCliTest, FourSessionsForTwoSecondsReportEveryField) {
  const std::string json_path =
      (std::filesystem::temp_directory_path() / ("load-" + std::to_string(getpid()) + ".json"))
          .string();
  const CommandResult result =
      Load(server().grpc_address(), {"--sessions", "4", "--duration", "2", "--warmup", "1",
                                     "--width", "32", "--check", "--json", json_path});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("onemodel-load: 4 sessions, step mlp"));
  EXPECT_THAT(result.out, HasSubstr("check: passed"));
  EXPECT_EQ(result.err, "");  // no progress bar: stderr is not a terminal
  std::ifstream file(json_path);
  std::stringstream text;
  text << file.rdbuf();
  std::filesystem::remove(json_path);
  const json root = ParseJson(text.str());

  EXPECT_EQ(Number(root.at("config"), "sessions"), 4);
  EXPECT_EQ(Number(root.at("config"), "width"), 32);
  EXPECT_EQ(root.at("config").at("step").get<std::string>(), "mlp");
  EXPECT_GE(Number(root, "seconds"), 2.0);
  EXPECT_GE(Number(root.at("warmup"), "seconds"), 1.0);
  EXPECT_EQ(Number(root, "schema_version"), 3);
  const double requests = Number(root, "requests");
  EXPECT_GT(requests, 0);
  // The header counts the measured requests, not the warm-up's.
  EXPECT_THAT(result.out, HasSubstr(" s (" + std::to_string(static_cast<int64_t>(requests)) +
                                    " requests, 0 errors) after a "));
  EXPECT_EQ(Number(root.at("rpc_latency_us").at("Run"), "count"), requests / 2);
  EXPECT_EQ(Number(root.at("rpc_latency_us").at("Backward"), "count"), requests / 2);
  EXPECT_EQ(requests, 2 * Number(root, "steps"));
  EXPECT_NEAR(Number(root, "requests_per_s"), requests / Number(root, "seconds"), 1e-3 * requests);
  const json& latency = root.at("latency_us");
  EXPECT_GT(Number(latency, "p50"), 0);
  EXPECT_LE(Number(latency, "p50"), Number(latency, "p90"));
  EXPECT_LE(Number(latency, "p90"), Number(latency, "p99"));
  EXPECT_LE(Number(latency, "p99"), Number(latency, "p99_9"));
  EXPECT_LE(Number(latency, "p99_9"), Number(latency, "max"));
  EXPECT_EQ(Number(root.at("errors"), "total"), 0);

  const json& server_stats = root.at("server");
  for (const char* moment : {"before", "after_warmup", "end", "after_close"}) {
    EXPECT_TRUE(server_stats.at(moment).at("ok").get<bool>()) << moment;
  }
  const json& end = server_stats.at("end");
  EXPECT_EQ(Number(end.at("pool"), "sessions_open"), 4);
  ASSERT_EQ(end.at("sessions").size(), 4);
  for (const json& session : end.at("sessions")) {
    EXPECT_GT(Number(session, "arena_chunks"), 0);
    EXPECT_GT(Number(session, "arena_resets"), 0);
    EXPECT_EQ(Number(session, "pool_buffers"), 4);  // x, w1, b1, w2
  }
  EXPECT_EQ(Number(server_stats.at("after_close").at("pool"), "sessions_open"), 0);
  const json& flatness = root.at("flatness");
  EXPECT_TRUE(flatness.at("known").get<bool>());
  EXPECT_EQ(Number(flatness, "rented_bytes_delta"), 0);
  EXPECT_EQ(Number(flatness, "arena_growth_events"), 0);
  EXPECT_GT(Number(flatness, "arena_allocations"), 0);
  EXPECT_TRUE(root.at("check").at("passed").get<bool>());
}

TEST_F(LoadCliTest, JsonOnStdoutMovesTheTableToStderr) {
  const CommandResult result = Load(
      server().grpc_address(),
      {"--step", "chain", "--sessions", "2", "--requests", "20", "--warmup", "0.2", "--json", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json root = ParseJson(result.out);
  EXPECT_EQ(Number(root, "requests"), 20);
  EXPECT_EQ(Number(root.at("config"), "requests_per_step"), 1);
  EXPECT_THAT(result.err, HasSubstr("step chain (size 4096, 8 operations"));
}

TEST_F(LoadCliTest, ForcedProgressDrawsTheBarOnStderr) {
  const CommandResult result = Load(
      server().grpc_address(),
      {"--step", "chain", "--sessions", "1", "--duration", "0.5", "--warmup", "0.5", "--progress"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("warm-up ["));
  EXPECT_THAT(result.err, HasSubstr("load    [####################] 100%"));
}

TEST_F(LoadCliTest, ALowRateRunsTheWholeDurationAndReportsItsRate) {
  // One chain step (1 request) due in the second: the run still lasts the second.
  const CommandResult result =
      Load(server().grpc_address(), {"--sessions", "1", "--step", "chain", "--rate", "0.001",
                                     "--duration", "1", "--warmup", "0", "--json", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json root = ParseJson(result.out);
  EXPECT_EQ(Number(root, "requests"), 1);
  EXPECT_GE(Number(root, "seconds"), 1.0);
  EXPECT_LE(Number(root, "requests_per_s"), 1.0);
  const json& rate = root.at("rates").at(0);
  EXPECT_EQ(Number(rate, "due_steps"), 1);
  EXPECT_GE(Number(rate, "seconds"), 1.0);
  EXPECT_THAT(result.err, HasSubstr("open loop at 0.001 requests/s"));
}

TEST(LoadCliExitTest, UnwritableOutputsAreRefusedBeforeTheRun) {
  for (const char* flag : {"--json", "--csv"}) {
    // The server is unreachable: had the run started, it would exit 3 naming the session.
    const CommandResult result =
        Load("127.0.0.1:1", {"--duration", "1", flag, "/nonexistent-dir/out.txt"});
    EXPECT_EQ(result.exit_code, 2) << flag;
    EXPECT_THAT(result.err, HasSubstr("cannot write the " + std::string(flag) +
                                      " file '/nonexistent-dir/out.txt'"));
    EXPECT_THAT(result.err, Not(HasSubstr("setting up session")));
  }
}

TEST(LoadCliExitTest, FailedRequestsFailTheCheckWithExitOne) {
  // 8 handles: the 4 uploaded tensors fit, the forward's 6 outputs do not.
  ServerProcess server({"--max-handles", "8"});
  const CommandResult result =
      Load(server.grpc_address(),
           {"--sessions", "2", "--duration", "0.5", "--warmup", "0.2", "--check", "--json", "-"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const json root = ParseJson(result.out);
  EXPECT_GT(Number(root.at("errors").at("by_code"), "RESOURCE_EXHAUSTED"), 0);
  EXPECT_EQ(Number(root, "steps"), 0);
  EXPECT_FALSE(root.at("check").at("passed").get<bool>());
  EXPECT_THAT(result.err, HasSubstr("check: FAILED\n  - "));
  EXPECT_THAT(result.err, HasSubstr("requests failed (RESOURCE_EXHAUSTED"));
}

TEST(LoadCliExitTest, WithoutCheckFailedRequestsStillExitZero) {
  ServerProcess server({"--max-handles", "8"});
  const CommandResult result =
      Load(server.grpc_address(), {"--sessions", "1", "--duration", "0.3", "--warmup", "0.1"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("RESOURCE_EXHAUSTED"));
}

TEST(LoadCliExitTest, UsageErrorExitsTwoWithTheReason) {
  const CommandResult result = Load("127.0.0.1:1", {"--requests", "5", "--duration", "5"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--requests and --duration both end the run"));
}

TEST(LoadCliExitTest, UnreachableServerExitsThreeNamingTheSession) {
  const CommandResult result = Load("127.0.0.1:1", {"--sessions", "3", "--duration", "1"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_THAT(
      result.err,
      HasSubstr("onemodel-load: setting up session 1 of 3: CreateSession failed: UNAVAILABLE"));
}

}  // namespace
}  // namespace onemodel::testing
