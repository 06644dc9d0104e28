// What CallObserver logs when a call ends: a failure and a slow call (over --slow-request-ms)
// each get a warning naming the request, its RPC, session, status and time (in JSON as fields
// of their own, with the time waiting behind the session's earlier requests split out); a fast
// successful call, an open-ended one (WatchStats) and any call with the threshold at 0 get none.
// Over --max-request-warnings-per-second, calls are counted instead, and the next line logged
// says how many were not.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/observability/logging.h"
#include "server/rpc/request_context.h"
#include "tests/common/parse_json.h"

namespace onemodel::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// What `observer` logs, in `format`, for `call` ending with `status`.
std::string Logged(const CallObserver& observer, const FinishedCall& call,
                   const grpc::Status& status, const std::string& format) {
  ConfigureLogging("info", format);
  ::testing::internal::CaptureStderr();
  observer.Finished(call, status);
  return ::testing::internal::GetCapturedStderr();
}

// `text` as JSON lines.
std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  for (size_t begin = 0, end; (end = text.find('\n', begin)) != std::string::npos;
       begin = end + 1) {
    lines.push_back(testing::ParseJson(text.substr(begin, end - begin)));
  }
  return lines;
}

class CallObserverLog : public ::testing::Test {
 protected:
  RpcStats stats_{{"Ping", "Run", "WatchStats"}};
};

TEST_F(CallObserverLog, AFailureIsLoggedWithItsFieldsAndTheTextStaysAsItWas) {
  const CallObserver observer(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(0), 0);
  const FinishedCall call{.method = 1,
                          .start = steady_clock::now() - milliseconds(5),
                          .request_id = "r9",
                          .session_serial = 4};
  const grpc::Status status(grpc::StatusCode::NOT_FOUND,
                            "tensor handle p1.0123456789abcdef not found");
  EXPECT_TRUE(Logged(observer, call, status, "text")
                  .ends_with(" warning request r9 Run session s4 failed: NOT_FOUND: tensor "
                             "handle p1.<tag> not found\n"));
  const std::vector<nlohmann::json> lines = JsonLines(Logged(observer, call, status, "json"));
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json& line = lines[0];
  EXPECT_EQ(line["level"], "warning");
  EXPECT_EQ(line["msg"], "failed: tensor handle p1.<tag> not found");
  EXPECT_EQ(line["request_id"], "r9");
  EXPECT_EQ(line["rpc"], "Run");
  EXPECT_EQ(line["session"], "s4");
  EXPECT_EQ(line["status"], "NOT_FOUND");
  EXPECT_GE(line["duration_ms"].get<double>(), 5);
  EXPECT_FALSE(line.contains("queued_ms")) << "the call did not wait for its session";
}

TEST_F(CallObserverLog, ACallThatReachedNoSessionNamesNone) {
  const CallObserver observer(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(0), 0);
  const FinishedCall call{.method = 0, .start = steady_clock::now(), .request_id = "r2"};
  const grpc::Status status(grpc::StatusCode::UNAVAILABLE, "shutting down");
  EXPECT_TRUE(Logged(observer, call, status, "text")
                  .ends_with(" warning request r2 Ping failed: UNAVAILABLE: shutting down\n"));
  const std::vector<nlohmann::json> lines = JsonLines(Logged(observer, call, status, "json"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].contains("session"));
}

TEST_F(CallObserverLog, ASlowCallIsLoggedWithItsTimeSplit) {
  const CallObserver observer(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(60'000), 0);
  const steady_clock::time_point start = steady_clock::now() - milliseconds(61'000);
  const FinishedCall call{.method = 1,
                          .start = start,
                          .work_start = start + milliseconds(20'000),
                          .request_id = "r3",
                          .session_serial = 2};
  const std::string text = Logged(observer, call, grpc::Status::OK, "text");
  EXPECT_NE(text.find(" warning request r3 Run session s2 slow: OK after 610"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ms (queued 20000.0 ms, ran 410"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("ms), over --slow-request-ms 60000\n")) << text;

  const std::vector<nlohmann::json> lines =
      JsonLines(Logged(observer, call, grpc::Status::OK, "json"));
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json& line = lines[0];
  EXPECT_EQ(line["level"], "warning");
  EXPECT_EQ(line["msg"], "slow request: over --slow-request-ms 60000");
  EXPECT_EQ(line["request_id"], "r3");
  EXPECT_EQ(line["rpc"], "Run");
  EXPECT_EQ(line["session"], "s2");
  EXPECT_EQ(line["status"], "OK");
  const double duration = line["duration_ms"].get<double>();
  EXPECT_GE(duration, 61'000);
  EXPECT_EQ(line["queued_ms"], 20'000);
  EXPECT_NEAR(line["run_ms"].get<double>(), duration - 20'000, 0.002);
}

TEST_F(CallObserverLog, ASlowFailureGetsBothLines) {
  const CallObserver observer(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(1), 0);
  const FinishedCall call{.method = 0, .start = steady_clock::now() - milliseconds(50)};
  const std::vector<nlohmann::json> lines = JsonLines(
      Logged(observer, call, grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"), "json"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["msg"], "failed: shutting down");
  EXPECT_EQ(lines[1]["msg"], "slow request: over --slow-request-ms 1");
  EXPECT_EQ(lines[1]["status"], "UNAVAILABLE");
  EXPECT_FALSE(lines[1].contains("session")) << "Ping names no session";
}

TEST_F(CallObserverLog, FastOpenEndedAndUnwatchedCallsAreNotLogged) {
  const CallObserver slow_after_a_minute(stats_, {"Ping", "Run", "WatchStats"},
                                         milliseconds(60'000), 0);
  const CallObserver off(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(0), 0);
  const steady_clock::time_point hour_ago = steady_clock::now() - std::chrono::hours(1);
  EXPECT_EQ(Logged(slow_after_a_minute, {.method = 1, .start = steady_clock::now()},
                   grpc::Status::OK, "json"),
            "");
  EXPECT_EQ(Logged(slow_after_a_minute, {.method = 2, .start = hour_ago, .open_ended = true},
                   grpc::Status::OK, "json"),
            "");
  EXPECT_EQ(Logged(off, {.method = 1, .start = hour_ago}, grpc::Status::OK, "json"), "");
}

// A client failing calls on purpose gets its first `per_second` logged, then none until the
// budget refills; the first line after that says how many were held back.
TEST_F(CallObserverLog, OverTheRateFailuresAreCountedAndTheNextLineSaysHowMany) {
  const CallObserver observer(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(0), 20);
  const FinishedCall call{.method = 1, .start = steady_clock::now(), .session_serial = 3};
  const grpc::Status stale(grpc::StatusCode::FAILED_PRECONDITION, "tensor 'a1.<tag>' is stale");
  ConfigureLogging("info", "json");
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 1000; ++i) observer.Finished(call, stale);
  std::vector<nlohmann::json> lines = JsonLines(::testing::internal::GetCapturedStderr());
  // 20 at once; a few more if the loop took long enough to earn them (1 per 50 ms).
  ASSERT_GE(lines.size(), 20u);
  ASSERT_LE(lines.size(), 25u);
  for (const nlohmann::json& line : lines) EXPECT_EQ(line["status"], "FAILED_PRECONDITION");
  const size_t logged = lines.size();
  std::this_thread::sleep_for(milliseconds(120));  // earns 2
  lines = JsonLines(Logged(observer, call, stale, "json"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["level"], "warning");
  EXPECT_EQ(lines[0]["msg"], std::to_string(1000 - logged) +
                                 " request warning(s) not logged: over "
                                 "--max-request-warnings-per-second 20");
  EXPECT_FALSE(lines[0].contains("session"));
  EXPECT_EQ(lines[1]["msg"], "failed: tensor 'a1.<tag>' is stale");
  EXPECT_EQ(stats_.Snapshot()[1].errors, 1001) << "the statistics count every one";
}

// 0 turns the limit off: every failure is logged.
TEST_F(CallObserverLog, WithoutALimitEveryFailureIsLogged) {
  const CallObserver observer(stats_, {"Ping", "Run", "WatchStats"}, milliseconds(0), 0);
  const FinishedCall call{.method = 1, .start = steady_clock::now()};
  ConfigureLogging("info", "json");
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 500; ++i) {
    observer.Finished(call, grpc::Status(grpc::StatusCode::NOT_FOUND, "gone"));
  }
  EXPECT_EQ(JsonLines(::testing::internal::GetCapturedStderr()).size(), 500u);
}

}  // namespace
}  // namespace onemodel::server
