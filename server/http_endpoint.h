// HttpEndpoint: a minimal HTTP/1.1 server for one read-only document (the Prometheus metrics).
//
// GET <path> answers 200 with the text `render` returns at that moment; other paths 404,
// other methods 405, malformed or oversized requests 400. One thread accepts and answers
// connections one at a time with short timeouts (scrapes are small and rare), and each
// connection closes after its answer. It exists because civetweb (behind prometheus-cpp's
// Exposer) crashed on its own 404 page in this process (docs/operations.md).
//
//   HttpEndpoint http("127.0.0.1:0", "/metrics", "text/plain; version=0.0.4",
//                     [&] { return Render(); });
//   int port = http.port();
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace onemodel::server {

class HttpEndpoint {
 public:
  // Listens on `address` ("host:port", "[v6]:port"; port 0 picks one). Throws
  // std::runtime_error naming the address and the reason when it cannot.
  HttpEndpoint(const std::string& address, std::string path, std::string content_type,
               std::function<std::string()> render);
  // Stops accepting; returns once the thread is gone.
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

 private:
  void Loop();
  // Reads one request from `fd` and writes the answer.
  void Answer(int fd) const;

  const std::string path_;
  const std::string content_type_;
  const std::function<std::string()> render_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: writing to it ends Loop()
  int port_ = 0;
  std::thread thread_;
};

}  // namespace onemodel::server
