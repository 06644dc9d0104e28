// The metrics endpoint inside onemodeld itself, where OpenBLAS is linked and started (civetweb
// crashed on its 404 page there, docs/operations.md#metrics), under hostile HTTP clients.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/server_process.h"
#include "tests/server/metrics/raw_http.h"

namespace onemodel::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Clock = std::chrono::steady_clock;

// The port of a "127.0.0.1:<port>" address.
int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

// Seconds since `start`.
double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(MetricsProcessTest, ErrorsHeadAndLfOnlyAreAnsweredAndTheServerLives) {
  ServerProcess server;
  const int port = PortOf(server.metrics_address());
  EXPECT_THAT(Exchange(port, "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 404 Not Found\r\n"),
                    EndsWith("served paths: / /metrics /status /status.json\n")));
  EXPECT_THAT(Exchange(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 200 OK\r\n"), EndsWith("\r\n\r\n")));
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/1.1\nHost: x\n\n"),
              AllOf(StartsWith("HTTP/1.1 200 OK\r\n"), HasSubstr("\nonemodel_pool_rented_bytes ")));
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n"),
              StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(port, "PUT /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
              StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(Scrape(port), HasSubstr("\nonemodel_sessions_open 0\n"));
  EXPECT_TRUE(server.Stop().ok());
}

TEST(MetricsProcessTest, StatusPageOffServesMetricsOnly) {
  ServerProcess server({"--status-page", "off"});
  const int port = PortOf(server.metrics_address());
  EXPECT_THAT(
      Exchange(port, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n"),
      AllOf(StartsWith("HTTP/1.1 404 Not Found\r\n"), EndsWith("served paths: /metrics\n")));
  EXPECT_TRUE(server.Stop().ok());
}

TEST(MetricsProcessTest, IdleAndSlowClientsDelayNeitherScrapesNorTheExit) {
  ServerProcess server;
  const int port = PortOf(server.metrics_address());
  std::vector<int> idle;
  for (int i = 0; i < 16; ++i) idle.push_back(ConnectLoopback(port));
  SlowClient slow(port);
  ASSERT_TRUE(slow.connected());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    EXPECT_THAT(Scrape(port), HasSubstr("\nonemodel_pool_rented_bytes "));
    EXPECT_LT(SecondsSince(start), 1.0) << "scrape " << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  }
  const auto start = Clock::now();
  EXPECT_TRUE(server.Stop().ok());
  EXPECT_LT(SecondsSince(start), 5.0) << "SIGTERM to exit with a slow metrics client connected";
  for (const int fd : idle) close(fd);
}

}  // namespace
}  // namespace onemodel::testing
