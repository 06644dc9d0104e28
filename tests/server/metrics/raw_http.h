// Raw HTTP over loopback TCP for the metrics endpoint tests: the exact bytes go out, the exact
// answer comes back, so malformed, slow and oversized requests can be tried.
//
//   std::string answer = Exchange(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
//   int fd = ConnectLoopback(port);  // an idle connection, closed by the caller
//   SlowClient slow(port);           // a slowloris client until it goes out of scope
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace onemodel::testing {

// A TCP connection to 127.0.0.1:`port` (blocking); -1 when it cannot connect.
int ConnectLoopback(int port);

// Everything `fd` receives until the peer closes it or `timeout_ms` passes without data.
std::string ReadAll(int fd, int timeout_ms = 10000);

// Sends `request` on a new connection, half-closes it, and returns the whole answer; "" when
// the server closed without one, "connect failed" when it could not connect.
std::string Exchange(int port, const std::string& request);

// GET /metrics over HTTP/1.0 (the server closes after the answer); the whole answer.
std::string Scrape(int port);

// A slowloris client: connects to `port` and sends one byte of an unfinished request every
// 1.5 s (under any 2 s read timeout) from its own thread until destroyed.
class SlowClient {
 public:
  explicit SlowClient(int port);
  // Stops sending and closes the connection.
  ~SlowClient();
  SlowClient(const SlowClient&) = delete;
  SlowClient& operator=(const SlowClient&) = delete;

  bool connected() const { return fd_ >= 0; }

 private:
  // Sends the bytes until stop_.
  void Trickle();

  const int fd_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace onemodel::testing
