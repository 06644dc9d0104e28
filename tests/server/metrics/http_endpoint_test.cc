#include "server/observability/http_endpoint.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/metrics/raw_http.h"

namespace onemodel::server {
namespace {

using testing::ConnectLoopback;
using ::testing::EndsWith;
using testing::Exchange;
using ::testing::HasSubstr;
using testing::ReadAll;
using testing::Scrape;
using testing::SlowClient;
using ::testing::StartsWith;

using Clock = std::chrono::steady_clock;

constexpr char kBody[] = "onemodel_up 1\n";

// An endpoint on a free loopback port serving kBody at /metrics.
std::unique_ptr<HttpEndpoint> MakeEndpoint() {
  return std::make_unique<HttpEndpoint>(
      "127.0.0.1:0", std::map<std::string, HttpDocument>{
                         {"/metrics", {"text/plain; version=0.0.4", [] { return kBody; }}}});
}

// Seconds since `start`.
double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(HttpEndpointTest, SlowlorisDoesNotDelayScrapes) {
  const auto endpoint = MakeEndpoint();
  SlowClient slow(endpoint->port());
  ASSERT_TRUE(slow.connected());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // accepted before the scrapes
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    EXPECT_THAT(Scrape(endpoint->port()), EndsWith(kBody));
    EXPECT_LT(SecondsSince(start), 1.0) << "scrape " << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  }
}

TEST(HttpEndpointTest, IdleConnectionsDoNotDelayAScrape) {
  const auto endpoint = MakeEndpoint();
  std::vector<int> idle;
  for (int i = 0; i < 16; ++i) idle.push_back(ConnectLoopback(endpoint->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = Clock::now();
  EXPECT_THAT(Scrape(endpoint->port()), EndsWith(kBody));
  EXPECT_LT(SecondsSince(start), 1.0);
  for (const int fd : idle) close(fd);
}

// Whether `done` returns true within 10 s of tries.
bool Within10Seconds(const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

TEST(HttpEndpointTest, ConnectionsOverTheLimitAreClosedAndServingGoesOn) {
  const auto endpoint = MakeEndpoint();
  std::vector<int> idle;
  for (unsigned i = 0; i < HttpEndpoint::kMaxConnections; ++i) {
    idle.push_back(ConnectLoopback(endpoint->port()));
  }
  // Once the 64 are accepted, one more is closed at once, unanswered.
  EXPECT_TRUE(Within10Seconds([&] { return Scrape(endpoint->port()).empty(); }));
  for (const int fd : idle) close(fd);
  EXPECT_TRUE(Within10Seconds([&] { return Scrape(endpoint->port()).ends_with(kBody); }));
}

TEST(HttpEndpointTest, IdleConnectionsAreClosedAfterTheTimeout) {
  const auto endpoint = MakeEndpoint();
  const int fd = ConnectLoopback(endpoint->port());
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  EXPECT_EQ(ReadAll(fd, 30000), "");
  EXPECT_GE(SecondsSince(start), HttpEndpoint::kIdleTimeoutSeconds - 1.0);
  EXPECT_LT(SecondsSince(start), HttpEndpoint::kIdleTimeoutSeconds + 5.0);
  close(fd);
}

// Process CPU seconds so far (every thread).
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST(HttpEndpointTest, OutOfFileDescriptorsItWaitsWithoutSpinningThenServes) {
  const auto endpoint = MakeEndpoint();
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 256);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler;
  for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) filler.push_back(fd);
  close(filler.back());  // room for the client's socket only: the endpoint's accept fails
  filler.pop_back();
  const int client = ConnectLoopback(endpoint->port());
  const double cpu_before = CpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double cpu = CpuSeconds() - cpu_before;
  for (const int fd : filler) close(fd);
  setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_GE(client, 0);
  EXPECT_LT(cpu, 0.2) << "CPU seconds used in 2 s with a connection waiting and no fd free";
  const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
  send(client, request.data(), request.size(), MSG_NOSIGNAL);
  EXPECT_THAT(ReadAll(client), EndsWith(kBody)) << "the waiting connection is served";
  close(client);
}

TEST(HttpEndpointTest, LfOnlyRequestIsAnswered) {
  const auto endpoint = MakeEndpoint();
  const std::string answer = Exchange(endpoint->port(), "GET /metrics HTTP/1.1\nHost: x\n\n");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, EndsWith(kBody));
}

// A GET /metrics whose head (request line and header fields, each with its CRLF, without the
// final empty line) is `bytes` long.
std::string RequestWithHead(size_t bytes) {
  const std::string line = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  const std::string name = "X-Pad: ";
  return line + name + std::string(bytes - line.size() - name.size() - 2, 'a') + "\r\n\r\n";
}

TEST(HttpEndpointTest, RequestHeadOverTheLimitGets431) {
  const auto endpoint = MakeEndpoint();
  const size_t limit = HttpEndpoint::kMaxRequestHeadBytes;
  EXPECT_THAT(Exchange(endpoint->port(), RequestWithHead(limit)), EndsWith(kBody));
  EXPECT_THAT(Exchange(endpoint->port(), RequestWithHead(limit + 1)),
              AllOf(StartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
                    HasSubstr("request head over 8192 bytes")));
  EXPECT_THAT(Exchange(endpoint->port(), RequestWithHead(9 * 1024)), StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(endpoint->port(), RequestWithHead(64 * 1024)), StartsWith("HTTP/1.1 4"))
      << "over libmicrohttpd's buffer: refused by the library";
  EXPECT_THAT(Scrape(endpoint->port()), EndsWith(kBody));
}

TEST(HttpEndpointTest, HeadIsAnsweredWithoutABody) {
  const auto endpoint = MakeEndpoint();
  const std::string answer =
      Exchange(endpoint->port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\nContent-Length: " + std::to_string(sizeof kBody - 1)));
  EXPECT_THAT(answer, EndsWith("\r\n\r\n")) << "no body";
}

TEST(HttpEndpointTest, OtherMethodsGet405WithAllow) {
  const auto endpoint = MakeEndpoint();
  EXPECT_THAT(Exchange(endpoint->port(), "DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"),
                    HasSubstr("\r\nAllow: GET, HEAD\r\n")));
}

TEST(HttpEndpointTest, EveryDocumentIsServedAtItsPath) {
  const auto endpoint = std::make_unique<HttpEndpoint>(
      "127.0.0.1:0",
      std::map<std::string, HttpDocument>{{"/a", {"text/plain", [] { return "first\n"; }}},
                                          {"/b", {"text/html", [] { return "<p>second</p>\n"; }}}});
  EXPECT_THAT(Exchange(endpoint->port(), "GET /a HTTP/1.0\r\n\r\n"),
              AllOf(HasSubstr("\r\nContent-Type: text/plain\r\n"), EndsWith("\r\n\r\nfirst\n")));
  EXPECT_THAT(Exchange(endpoint->port(), "GET /b HTTP/1.0\r\n\r\n"),
              AllOf(HasSubstr("\r\nContent-Type: text/html\r\n"), EndsWith("<p>second</p>\n")));
  EXPECT_THAT(Exchange(endpoint->port(), "GET /c HTTP/1.0\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 404 Not Found\r\n"), EndsWith("served paths: /a /b\n")));
}

TEST(HttpEndpointTest, ARenderThatThrowsGets500) {
  const auto endpoint = std::make_unique<HttpEndpoint>(
      "127.0.0.1:0",
      std::map<std::string, HttpDocument>{{"/metrics", {"text/plain", []() -> std::string {
                                                          throw std::runtime_error("no snapshot");
                                                        }}}});
  EXPECT_THAT(Scrape(endpoint->port()), AllOf(StartsWith("HTTP/1.1 500 Internal Server Error\r\n"),
                                              EndsWith("cannot render /metrics: no snapshot\n")));
}

TEST(HttpEndpointTest, ASlowClientDoesNotDelayTheStop) {
  auto endpoint = MakeEndpoint();
  SlowClient slow(endpoint->port());
  ASSERT_TRUE(slow.connected());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto start = Clock::now();
  endpoint.reset();
  EXPECT_LT(SecondsSince(start), 1.0);
}

}  // namespace
}  // namespace onemodel::server
