// Client: a connection to one onemodeld (a gRPC channel and its stubs), the server-wide
// calls (Ping, Health, Stats, WatchStats, ListOperations) and the factory of Sessions. Thread-safe;
// sessions made from it keep the connection alive after the Client is gone.
//
//   onemodel::client::Client client("127.0.0.1:50051");
//   if (client.Health() != HealthStatus::SERVING) return 1;
//   Session session = client.CreateSession({.client_name = "trainer"});
//   v1::Stats stats = client.Stats();
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/lib/internal/connection.h"
#include "client/lib/session.h"

namespace onemodel::client {

using HealthStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

struct SessionOptions {
  v1::KernelChoice kernels = v1::KERNEL_CHOICE_UNSPECIFIED;  // the server's default: fast
  int64_t arena_chunk_bytes = 0;                             // 0: the server's default
  int64_t memory_limit_bytes = 0;
  int64_t idle_timeout_ms = 0;
  std::string client_name{};
};

class Client {
 public:
  // A client of the server at `target` ("host:port"); connects lazily, on the first call.
  // Turns off abseil's lock-order tracking for the process (QuietAbseilMutexes).
  explicit Client(const std::string& target, ClientOptions options = {});

  // The empty RPC; returns the server instance id.
  std::string Ping();
  // grpc.health.v1 Check of `service` ("" for the whole server), waiting at most `timeout`.
  HealthStatus Health(const std::string& service = "",
                      std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Server statistics; with a session id, that session's too.
  v1::Stats Stats(const std::string& session_id = "");
  // Streams statistics every `interval_ms` until `on_stats` returns false.
  void WatchStats(int64_t interval_ms, const std::function<bool(const v1::Stats&)>& on_stats,
                  const std::string& session_id = "");
  // The operations Run accepts (inputs, attributes, defaults, docs); with a name, only that
  // one (Error NOT_FOUND naming the nearest names when there is none).
  std::vector<v1::OperationSpec> ListOperations(const std::string& name = "");

  // A new session, closed when the returned object is destroyed.
  Session CreateSession(const SessionOptions& options = {});
  // An existing session by id, not closed on destruction (see Session::Close).
  Session AttachSession(std::string session_id);

  const std::shared_ptr<grpc::Channel>& channel() const { return connection_->channel(); }

 private:
  std::shared_ptr<internal::Connection> connection_;
};

}  // namespace onemodel::client
