#include "server/http_endpoint.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace onemodel::server {
namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kIoTimeoutSeconds = 2;

[[noreturn]] void Fail(const std::string& address, const std::string& why) {
  throw std::runtime_error("cannot listen for metrics on '" + address + "': " + why +
                           "; pass --metrics-listen with a free host:port, or off to disable");
}

// Splits "host:port" or "[v6]:port".
std::pair<std::string, std::string> SplitAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    Fail(address, "expected host:port");
  }
  const std::string port = address.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    Fail(address, "port '" + port + "' is not a number from 0 to 65535");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {host, port};
}

// Writes all of `text`, giving up on error or timeout.
void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string Response(const char* status, const std::string& content_type, const std::string& body) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

}  // namespace

HttpEndpoint::HttpEndpoint(const std::string& address, std::string path, std::string content_type,
                           std::function<std::string()> render)
    : path_(std::move(path)), content_type_(std::move(content_type)), render_(std::move(render)) {
  const auto [host, port] = SplitAddress(address);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    Fail(address, gai_strerror(rc));
  }
  std::string error = "no usable address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0) {
      listen_fd_ = fd;
    } else {
      error = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) Fail(address, error);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(wake_, O_CLOEXEC) != 0) {
    close(listen_fd_);
    Fail(address, std::strerror(errno));
  }
  thread_ = std::thread([this] { Loop(); });
}

HttpEndpoint::~HttpEndpoint() {
  const char stop = 1;
  [[maybe_unused]] const ssize_t n = write(wake_[1], &stop, 1);
  thread_.join();
  close(listen_fd_);
  close(wake_[0]);
  close(wake_[1]);
}

void HttpEndpoint::Loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const timeval timeout{kIoTimeoutSeconds, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    Answer(fd);
    close(fd);
  }
}

void HttpEndpoint::Answer(int fd) const {
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos) {
    if (request.size() > kMaxRequestBytes) {
      WriteAll(fd, Response("400 Bad Request", "text/plain", "request header too large\n"));
      return;
    }
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;  // closed or timed out: nobody to answer
    request.append(buffer, static_cast<size_t>(n));
  }
  const size_t method_end = request.find(' ');
  const size_t target_end = request.find(' ', method_end + 1);
  if (method_end == std::string::npos || target_end == std::string::npos) {
    WriteAll(fd, Response("400 Bad Request", "text/plain", "malformed request line\n"));
    return;
  }
  const std::string method = request.substr(0, method_end);
  std::string target = request.substr(method_end + 1, target_end - method_end - 1);
  target = target.substr(0, target.find('?'));
  if (method != "GET") {
    WriteAll(fd, Response("405 Method Not Allowed", "text/plain", "only GET is served\n"));
  } else if (target != path_) {
    WriteAll(fd, Response("404 Not Found", "text/plain", "the metrics are at " + path_ + "\n"));
  } else {
    WriteAll(fd, Response("200 OK", content_type_, render_()));
  }
}

}  // namespace onemodel::server
