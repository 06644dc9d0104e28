#include "server/observability/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/server/metrics/fake_snapshot.h"
#include "tests/server/metrics/raw_http.h"

namespace onemodel::server {
namespace {

using ::testing::AnyOf;
using ::testing::Eq;
using testing::Exchange;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Scrape;
using ::testing::StartsWith;

// Whether `text` has `line` as one whole line.
bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// An exporter on a free port whose snapshots are FakeSnapshot(1000), FakeSnapshot(2000), ...
class MetricsExporterTest : public ::testing::Test {
 protected:
  RpcStats rpc_stats_{{"Ping", "Run"}};
  std::atomic<int> snapshots_{0};
  MetricsExporter exporter_{"127.0.0.1:0", rpc_stats_,
                            [this] { return FakeSnapshot(1000 * ++snapshots_); }};
};

TEST_F(MetricsExporterTest, EveryFamilyHasHelpAndType) {
  const std::string text = Scrape(exporter_.port());
  ASSERT_THAT(text, StartsWith("HTTP/1.1 200"));
  const std::vector<std::pair<std::string, std::string>> families = {
      {"process_resident_memory_bytes", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_open_fds", "gauge"},
      {"process_max_fds", "gauge"},
      {"process_threads", "gauge"},
      {"process_start_time_seconds", "gauge"},
      {"onemodel_build_info", "gauge"},
      {"onemodel_pool_rented_bytes", "gauge"},
      {"onemodel_pool_rented_buffers", "gauge"},
      {"onemodel_pool_requested_bytes", "gauge"},
      {"onemodel_pool_idle_bytes", "gauge"},
      {"onemodel_pool_peak_rented_bytes", "gauge"},
      {"onemodel_pool_max_idle_bytes", "gauge"},
      {"onemodel_pool_hits_total", "counter"},
      {"onemodel_pool_misses_total", "counter"},
      {"onemodel_pool_frees_over_cap_total", "counter"},
      {"onemodel_pool_class_rented_buffers", "gauge"},
      {"onemodel_pool_class_idle_buffers", "gauge"},
      {"onemodel_sessions_open", "gauge"},
      {"onemodel_sessions_created_total", "counter"},
      {"onemodel_sessions_closed_total", "counter"},
      {"onemodel_sessions_expired_total", "counter"},
      {"onemodel_leaked_buffers_reclaimed_total", "counter"},
      {"onemodel_buffers_released_by_close_total", "counter"},
      {"onemodel_arena_chunks", "gauge"},
      {"onemodel_arena_reserved_bytes", "gauge"},
      {"onemodel_arena_used_bytes", "gauge"},
      {"onemodel_arena_peak_used_bytes", "gauge"},
      {"onemodel_arena_resets_total", "counter"},
      {"onemodel_arena_allocations_total", "counter"},
      {"onemodel_arena_growth_events_total", "counter"},
      {"onemodel_session_handles", "gauge"},
      {"onemodel_session_pool_buffers", "gauge"},
      {"onemodel_session_pool_bytes", "gauge"},
      {"onemodel_session_memory_limit_bytes", "gauge"},
      {"onemodel_session_requests_total", "counter"},
      {"onemodel_rpc_requests_total", "counter"},
      {"onemodel_rpc_errors_total", "counter"},
      {"onemodel_rpc_latency_seconds", "histogram"},
      {"onemodel_rpc_phase_seconds_total", "counter"},
      {"onemodel_rpc_inline_requests_total", "counter"},
  };
  for (const auto& [name, type] : families) {
    EXPECT_THAT(text, HasSubstr("\n# HELP " + name + " ")) << name;
    EXPECT_THAT(text, Not(HasSubstr("\n# HELP " + name + " \n"))) << name << ": empty help";
    EXPECT_TRUE(HasLine(text, "# TYPE " + name + " " + type)) << name;
  }
}

TEST_F(MetricsExporterTest, ValuesComeFromOneSnapshotPerScrape) {
  const std::string first = Scrape(exporter_.port());
  EXPECT_EQ(snapshots_, 1);
  for (const char* line : {
           "onemodel_pool_rented_buffers 1001",
           "onemodel_pool_requested_bytes 1002",
           "onemodel_pool_rented_bytes 1003",
           "onemodel_pool_peak_rented_bytes 1004",
           "onemodel_pool_idle_bytes 1005",
           "onemodel_pool_max_idle_bytes 1006",
           "onemodel_pool_hits_total 1007",
           "onemodel_pool_misses_total 1008",
           "onemodel_pool_frees_over_cap_total 1009",
           "onemodel_sessions_open 1010",
           "onemodel_sessions_created_total 1011",
           "onemodel_sessions_closed_total 1012",
           "onemodel_sessions_expired_total 1013",
           "onemodel_leaked_buffers_reclaimed_total 1014",
           "onemodel_pool_class_rented_buffers{size_bytes=\"64\"} 1015",
           "onemodel_pool_class_idle_buffers{size_bytes=\"64\"} 1016",
           "onemodel_pool_class_rented_buffers{size_bytes=\"4096\"} 1017",
           "onemodel_pool_class_idle_buffers{size_bytes=\"4096\"} 1018",
           "onemodel_arena_chunks{session=\"7\",kernels=\"reference\"} 1019",
           "onemodel_arena_reserved_bytes{session=\"7\",kernels=\"reference\"} 1020",
           "onemodel_arena_used_bytes{session=\"7\",kernels=\"reference\"} 1021",
           "onemodel_arena_peak_used_bytes{session=\"7\",kernels=\"reference\"} 1022",
           "onemodel_arena_resets_total{session=\"7\",kernels=\"reference\"} 1023",
           "onemodel_arena_allocations_total{session=\"7\",kernels=\"reference\"} 1024",
           "onemodel_arena_growth_events_total{session=\"7\",kernels=\"reference\"} 1025",
           "onemodel_session_handles{session=\"7\",kernels=\"reference\"} 1026",
           "onemodel_session_pool_buffers{session=\"7\",kernels=\"reference\"} 1027",
           "onemodel_session_pool_bytes{session=\"7\",kernels=\"reference\"} 1028",
           "onemodel_session_memory_limit_bytes{session=\"7\",kernels=\"reference\"} 1029",
           "onemodel_session_requests_total{session=\"7\",kernels=\"reference\"} 1030",
           "onemodel_arena_chunks{session=\"9\",kernels=\"fast-avx2\"} 1031",
           "onemodel_arena_growth_events_total{session=\"9\",kernels=\"fast-avx2\"} 1037",
           "onemodel_session_handles{session=\"9\",kernels=\"fast-avx2\"} 1038",
           "onemodel_session_requests_total{session=\"9\",kernels=\"fast-avx2\"} 1042",
           "onemodel_buffers_released_by_close_total 1043",
       }) {
    EXPECT_TRUE(HasLine(first, line)) << line;
  }

  const std::string second = Scrape(exporter_.port());
  EXPECT_EQ(snapshots_, 2);
  EXPECT_TRUE(HasLine(second, "onemodel_pool_rented_buffers 2001"));
  EXPECT_TRUE(HasLine(second, "onemodel_pool_class_idle_buffers{size_bytes=\"4096\"} 2018"));
  EXPECT_TRUE(
      HasLine(second, "onemodel_session_requests_total{session=\"9\",kernels=\"fast-avx2\"} 2042"));
  EXPECT_THAT(second, Not(HasSubstr(" 1001\n")));
}

TEST_F(MetricsExporterTest, RpcCountsByMethodAndCodeAndLatencyHistogram) {
  const int run = rpc_stats_.MethodIndex("Run");
  rpc_stats_.Record(run, /*OK*/ 0, std::chrono::microseconds(25));
  rpc_stats_.Record(run, /*OK*/ 0, std::chrono::microseconds(250));
  rpc_stats_.Record(run, /*NOT_FOUND*/ 5, std::chrono::seconds(70));
  const std::string text = Scrape(exporter_.port());

  EXPECT_TRUE(HasLine(text, "onemodel_rpc_requests_total{method=\"Run\",code=\"OK\"} 2"));
  EXPECT_TRUE(HasLine(text, "onemodel_rpc_requests_total{method=\"Run\",code=\"NOT_FOUND\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("code=\"INVALID_ARGUMENT\""))) << "only codes seen";
  EXPECT_THAT(text, Not(HasSubstr("onemodel_rpc_requests_total{method=\"Ping\"")));
  EXPECT_TRUE(HasLine(text, "onemodel_rpc_errors_total{method=\"Run\"} 1"));
  EXPECT_TRUE(HasLine(text, "onemodel_rpc_errors_total{method=\"Ping\"} 0"));

  for (const char* line : {
           "onemodel_rpc_latency_seconds_count{method=\"Run\"} 3",
           "onemodel_rpc_latency_seconds_sum{method=\"Run\"} 70.000275",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"5e-06\"} 0",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"2e-05\"} 0",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"3e-05\"} 1",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"0.00015\"} 1",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"0.00025\"} 2",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"0.001\"} 2",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"2.5\"} 2",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"60\"} 2",
           "onemodel_rpc_latency_seconds_bucket{method=\"Run\",le=\"+Inf\"} 3",
           "onemodel_rpc_latency_seconds_count{method=\"Ping\"} 0",
           "onemodel_rpc_latency_seconds_bucket{method=\"Ping\",le=\"+Inf\"} 0",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line;
  }
}

TEST_F(MetricsExporterTest, RpcTimeSplitPerPhaseAndInlineRequests) {
  const int run = rpc_stats_.MethodIndex("Run");
  using std::chrono::microseconds;
  const RequestPhases split{{microseconds(1), microseconds(20), microseconds(250'000),
                             microseconds(4000)}};  // decode, queue, execute, encode
  rpc_stats_.Record(run, /*OK*/ 0, microseconds(4321), split, /*ran_inline=*/true);
  rpc_stats_.Record(run, /*OK*/ 0, microseconds(4321), split);
  const std::string text = Scrape(exporter_.port());
  for (const char* line : {
           "onemodel_rpc_phase_seconds_total{method=\"Run\",phase=\"decode\"} 2e-06",
           "onemodel_rpc_phase_seconds_total{method=\"Run\",phase=\"queue\"} 4e-05",
           "onemodel_rpc_phase_seconds_total{method=\"Run\",phase=\"execute\"} 0.5",
           "onemodel_rpc_phase_seconds_total{method=\"Run\",phase=\"encode\"} 0.008",
           "onemodel_rpc_phase_seconds_total{method=\"Ping\",phase=\"queue\"} 0",
           "onemodel_rpc_inline_requests_total{method=\"Run\"} 1",
           "onemodel_rpc_inline_requests_total{method=\"Ping\"} 0",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\n" << text;
  }
}

TEST(MetricsExporterListenTest, PortZeroPicksAFreePort) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter a("127.0.0.1:0", rpc_stats, [] { return ServerSnapshot{}; });
  MetricsExporter b("127.0.0.1:0", rpc_stats, [] { return ServerSnapshot{}; });
  EXPECT_GT(a.port(), 0);
  EXPECT_GT(b.port(), 0);
  EXPECT_NE(a.port(), b.port());
  EXPECT_THAT(Scrape(b.port()), HasSubstr("\nonemodel_pool_rented_bytes 0\n"));
}

// The message MetricsExporter throws for `address`.
std::string ListenError(const std::string& address) {
  RpcStats rpc_stats({"Ping"});
  try {
    MetricsExporter exporter(address, rpc_stats, [] { return ServerSnapshot{}; });
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no exception";
}

constexpr char kAdvice[] = "; pass --metrics-listen with a free host:port, or off to disable";

TEST(MetricsExporterListenTest, MalformedAddressThrowsWithTheReason) {
  EXPECT_EQ(
      ListenError("not-an-address"),
      "cannot listen for metrics on 'not-an-address': expected host:port" + std::string(kAdvice));
  EXPECT_EQ(ListenError("127.0.0.1:99999"),
            "cannot listen for metrics on '127.0.0.1:99999': port '99999' is not a number from 0 "
            "to 65535" +
                std::string(kAdvice));
  EXPECT_THAT(ListenError("no.such.host.invalid:9464"),
              AllOf(StartsWith("cannot listen for metrics on 'no.such.host.invalid:9464': "),
                    HasSubstr(kAdvice)));
}

TEST(MetricsExporterListenTest, PortInUseThrowsWithTheReason) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter first("127.0.0.1:0", rpc_stats, [] { return ServerSnapshot{}; });
  const std::string address = "127.0.0.1:" + std::to_string(first.port());
  EXPECT_EQ(ListenError(address),
            "cannot listen for metrics on '" + address + "': Address already in use" + kAdvice);
}

TEST(MetricsExporterHttpTest, OtherPathsMethodsAndGarbageGetErrorsAndServingGoesOn) {
  RpcStats rpc_stats({"Ping"});
  MetricsExporter exporter("127.0.0.1:0", rpc_stats, [] { return ServerSnapshot{}; },
                           {.status_page = false});
  const int port = exporter.port();
  for (const char* path : {"/", "/status", "/status.json"}) {
    EXPECT_THAT(Exchange(port, "GET " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n\r\n"),
                StartsWith("HTTP/1.1 404 Not Found\r\n"))
        << path << " without the status page";
  }
  EXPECT_THAT(Exchange(port, "GET /metrics/extra HTTP/1.1\r\n\r\n"),
              StartsWith("HTTP/1.1 404 Not Found\r\n"));
  EXPECT_THAT(Exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
              StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"));
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/1.1 extra\r\n\r\n"),
              StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  // Unanswerable requests are closed, at once or (when libmicrohttpd reads the client's end
  // together with the data) at the idle timeout.
  EXPECT_EQ(Exchange(port, "garbage\r\n\r\n"), "") << "no request line: closed unanswered";
  EXPECT_THAT(Exchange(port, std::string(20000, 'A')),
              AnyOf(Eq(""), StartsWith("HTTP/1.1 414 URI Too Long\r\n")));
  EXPECT_EQ(Exchange(port, "GET /metr"), "") << "an incomplete request gets no answer";
  const std::string ok = Exchange(port, "GET /metrics?x=1 HTTP/1.1\r\n\r\n");
  EXPECT_THAT(ok, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(ok, HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(ok, HasSubstr("\nonemodel_pool_rented_bytes 0\n"));
}

}  // namespace
}  // namespace onemodel::server
