#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <stdexcept>

#include "core/kernels/blas.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/memory_budget.h"
#include "proto/grpc_runtime.h"
#include "server/observability/logging.h"
#include "server/rpc/request_context.h"
#include "server/security_files.h"

namespace onemodel::server {
namespace {

constexpr char kServiceName[] = "onemodel.v1.OneModel";
constexpr char kServicePath[] = "/onemodel.v1.OneModel/";  // the :path prefix of its calls

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

// With TLS, refuses a OneModel call without the bearer token in gRPC's auth filter, before the
// call is queued for a handler: a flood of such calls (rapid reset) never reaches the handlers'
// threads. Health checks and reflection need no token, as without TLS.
class TokenProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenProcessor(std::string token) : token_(std::move(token)) {}
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext*, OutputMetadata*,
                       OutputMetadata*) override {
    const auto path = metadata.find(":path");
    if (path == metadata.end() || !path->second.starts_with(kServicePath)) return grpc::Status::OK;
    if (BearerTokenMatches(metadata, token_)) return grpc::Status::OK;
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kTokenRefusal);
  }

 private:
  const std::string token_;
};

std::shared_ptr<grpc::ServerCredentials> Credentials(const ServerConfig& c,
                                                     const std::string& token) {
  if (c.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      c.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_key_cert_pairs.push_back(
      {ReadSecurityFile("--tls-key", c.tls_key), ReadSecurityFile("--tls-cert", c.tls_cert)});
  if (!c.tls_client_ca.empty()) {
    options.pem_root_certs = ReadSecurityFile("--tls-client-ca", c.tls_client_ca);
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::SslServerCredentials(options);
  if (!token.empty())
    credentials->SetAuthMetadataProcessor(std::make_shared<TokenProcessor>(token));
  return credentials;
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
                  const std::string ended = fmt::format(
                      "{}: {} {}", EndReasonName(reason), buffers,
                      reason == EndReason::kExpired ? "leaked buffer(s) reclaimed"
                                                    : "unreleased buffer(s) released by the close");
                  LogWithFields(spdlog::level::info, {.session_serial = s.serial()},
                                fmt::format("session s{} {}", s.serial(), ended),
                                "session " + ended);
                }),
      rpc_stats_(MethodNames()) {
  QuietAbseilMutexes();  // before the server builds gRPC's objects
  KernelSet::SetDefault(KernelChoice::kFast);
  SetBlasThreads(config_.blas_threads);
  const std::string token = ReadAuthToken(config_.auth_token_file);
  service_ = std::make_unique<OneModelService>(config_, sessions_, rpc_stats_, instance_id_, token);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  // Without this gRPC binds with SO_REUSEPORT: a second server would start on a busy port and
  // the kernel would split new connections between the two.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(config_.listen, Credentials(config_, token), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config_.max_message_bytes));
  // gRPC 1.51 checks a compressed message's size before it inflates it: a 1 MB gzip body
  // became a 1 GiB message (docs/security.md). No client needs compression to reach us, so
  // every algorithm is refused (UNIMPLEMENTED) before anything is inflated.
  for (int a = GRPC_COMPRESS_NONE + 1; a < GRPC_COMPRESS_ALGORITHMS_COUNT; ++a) {
    builder.SetCompressionAlgorithmSupportStatus(static_cast<grpc_compression_algorithm>(a), false);
  }
  grpc::ResourceQuota quota("onemodeld");
  quota.SetMaxThreads(kMaxSyncThreads);
  builder.SetResourceQuota(quota);
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
      metrics_ = std::make_unique<MetricsExporter>(
          config_.metrics_listen, rpc_stats_, [this] { return sessions_.Snapshot(); },
          MetricsOptions{.session_series = config_.metrics_sessions,
                         .status_page = config_.status_page,
                         .instance_id = instance_id_,
                         .grpc_address = grpc_address_});
    } catch (...) {
      server_->Shutdown();
      sessions_.CloseAll();
      throw;
    }
    metrics_address_ = WithPort(config_.metrics_listen, metrics_->port());
  }
  heap_trim_ =
      std::make_unique<QuietHeapTrim>([this] { return service_->CallsBegun(); }, kHeapTrimQuiet);
  spdlog::info(
      "onemodeld serving on {}{}, metrics {}, instance {}, kernels {}, {} worker(s), "
      "{} BLAS thread(s) per MatMul, "
      "memory ceiling {}, pool idle cap {}",
      grpc_address_, config_.tls_cert.empty() ? "" : " (TLS)",
      metrics_address_.empty() ? "off" : "on " + metrics_address_, instance_id_,
      KernelSet::Default().name(), config_.workers, BlasThreads(),
      FormatBytes(EffectiveMemoryLimit(config_)), FormatBytes(config_.pool_max_idle_bytes));
}

Server::~Server() {
  if (!shut_down_) Shutdown(std::chrono::milliseconds(0));
  server_->Shutdown(std::chrono::system_clock::now());
}

int64_t Server::Shutdown(std::chrono::milliseconds drain) {
  shut_down_ = true;
  server_->GetHealthCheckService()->SetServingStatus(false);
  // Our calls get the drain to finish; then they are stopped.
  service_->StartDrain();
  if (!service_->WaitDrain(std::chrono::system_clock::now() + drain)) {
    spdlog::warn(
        "calls still in flight after the drain of {} ms (or a second signal): stopping "
        "them",
        drain.count());
    service_->CancelCalls();
    if (!service_->WaitIdle(std::chrono::system_clock::now() + kStopGrace)) {
      spdlog::warn("calls still running {} ms after they were stopped: cancelling them",
                   kStopGrace.count());
    }
  }
  // gRPC keeps serving (refusing every call with UNAVAILABLE) until ~Server: its own shutdown
  // answers a call that comes in before the client has seen its GOAWAY with a bare CANCELLED.
  const int64_t open = sessions_.Snapshot().sessions.open;
  sessions_.CloseAll();
  metrics_.reset();
  heap_trim_.reset();
  return open;
}

}  // namespace onemodel::server
