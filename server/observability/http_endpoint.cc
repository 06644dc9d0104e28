#include "server/observability/http_endpoint.h"

#include <fcntl.h>
#include <microhttpd.h>
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

// How long accepting pauses when the process or system is out of file descriptors or memory.
constexpr int kAcceptBackoffMs = 100;

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

}  // namespace

// libmicrohttpd's access handler and what it needs.
struct HttpEndpoint::Callbacks {
  // Adds the length of one header field or query argument to the size_t at `total`.
  static MHD_Result AddFieldSize(void* total, MHD_ValueKind kind, const char* key,
                                 const char* value) {
    const size_t separator = kind == MHD_GET_ARGUMENT_KIND ? 2 : 4;  // "=" "&" or ": " CRLF
    *static_cast<size_t*>(total) +=
        std::strlen(key) + (value == nullptr ? 0 : std::strlen(value)) + separator;
    return MHD_YES;
  }

  // The request head's size: request line (decoded), query arguments and header fields.
  static size_t HeadSize(MHD_Connection* connection, const char* url, const char* method,
                         const char* version) {
    size_t total = std::strlen(method) + std::strlen(url) + std::strlen(version) + 4;
    MHD_get_connection_values(connection,
                              static_cast<MHD_ValueKind>(MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND),
                              &AddFieldSize, &total);
    return total;
  }

  // Queues a response with `status`, `content_type` and `body` (libmicrohttpd drops the body
  // for HEAD).
  static MHD_Result Send(MHD_Connection* connection, unsigned status,
                         const std::string& content_type, const std::string& body,
                         const char* allow = nullptr) {
    MHD_Response* response = MHD_create_response_from_buffer(
        body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type.c_str());
    if (allow != nullptr) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow);
    const MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
  }

  // Counts a connection closed by libmicrohttpd.
  static void OnConnection(void* endpoint, MHD_Connection* /*connection*/,
                           void** /*socket_context*/, MHD_ConnectionNotificationCode code) {
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      --static_cast<HttpEndpoint*>(endpoint)->open_connections_;
    }
  }

  // Answers one request from the endpoint's documents (see the header for the statuses).
  static MHD_Result OnRequest(void* endpoint, MHD_Connection* connection, const char* url,
                              const char* method, const char* version, const char* /*upload*/,
                              size_t* /*upload_size*/, void** /*request_state*/) {
    const auto& documents = static_cast<const HttpEndpoint*>(endpoint)->documents_;
    try {
      if (HeadSize(connection, url, method, version) > kMaxRequestHeadBytes) {
        return Send(connection, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "text/plain",
                    "request head over " + std::to_string(kMaxRequestHeadBytes) + " bytes\n");
      }
      const bool head = std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
      if (!head && std::strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
        return Send(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
                    "only GET and HEAD are served\n", "GET, HEAD");
      }
      const auto found = documents.find(url);
      if (found == documents.end()) {
        std::string paths;
        for (const auto& [path, document] : documents) paths += " " + path;
        return Send(connection, MHD_HTTP_NOT_FOUND, "text/plain", "served paths:" + paths + "\n");
      }
      std::string body;
      try {
        body = found->second.render();
      } catch (const std::exception& e) {
        return Send(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
                    "cannot render " + found->first + ": " + e.what() + "\n");
      }
      return Send(connection, MHD_HTTP_OK, found->second.content_type, body);
    } catch (...) {
      return MHD_NO;  // out of memory: libmicrohttpd closes the connection
    }
  }
};

HttpEndpoint::HttpEndpoint(const std::string& address,
                           std::map<std::string, HttpDocument> documents)
    : documents_(std::move(documents)) {
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
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
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
  daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET, 0,
      nullptr, nullptr, &Callbacks::OnRequest, this, MHD_OPTION_NOTIFY_CONNECTION,
      &Callbacks::OnConnection, this, MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutSeconds,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemoryBytes, MHD_OPTION_END);
  if (daemon_ == nullptr || pipe2(wake_, O_CLOEXEC) != 0) {
    error = daemon_ == nullptr ? "libmicrohttpd did not start" : std::strerror(errno);
    if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
    close(listen_fd_);
    Fail(address, error);
  }
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

HttpEndpoint::~HttpEndpoint() {
  const char stop = 1;
  [[maybe_unused]] const ssize_t n = write(wake_[1], &stop, 1);
  accept_thread_.join();
  MHD_stop_daemon(daemon_);
  close(listen_fd_);
  close(wake_[0]);
  close(wake_[1]);
}

void HttpEndpoint::AcceptLoop() {
  int wait_ms = -1;  // until a connection arrives; kAcceptBackoffMs after running out of fds
  for (;;) {
    pollfd fds[2] = {{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    // While backing off only the wake pipe is watched: the waiting connection keeps the
    // listening socket readable, and watching it would spin.
    const int ready = poll(fds, wait_ms < 0 ? 2 : 1, wait_ms);
    if (ready < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length,
                           SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      if (open_connections_.load() >= kMaxConnections) {
        close(fd);
      } else {
        ++open_connections_;
        // On failure libmicrohttpd has closed `fd` without a close notification.
        if (MHD_add_connection(daemon_, fd, reinterpret_cast<sockaddr*>(&peer), length) !=
            MHD_YES) {
          --open_connections_;
        }
      }
      wait_ms = -1;
    } else {
      const bool exhausted =
          errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM;
      wait_ms = exhausted ? kAcceptBackoffMs : -1;
    }
  }
}

}  // namespace onemodel::server
