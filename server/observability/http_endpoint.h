// HttpEndpoint: read-only HTTP documents (the Prometheus metrics) served by libmicrohttpd.
//
// GET or HEAD of a known path answers 200 with the text its `render` returns at that moment
// (HEAD without the body); other paths 404, other methods 405, a request head (request line
// and header fields) over kMaxRequestHeadBytes 431; libmicrohttpd answers malformed requests
// 400 or closes them unanswered. It serves every connection at once from one event thread
// (epoll) and closes a connection idle for kIdleTimeoutSeconds. This class's own thread accepts,
// closes connections over kMaxConnections at once, and backs off while the process is out of file
// descriptors instead of spinning (libmicrohttpd 0.9.75 busy-waits there, and deadlocks when its
// own connection limit refuses a connection handed to it: so the limit is kept here). Why
// libmicrohttpd, and not civetweb or cpp-httplib: docs/operations.md#metrics.
//
//   HttpEndpoint http("127.0.0.1:0", {{"/metrics", {"text/plain; version=0.0.4",
//                                                   [&] { return Render(); }}}});
//   int port = http.port();
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

struct MHD_Daemon;

namespace onemodel::server {

// One served document: its Content-Type and the function that renders it per request. `render`
// runs on the HTTP thread; an exception it throws becomes a 500.
struct HttpDocument {
  std::string content_type;
  std::function<std::string()> render;
};

class HttpEndpoint {
 public:
  // Connections open at once; more are closed at accept (each holds kConnectionMemoryBytes).
  static constexpr unsigned kMaxConnections = 64;
  // A connection that sends or takes nothing for this long is closed.
  static constexpr unsigned kIdleTimeoutSeconds = 5;
  // The request line plus the header fields (name, ": ", value, CRLF each) may hold this much.
  static constexpr size_t kMaxRequestHeadBytes = 8192;
  // libmicrohttpd's buffer per connection; the library refuses heads too large for it (414, 431
  // or closing the connection).
  static constexpr size_t kConnectionMemoryBytes = 32768;

  // Serves `documents` (by path, e.g. "/metrics") on `address` ("host:port", "[v6]:port"; port 0
  // picks one). Throws std::runtime_error naming the address and the reason when it cannot.
  HttpEndpoint(const std::string& address, std::map<std::string, HttpDocument> documents);
  // Stops accepting, closes every connection (a slow client does not hold it up) and returns once
  // no render is running.
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

 private:
  struct Callbacks;  // libmicrohttpd's C callbacks (http_endpoint.cc)
  friend struct Callbacks;

  // Accepts connections and hands them to libmicrohttpd until the wake pipe is written.
  void AcceptLoop();

  const std::map<std::string, HttpDocument> documents_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: writing to it ends AcceptLoop()
  int port_ = 0;
  MHD_Daemon* daemon_ = nullptr;
  std::atomic<unsigned> open_connections_{0};  // handed to libmicrohttpd and not yet closed
  std::thread accept_thread_;
};

}  // namespace onemodel::server
