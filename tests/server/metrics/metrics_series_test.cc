// The series /metrics adds beyond the server's own statistics: Prometheus' process metrics,
// onemodel_build_info, and per-session series bounded to the top --metrics-sessions sessions
// by memory plus session="other".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "server/observability/metrics.h"
#include "tests/server/metrics/raw_http.h"

namespace onemodel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Scrape;

// Every sample of a scrape: series (name and labels) -> value.
std::map<std::string, double> Samples(const std::string& scrape) {
  std::map<std::string, double> out;
  std::istringstream lines(scrape.substr(scrape.find("\r\n\r\n") + 4));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

// Samples whose series starts with one of the per-session families.
int SessionSeriesCount(const std::map<std::string, double>& samples) {
  int n = 0;
  for (const auto& [series, value] : samples) {
    if (series.starts_with("onemodel_session_") || series.starts_with("onemodel_arena_")) ++n;
  }
  return n;
}

// Per-session families: 7 arena and 5 session ones.
constexpr int kSessionFamilies = 12;

// `count` sessions, serial i + 1 holding (i + 1) KiB of pool buffers and one arena chunk of 1 MiB
// every tenth session, each with one handle and 2 requests.
ServerSnapshot Sessions(int count) {
  ServerSnapshot s;
  for (int i = 0; i < count; ++i) {
    SessionSnapshot& session = s.per_session.emplace_back();
    session.serial = i + 1;
    session.kernel_variant = "fast-avx2";
    session.pool_bytes = int64_t{i + 1} << 10;
    session.arena.chunks = i % 10 == 0 ? 1 : 0;
    session.arena.reserved_bytes = session.arena.chunks << 20;
    session.arena.peak_used_bytes = i;
    session.handles = 1;
    session.requests = 2;
    session.memory_limit_bytes = 1 << 30;
  }
  return s;
}

TEST(ProcessMetricsTest, PresentAndPlausible) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter exporter("127.0.0.1:0", rpc_stats, [] { return ServerSnapshot{}; });
  const std::map<std::string, double> m = Samples(Scrape(exporter.port()));
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(m.at("process_resident_memory_bytes"), 1 << 20);
  EXPECT_LT(m.at("process_resident_memory_bytes"), 64.0 * (1 << 30));
  EXPECT_GE(m.at("process_cpu_seconds_total"), 0);
  EXPECT_LT(m.at("process_cpu_seconds_total"), 3600);
  EXPECT_GE(m.at("process_open_fds"), 4) << "stdio and the exporter's socket and pipe";
  EXPECT_GE(m.at("process_max_fds"), m.at("process_open_fds"));
  EXPECT_GE(m.at("process_threads"), 3) << "this one, the accept thread, libmicrohttpd's";
  EXPECT_LE(m.at("process_start_time_seconds"), now + 1);
  EXPECT_GT(m.at("process_start_time_seconds"), now - 3600) << "this test started recently";
}

TEST(ProcessMetricsTest, BuildInfoNamesVersionCommitKernelsAndBlas) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter exporter("127.0.0.1:0", rpc_stats, [] { return ServerSnapshot{}; });
  const std::string text = Scrape(exporter.port());
  EXPECT_THAT(text, HasSubstr("\nonemodel_build_info{version=\"0.1.0\",git=\""));
  EXPECT_THAT(text, HasSubstr("\",kernels=\""));
  EXPECT_THAT(text, HasSubstr("\",blas=\"OpenBLAS "));
  for (const auto& [series, value] : Samples(text)) {
    if (series.starts_with("onemodel_build_info")) {
      EXPECT_EQ(value, 1);
      EXPECT_THAT(series, Not(HasSubstr("git=\"\""))) << "a commit, or unknown";
    }
  }
}

TEST(SessionSeriesTest, FiveHundredSessionsGiveTheTopTenAndOtherOnly) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter exporter("127.0.0.1:0", rpc_stats, [] { return Sessions(500); });
  const std::map<std::string, double> m = Samples(Scrape(exporter.port()));
  EXPECT_EQ(SessionSeriesCount(m), (10 + 1) * kSessionFamilies);
  // The most memory: the ten sessions with an arena chunk and the most pool bytes
  // (serials 491, 481, ..., 401), not the newest ones.
  for (int serial = 401; serial <= 491; serial += 10) {
    EXPECT_TRUE(m.contains("onemodel_session_pool_bytes{session=\"" + std::to_string(serial) +
                           "\",kernels=\"fast-avx2\"}"))
        << serial;
  }
  EXPECT_FALSE(m.contains("onemodel_session_pool_bytes{session=\"500\",kernels=\"fast-avx2\"}"));
  // "other" sums the other 490 sessions, so sums over sessions stay totals.
  EXPECT_EQ(m.at("onemodel_session_handles{session=\"other\"}"), 490);
  EXPECT_EQ(m.at("onemodel_session_requests_total{session=\"other\"}"), 980);
  EXPECT_EQ(m.at("onemodel_arena_chunks{session=\"other\"}"), 40);
  double pool_bytes = 0;
  for (const auto& [series, value] : m) {
    if (series.starts_with("onemodel_session_pool_bytes{")) pool_bytes += value;
  }
  EXPECT_EQ(pool_bytes, 500.0 * 501 / 2 * 1024);
  // ... except the peak, the highest of theirs (serial 500's, i = 499).
  EXPECT_EQ(m.at("onemodel_arena_peak_used_bytes{session=\"other\"}"), 499);
}

TEST(SessionSeriesTest, TheLimitIsAFlagAndZeroLeavesOnlyOther) {
  RpcStats rpc_stats({"Ping"});
  for (const int limit : {0, 3, 600}) {
    MetricsExporter exporter("127.0.0.1:0", rpc_stats, [] { return Sessions(500); },
                             {.session_series = limit});
    const std::map<std::string, double> m = Samples(Scrape(exporter.port()));
    const int shown = std::min(limit, 500);
    EXPECT_EQ(SessionSeriesCount(m), (shown + 1) * kSessionFamilies) << limit;
    EXPECT_EQ(m.at("onemodel_session_handles{session=\"other\"}"), 500 - shown) << limit;
  }
}

TEST(SessionSeriesTest, TiesGoToTheLowerSerial) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter exporter("127.0.0.1:0", rpc_stats,
                           [] {
                             ServerSnapshot s = Sessions(3);
                             for (SessionSnapshot& session : s.per_session) {
                               session.pool_bytes = 4096;
                               session.arena = {};
                             }
                             return s;
                           },
                           {.session_series = 2});
  const std::map<std::string, double> m = Samples(Scrape(exporter.port()));
  EXPECT_TRUE(m.contains("onemodel_session_handles{session=\"1\",kernels=\"fast-avx2\"}"));
  EXPECT_TRUE(m.contains("onemodel_session_handles{session=\"2\",kernels=\"fast-avx2\"}"));
  EXPECT_EQ(m.at("onemodel_session_handles{session=\"other\"}"), 1);
}

}  // namespace
}  // namespace onemodel::server
