// The request lines of a real onemodeld's JSON log: a request slower than --slow-request-ms is
// logged (warning) with its request id, RPC, session, status, duration and time split as fields
// of their own, and requests the client saw finish under the threshold are not; client text in
// the log (names with control characters, quotes, backslashes, bidirectional overrides) leaves
// every line one valid JSON object.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "tests/client/server_test.h"
#include "tests/common/parse_json.h"
#include "tests/security/logged_server.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using Clock = std::chrono::steady_clock;

constexpr int kSlowRequestMs = 300;

// Every line of `log`, parsed (a line that is not JSON fails the test).
std::vector<nlohmann::json> JsonLines(const std::string& log) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(ParseJson(line));
  return lines;
}

// The lines of `lines` whose msg starts with `prefix`.
std::vector<nlohmann::json> WithMessage(const std::vector<nlohmann::json>& lines,
                                        const std::string& prefix) {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& line : lines) {
    if (line.value("msg", "").starts_with(prefix)) found.push_back(line);
  }
  return found;
}

// How long `call` took, seen from the client (the server's own time is at most this).
template <typename Call>
std::chrono::milliseconds Timed(const Call& call) {
  const Clock::time_point start = Clock::now();
  call();
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

TEST(RequestLogTest, ASlowRequestIsLoggedWithItsFieldsAndFastOnesAreNot) {
  LoggedServer logged({"--slow-request-ms", std::to_string(kSlowRequestMs)}, "json");
  std::vector<std::string> fast_rpcs;  // requests the client saw end under the threshold
  {
    client::Client client(logged.server().grpc_address());
    client::Session session = client.CreateSession({.kernels = v1::KERNEL_CHOICE_FAST});
    client::TensorHandle x;
    if (Timed([&] {
          x = session.Put<float>(std::vector<float>{1}, {1, 1});
        }).count() < kSlowRequestMs) {
      fast_rpcs.push_back("PutTensor");
    }
    if (Timed([&] { session.KeepAlive(); }).count() < kSlowRequestMs) {
      fast_rpcs.push_back("KeepAlive");
    }
    // (128 x 2^23) x (2^23 x 128) through stride-0 views of x: minutes of work on no memory
    // in any build, stopped by its deadline after 1 s (far over the threshold in any build).
    RunBuilder run;
    run.Op("MatMul", {run.Op("Expand", {x}, {{"shape", Ints{128, 1 << 23}}}),
                      run.Op("Expand", {x}, {{"shape", Ints{1 << 23, 128}}})});
    v1::RunRequest request = run.request();
    request.set_session_id(session.id());
    grpc::ClientContext context;
    context.AddMetadata("x-request-id", "slow-matmul");
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    EXPECT_EQ(RawRun(client, request, context).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    session.Close();
  }
  const std::vector<nlohmann::json> lines = JsonLines(logged.StopAndReadLog());
  std::vector<nlohmann::json> matmul;
  for (const nlohmann::json& line : WithMessage(lines, "slow request")) {
    for (const std::string& rpc : fast_rpcs) EXPECT_NE(line["rpc"], rpc) << line;
    if (line["request_id"] == "slow-matmul") matmul.push_back(line);
  }
  EXPECT_FALSE(fast_rpcs.empty()) << "the machine was too busy to see a fast request";
  ASSERT_EQ(matmul.size(), 1u);
  const nlohmann::json& line = matmul[0];
  EXPECT_EQ(line["level"], "warning");
  EXPECT_EQ(line["msg"], "slow request: over --slow-request-ms " + std::to_string(kSlowRequestMs));
  EXPECT_EQ(line["rpc"], "Run");
  EXPECT_EQ(line["session"], "s1");
  // Stopped by its deadline: the server sees the deadline passed, or gRPC's cancellation for
  // it first.
  EXPECT_TRUE(line["status"] == "DEADLINE_EXCEEDED" || line["status"] == "CANCELLED") << line;
  const double duration = line["duration_ms"].get<double>();
  EXPECT_GT(duration, kSlowRequestMs);
  EXPECT_NEAR(line["queued_ms"].get<double>() + line["run_ms"].get<double>(), duration, 0.002);
  // Its failure has a line of its own.
  const std::vector<nlohmann::json> failed = WithMessage(lines, "failed: ");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["request_id"], "slow-matmul");
}

TEST(RequestLogTest, ClientTextLeavesEveryJsonLineValidAndTheFieldsOutOfMsg) {
  LoggedServer logged({}, "json");
  const std::string name =
      "evil\"}\n{\"level\":\"error\"\\ \x1b[2J \u202e nul" + std::string(1, '\0');
  {
    client::Client client(logged.server().grpc_address());
    client::Session session = client.CreateSession({.client_name = name});
    const client::TensorHandle x = session.Put<float>(std::vector<float>{1}, {1});
    RunBuilder run;
    run.Op(name, {x});
    EXPECT_TRUE(FailsWith([&] { session.Run(run); }, grpc::StatusCode::INVALID_ARGUMENT));
    session.Close();
  }
  const std::vector<nlohmann::json> lines = JsonLines(logged.StopAndReadLog());
  // The client's text as Printable() shows it: escaped controls, the quotes and backslash kept.
  const std::string shown = "evil\"}\\n{\"level\":\"error\"\\ \\x1b[2J \\u202e nul\\x00";

  const std::vector<nlohmann::json> created = WithMessage(lines, "session created");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_NE(created[0]["msg"].get<std::string>().find("client '" + shown + "'"), std::string::npos)
      << created[0];
  EXPECT_EQ(created[0]["rpc"], "CreateSession");
  EXPECT_EQ(created[0]["session"], "s1");
  EXPECT_TRUE(created[0].contains("request_id"));

  const std::vector<nlohmann::json> failed = WithMessage(lines, "failed: ");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0]["msg"].get<std::string>().find(shown), std::string::npos) << failed[0];
  EXPECT_EQ(failed[0]["level"], "warning");
  EXPECT_EQ(failed[0]["rpc"], "Run");
  EXPECT_EQ(failed[0]["session"], "s1");
  EXPECT_EQ(failed[0]["status"], "INVALID_ARGUMENT");
  EXPECT_TRUE(failed[0]["duration_ms"].is_number());
  EXPECT_EQ(failed[0]["msg"].get<std::string>().find("request "), std::string::npos)
      << "the request is named by fields, not in msg";

  const std::vector<nlohmann::json> closed = WithMessage(lines, "session closed");
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0]["session"], "s1");
  for (const nlohmann::json& line : lines) EXPECT_NE(line["level"], "error") << line;
}

}  // namespace
}  // namespace onemodel::testing
