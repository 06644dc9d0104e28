#include "tests/server/metrics/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace onemodel::testing {

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string ReadAll(int fd, int timeout_ms) {
  std::string answer;
  char buffer[4096];
  for (pollfd p{fd, POLLIN, 0}; poll(&p, 1, timeout_ms) > 0;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  return answer;
}

std::string Exchange(int port, const std::string& request) {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return "connect failed";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  std::string answer = ReadAll(fd);
  close(fd);
  return answer;
}

std::string Scrape(int port) {
  return Exchange(port, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
}

SlowClient::SlowClient(int port) : fd_(ConnectLoopback(port)), thread_([this] { Trickle(); }) {}

SlowClient::~SlowClient() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  close(fd_);
}

void SlowClient::Trickle() {
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  std::unique_lock lock(mutex_);
  for (size_t i = 0; !stop_; ++i) {
    const char byte = i < request.size() ? request[i] : 'a';
    send(fd_, &byte, 1, MSG_NOSIGNAL);
    wake_.wait_for(lock, std::chrono::milliseconds(1500), [this] { return stop_; });
  }
}

}  // namespace onemodel::testing
