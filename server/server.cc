#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <stdexcept>

#include "core/kernels/kernel_set.h"
#include "core/kernels/matmul.h"
#include "core/memory/memory_budget.h"
#include "server/security_files.h"

namespace onemodel::server {
namespace {

constexpr char kServiceName[] = "onemodel.v1.OneModel";

// "<host>-<12 hex>": readable in logs and metadata, different after every restart.
std::string NewInstanceId() {
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  std::random_device device;
  const uint64_t r = (uint64_t{device()} << 32) ^ device();
  char id[96];
  std::snprintf(id, sizeof id, "%s-%012llx", host[0] ? host : "onemodeld",
                static_cast<unsigned long long>(r & 0xFFFFFFFFFFFFull));
  return id;
}

std::shared_ptr<grpc::ServerCredentials> Credentials(const ServerConfig& c) {
  if (c.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      c.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_key_cert_pairs.push_back(
      {ReadSecurityFile("--tls-key", c.tls_key), ReadSecurityFile("--tls-cert", c.tls_cert)});
  if (!c.tls_client_ca.empty()) {
    options.pem_root_certs = ReadSecurityFile("--tls-client-ca", c.tls_client_ca);
  }
  return grpc::SslServerCredentials(options);
}

// "127.0.0.1:0" with the bound port: "127.0.0.1:41234".
std::string WithPort(const std::string& address, int port) {
  return address.substr(0, address.rfind(':') + 1) + std::to_string(port);
}

}  // namespace

Server::Server(const ServerConfig& config, std::vector<grpc::Service*> extra_services)
    : config_(config),
      instance_id_(NewInstanceId()),
      pool_(config.pool_max_idle_bytes),
      workers_(config.workers),
      sessions_(config_, pool_, workers_,
                [](const Session& s, EndReason reason, int64_t buffers) {
                  spdlog::info("session s{} {}: {} {}", s.serial(), EndReasonName(reason), buffers,
                               reason == EndReason::kExpired
                                   ? "leaked buffer(s) reclaimed"
                                   : "unreleased buffer(s) released by the close");
                }),
      rpc_stats_(MethodNames()) {
  KernelSet::SetDefault(KernelChoice::kFast);
  internal::SetBlasThreads(config_.blas_threads);
  service_ = std::make_unique<OneModelService>(config_, sessions_, rpc_stats_, instance_id_,
                                               ReadAuthToken(config_.auth_token_file));
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config_.listen, Credentials(config_), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config_.max_message_bytes));
  builder.RegisterService(service_.get());
  for (grpc::Service* extra : extra_services) builder.RegisterService(extra);
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0) {
    throw std::runtime_error("cannot listen on '" + config_.listen +
                             "': is the address valid and the port free? Pass --listen "
                             "host:port (port 0 picks a free one)");
  }
  grpc_address_ = WithPort(config_.listen, port);
  server_->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  if (!config_.metrics_listen.empty()) {
    try {
      metrics_ = std::make_unique<MetricsExporter>(config_.metrics_listen, rpc_stats_,
                                                   [this] { return sessions_.Snapshot(); });
    } catch (...) {
      server_->Shutdown();
      sessions_.CloseAll();
      throw;
    }
    metrics_address_ = WithPort(config_.metrics_listen, metrics_->port());
  }
  spdlog::info(
      "onemodeld serving on {}{}, metrics {}, instance {}, kernels {}, {} worker(s), "
      "{} BLAS thread(s) per MatMul, "
      "memory ceiling {}, pool idle cap {}",
      grpc_address_, config_.tls_cert.empty() ? "" : " (TLS)",
      metrics_address_.empty() ? "off" : "on " + metrics_address_, instance_id_,
      KernelSet::Default().name(), config_.workers, internal::BlasThreads(),
      FormatBytes(EffectiveMemoryLimit(config_)), FormatBytes(config_.pool_max_idle_bytes));
}

Server::~Server() {
  if (!shut_down_) Shutdown(std::chrono::milliseconds(0));
}

int64_t Server::Shutdown(std::chrono::milliseconds drain) {
  shut_down_ = true;
  server_->GetHealthCheckService()->SetServingStatus(false);
  // Our calls get the drain to finish; then gRPC cancels whatever is left (health Watch
  // streams never end by themselves and would otherwise hold the drain to its deadline).
  service_->StartDrain();
  if (!service_->WaitIdle(std::chrono::system_clock::now() + drain)) {
    spdlog::warn("calls still in flight after the drain of {} ms: cancelling them", drain.count());
  }
  server_->Shutdown(std::chrono::system_clock::now());
  const int64_t open = sessions_.Snapshot().sessions.open;
  sessions_.CloseAll();
  metrics_.reset();
  return open;
}

}  // namespace onemodel::server
