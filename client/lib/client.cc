#include "client/lib/client.h"

#include <iterator>

namespace onemodel::client {

using Stub = v1::OneModel::Stub;

Client::Client(const std::string& target, ClientOptions options)
    : connection_(std::make_shared<internal::Connection>(target, std::move(options))) {}

std::string Client::Ping() {
  return connection_->Call("Ping", &Stub::Ping, v1::PingRequest(), "").server_instance_id();
}

HealthStatus Client::Health(const std::string& service, std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  connection_->Prepare(context, "");
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse reply;
  CheckStatus("Health.Check", connection_->health().Check(&context, request, &reply));
  return reply.status();
}

v1::Stats Client::Stats(const std::string& session_id) {
  v1::StatsRequest request;
  request.set_session_id(session_id);
  return connection_->Call("GetStats", &Stub::GetStats, request, session_id);
}

void Client::WatchStats(int64_t interval_ms, const std::function<bool(const v1::Stats&)>& on_stats,
                        const std::string& session_id) {
  grpc::ClientContext context;
  connection_->Prepare(context, session_id);
  v1::WatchStatsRequest request;
  request.set_session_id(session_id);
  request.set_interval_ms(interval_ms);
  auto reader = connection_->stub().WatchStats(&context, request);
  v1::Stats stats;
  bool wanted = true;
  while (wanted && reader->Read(&stats)) wanted = on_stats(stats);
  if (!wanted) context.TryCancel();
  const grpc::Status status = reader->Finish();
  if (wanted || status.error_code() != grpc::StatusCode::CANCELLED) {
    CheckStatus("WatchStats", status);
  }
}

std::vector<v1::OperationSpec> Client::ListOperations(const std::string& name) {
  v1::ListOperationsRequest request;
  request.set_name(name);
  v1::ListOperationsReply reply =
      connection_->Call("ListOperations", &Stub::ListOperations, request, "");
  return {std::make_move_iterator(reply.mutable_operations()->begin()),
          std::make_move_iterator(reply.mutable_operations()->end())};
}

Session Client::CreateSession(const SessionOptions& options) {
  v1::CreateSessionRequest request;
  request.set_kernels(options.kernels);
  request.set_arena_chunk_bytes(options.arena_chunk_bytes);
  request.set_memory_limit_bytes(options.memory_limit_bytes);
  request.set_idle_timeout_ms(options.idle_timeout_ms);
  request.set_client_name(options.client_name);
  return Session(connection_,
                 connection_->Call("CreateSession", &Stub::CreateSession, request, ""));
}

Session Client::AttachSession(std::string session_id) {
  return Session(connection_, std::move(session_id));
}

}  // namespace onemodel::client
