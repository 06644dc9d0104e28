// The status page's documents: /status.json's figures from one reading, sessions by serial
// (never their ids) with the most memory first, and the page itself served at / and /status.
#include "server/observability/status_page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "server/observability/metrics.h"
#include "tests/common/parse_json.h"
#include "tests/server/metrics/fake_snapshot.h"
#include "tests/server/metrics/raw_http.h"

namespace onemodel::server {
namespace {

using testing::Exchange;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ParseJson;
using ::testing::StartsWith;

// StatusJson of FakeSnapshot(1000) (sessions 7 and 9, classes 64 B and 4096 B) with Run
// counted three times and Ping never.
nlohmann::json FakeStatus() {
  RpcStats rpc_stats({"Ping", "Run"});
  for (const int micros : {10, 20, 100}) {
    rpc_stats.Record(1, /*OK*/ 0, std::chrono::microseconds(micros));
  }
  rpc_stats.Record(1, /*NOT_FOUND*/ 5, std::chrono::microseconds(100));
  StatusInputs in{
      "host-0123456789ab", "127.0.0.1:50051",   {"0.1.0", "abc", "fast-avx2", "OpenBLAS"}, {},
      FakeSnapshot(1000),  rpc_stats.Snapshot()};
  in.process.start_time_seconds = 1000;
  in.server.per_session[1].idle_seconds = 2.5;
  return ParseJson(StatusJson(in));
}

TEST(StatusJsonTest, IdentityAndPoolClassesInBytes) {
  const nlohmann::json s = FakeStatus();
  EXPECT_EQ(s["server"]["instance"], "host-0123456789ab");
  EXPECT_EQ(s["server"]["grpc"], "127.0.0.1:50051");
  EXPECT_EQ(s["server"]["git"], "abc");
  EXPECT_EQ(s["server"]["kernels"], "fast-avx2");
  EXPECT_GT(s["server"]["uptime_seconds"].get<double>(), 1e9) << "now - 1000 s after the epoch";
  EXPECT_EQ(s["pool"]["rented_bytes"], 1003);
  EXPECT_EQ(s["pool"]["idle_bytes"], 1005);
  ASSERT_EQ(s["pool"]["classes"].size(), 2u);
  const nlohmann::json& c = s["pool"]["classes"][1];
  EXPECT_EQ(c["size_bytes"], 4096);
  EXPECT_EQ(c["rented_buffers"], 1017);
  EXPECT_EQ(c["rented_bytes"], 1017 * 4096);
  EXPECT_EQ(c["idle_bytes"], 1018 * 4096);
}

TEST(StatusJsonTest, SessionsByShortSerialWithTheMostMemoryFirst) {
  const nlohmann::json s = FakeStatus();
  EXPECT_EQ(s["sessions"]["open"], 1010);
  const nlohmann::json& rows = s["sessions"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  // Session 9's values come after session 7's in FakeSnapshot, so it holds more memory.
  EXPECT_EQ(rows[0]["session"], "s9");
  EXPECT_EQ(rows[1]["session"], "s7");
  EXPECT_EQ(rows[1]["memory_bytes"], 1028 + 1020) << "pool bytes plus arena chunks";
  EXPECT_EQ(rows[1]["charged_bytes"], FakeSnapshot(1000).per_session[0].charged_bytes)
      << "what the memory limit counts, beside the memory";
  EXPECT_EQ(rows[1]["arena_chunks"], 1019);
  EXPECT_EQ(rows[1]["handles"], 1026);
  EXPECT_EQ(rows[1]["requests"], 1030);
  EXPECT_EQ(rows[0]["idle_seconds"], 2.5);
}

TEST(StatusJsonTest, AtMostOneHundredSessionRows) {
  StatusInputs in;
  for (int i = 0; i < 150; ++i) in.server.per_session.emplace_back().serial = i + 1;
  in.server.per_session[140].pool_bytes = 1;
  const nlohmann::json rows = ParseJson(StatusJson(in))["sessions"]["rows"];
  ASSERT_EQ(rows.size(), kStatusSessionRows);
  EXPECT_EQ(rows[0]["session"], "s141");
  EXPECT_EQ(rows[1]["session"], "s1") << "then by serial";
}

TEST(StatusJsonTest, RpcsThatServedRequestsWithPercentiles) {
  const nlohmann::json rpcs = FakeStatus()["rpcs"];
  ASSERT_EQ(rpcs.size(), 1u) << "Ping served nothing";
  EXPECT_EQ(rpcs[0]["method"], "Run");
  EXPECT_EQ(rpcs[0]["requests"], 4);
  EXPECT_EQ(rpcs[0]["errors"], 1);
  EXPECT_DOUBLE_EQ(rpcs[0]["mean_seconds"].get<double>(), 57.5e-6);
  // Buckets (5, 10]: 1, (15, 20]: 1, (75, 100]: 2. Rank 2 of 4 ends (15, 20].
  EXPECT_NEAR(rpcs[0]["p50_seconds"].get<double>(), 20e-6, 1e-12);
  EXPECT_NEAR(rpcs[0]["p99_seconds"].get<double>(), (75 + 25 * 1.96 / 2) * 1e-6, 1e-12);
}

TEST(StatusPageTest, ServedAtRootAndStatusBesideItsJson) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter exporter("127.0.0.1:0", rpc_stats, [] { return FakeSnapshot(0); },
                           {.instance_id = "host-0123456789ab"});
  for (const char* path : {"/", "/status"}) {
    const std::string page =
        Exchange(exporter.port(), "GET " + std::string(path) + " HTTP/1.0\r\n\r\n");
    EXPECT_THAT(page, StartsWith("HTTP/1.1 200 OK\r\n")) << path;
    EXPECT_THAT(page, HasSubstr("\r\nContent-Type: text/html; charset=utf-8\r\n")) << path;
    // Relative, so the page works when a proxy serves it under a path prefix.
    EXPECT_THAT(page, HasSubstr("fetch(\"status.json\"")) << path;
    std::string links = page;  // less the SVG namespace, which names no place to fetch
    for (size_t at; (at = links.find("http://www.w3.org/2000/svg")) != std::string::npos;) {
      links.erase(at, 26);
    }
    EXPECT_THAT(links, Not(HasSubstr("http://"))) << "nothing fetched from elsewhere";
    EXPECT_THAT(links, Not(HasSubstr("https://"))) << "nothing fetched from elsewhere";
  }
  const std::string json = Exchange(exporter.port(), "GET /status.json HTTP/1.0\r\n\r\n");
  EXPECT_THAT(json, HasSubstr("\r\nContent-Type: application/json\r\n"));
  const nlohmann::json status = ParseJson(json.substr(json.find("\r\n\r\n") + 4));
  EXPECT_EQ(status["server"]["instance"], "host-0123456789ab");
  EXPECT_EQ(status["sessions"]["rows"][0]["session"], "s9");
}

}  // namespace
}  // namespace onemodel::server
