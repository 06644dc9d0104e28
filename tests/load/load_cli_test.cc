// The onemodel-load program against a real onemodeld: a few seconds of 4 sessions with the
// JSON report checked field by field, JSON on stdout, and the exit codes of a failed --check,
// a usage error and an unreachable server.
#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/client/command.h"
#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using google::protobuf::Value;
using ::testing::HasSubstr;

// `text` parsed as JSON; fails the test when it is not.
Value ParseJson(const std::string& text) {
  Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &value);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << text;
  return value;
}

// The member `key` of the object `value` (fails the test when missing).
const Value& At(const Value& value, const std::string& key) {
  const auto& fields = value.struct_value().fields();
  EXPECT_TRUE(fields.contains(key)) << "no '" << key << "'";
  static const Value kMissing;
  return fields.contains(key) ? fields.at(key) : kMissing;
}

double Number(const Value& value, const std::string& key) { return At(value, key).number_value(); }

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
  const Value root = ParseJson(text.str());

  EXPECT_EQ(Number(At(root, "config"), "sessions"), 4);
  EXPECT_EQ(Number(At(root, "config"), "width"), 32);
  EXPECT_EQ(At(At(root, "config"), "step").string_value(), "mlp");
  EXPECT_GE(Number(root, "seconds"), 2.0);
  EXPECT_GE(Number(At(root, "warmup"), "seconds"), 1.0);
  const double requests = Number(root, "requests");
  EXPECT_GT(requests, 0);
  EXPECT_EQ(requests, 2 * Number(root, "steps"));
  EXPECT_NEAR(Number(root, "requests_per_s"), requests / Number(root, "seconds"), 1e-3 * requests);
  const Value& latency = At(root, "latency_us");
  EXPECT_GT(Number(latency, "p50"), 0);
  EXPECT_LE(Number(latency, "p50"), Number(latency, "p90"));
  EXPECT_LE(Number(latency, "p90"), Number(latency, "p99"));
  EXPECT_LE(Number(latency, "p99"), Number(latency, "p99_9"));
  EXPECT_LE(Number(latency, "p99_9"), Number(latency, "max"));
  EXPECT_EQ(Number(At(root, "errors"), "total"), 0);

  const Value& server_stats = At(root, "server");
  for (const char* moment : {"before", "after_warmup", "end", "after_close"}) {
    EXPECT_TRUE(At(At(server_stats, moment), "ok").bool_value()) << moment;
  }
  const Value& end = At(server_stats, "end");
  EXPECT_EQ(Number(At(end, "pool"), "sessions_open"), 4);
  ASSERT_EQ(At(end, "sessions").list_value().values_size(), 4);
  for (const Value& session : At(end, "sessions").list_value().values()) {
    EXPECT_GT(Number(session, "arena_chunks"), 0);
    EXPECT_GT(Number(session, "arena_resets"), 0);
    EXPECT_EQ(Number(session, "pool_buffers"), 4);  // x, w1, b1, w2
  }
  EXPECT_EQ(Number(At(At(server_stats, "after_close"), "pool"), "sessions_open"), 0);
  const Value& flatness = At(root, "flatness");
  EXPECT_TRUE(At(flatness, "known").bool_value());
  EXPECT_EQ(Number(flatness, "rented_bytes_delta"), 0);
  EXPECT_EQ(Number(flatness, "arena_growth_events"), 0);
  EXPECT_GT(Number(flatness, "arena_allocations"), 0);
  EXPECT_TRUE(At(At(root, "check"), "passed").bool_value());
}

TEST_F(LoadCliTest, JsonOnStdoutMovesTheTableToStderr) {
  const CommandResult result = Load(
      server().grpc_address(),
      {"--step", "chain", "--sessions", "2", "--requests", "20", "--warmup", "0.2", "--json", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Value root = ParseJson(result.out);
  EXPECT_EQ(Number(root, "requests"), 20);
  EXPECT_EQ(Number(At(root, "config"), "requests_per_step"), 1);
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

TEST(LoadCliExitTest, FailedRequestsFailTheCheckWithExitOne) {
  // 8 handles: the 4 uploaded tensors fit, the forward's 6 outputs do not.
  ServerProcess server({"--max-handles", "8"});
  const CommandResult result =
      Load(server.grpc_address(),
           {"--sessions", "2", "--duration", "0.5", "--warmup", "0.2", "--check", "--json", "-"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const Value root = ParseJson(result.out);
  EXPECT_GT(Number(At(At(root, "errors"), "by_code"), "RESOURCE_EXHAUSTED"), 0);
  EXPECT_EQ(Number(root, "steps"), 0);
  EXPECT_FALSE(At(At(root, "check"), "passed").bool_value());
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
