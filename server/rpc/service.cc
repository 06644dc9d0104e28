#include "server/rpc/service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "core/common/exceptions.h"
#include "core/kernels/thread_pool.h"
#include "core/memory/memory_budget.h"
#include "server/codec/tensor_codec.h"
#include "server/codec/tensor_info.h"
#include "server/observability/logging.h"
#include "server/observability/request_phases.h"
#include "server/observability/stats_proto.h"
#include "server/ops/inline_cost.h"
#include "server/ops/op_catalog.h"
#include "server/rpc/rpc_error.h"
#include "server/rpc/session_ops.h"
#include "server/rpc/status_mapping.h"
#include "server/rpc/stream_reactors.h"
#include "server/sessions/reply_charge.h"
#include "server/sessions/request_charge.h"

namespace onemodel::server {

std::vector<std::string> MethodNames() {
#define ONEMODEL_METHOD_NAME(Name) #Name,
  return {ONEMODEL_FOR_EACH_METHOD(ONEMODEL_METHOD_NAME)};
#undef ONEMODEL_METHOD_NAME
}

namespace {

// The cost (inline_cost.h) of the requests that touch no tensor's values.
int64_t Free(Session&) { return 0; }

}  // namespace

OneModelService::OneModelService(const ServerConfig& config, SessionManager& sessions,
                                 RpcStats& rpc_stats, std::string instance_id,
                                 std::string auth_token)
    : config_(config),
      sessions_(sessions),
      rpc_stats_(rpc_stats),
      observer_(rpc_stats, MethodNames(), std::chrono::milliseconds(config.slow_request_ms),
                config.max_request_warnings_per_second),
      instance_id_(std::move(instance_id)),
      auth_token_(std::move(auth_token)) {}

void OneModelService::Begin(Call& call) {
  bool draining;
  {
    std::lock_guard guard(calls_mutex_);
    ++active_calls_;  // Done() takes it back, whatever happens from here
    ++calls_begun_;
    draining = draining_;
  }
  call.ctx->AddInitialMetadata(kInstanceHeader, instance_id_);
  call.request_id = RequestIdOf(*call.ctx);
  if (draining) {
    throw RpcError(grpc::StatusCode::UNAVAILABLE,
                   "the server is shutting down; retry on another instance or after it restarts");
  }
  CheckAuth(*call.ctx, auth_token_);
}

void OneModelService::End(const Call& call, const grpc::Status& status) {
  observer_.Finished({.method = static_cast<int>(call.method),
                      .start = call.start,
                      .work_start = call.work_start,
                      .request_id = call.request_id,
                      .phases = call.phases,
                      .ran_inline = call.ran_inline,
                      .session_serial = call.session_serial,
                      .open_ended = call.method == Method::kWatchStats},
                     status);
}

int64_t OneModelService::CallsBegun() const {
  std::lock_guard guard(calls_mutex_);
  return calls_begun_;
}

void OneModelService::Done() {
  std::lock_guard guard(calls_mutex_);
  if (--active_calls_ == 0) idle_.notify_all();
}

// gRPC's default reactor has no OnDone: this one tells the drain when the reply has gone,
// holds the reply's memory charge until then (gRPC frees the reply right after OnDone) and
// the request's until its work is over (FreeRequest), and holds the call's CancelToken,
// cancelled when the call is (client, deadline, drain).
class OneModelService::UnaryReactor final : public Unary {
 public:
  explicit UnaryReactor(OneModelService& service) : service_(service) {
    std::lock_guard guard(service_.calls_mutex_);
    service_.tokens_.insert(&token_);
  }
  // Keeps `charge` until gRPC is done with the call.
  void Hold(ReplyCharge charge) { charge_ = std::move(charge); }
  // The request's charge, kept until gRPC is done with the call.
  RequestCharge& request_charge() { return request_charge_; }
  // The client cancelled or the deadline passed (CheckLive tells which).
  void OnCancel() override { token_.Cancel(static_cast<int>(grpc::StatusCode::CANCELLED)); }
  void OnDone() override {
    charge_ = ReplyCharge();
    request_charge_ = RequestCharge();
    {
      std::lock_guard guard(service_.calls_mutex_);
      service_.tokens_.erase(&token_);
    }
    service_.Done();
    delete this;
  }
  const CancelToken& token() const { return token_; }

 private:
  OneModelService& service_;
  CancelToken token_;
  ReplyCharge charge_;
  RequestCharge request_charge_;
};

OneModelService::UnaryReactor* OneModelService::NewUnaryReactor() {
  return new UnaryReactor(*this);
}

std::shared_ptr<Session> OneModelService::SessionOf(Call& call, const std::string& field) const {
  std::shared_ptr<Session> session = sessions_.Find(SessionIdOf(*call.ctx, field));
  call.session_serial = session->serial();
  return session;
}

std::shared_ptr<Session> OneModelService::OptionalSessionOf(Call& call,
                                                            const std::string& field) const {
  if (field.empty() && !call.ctx->client_metadata().count(kSessionHeader)) return nullptr;
  return SessionOf(call, field);
}

void OneModelService::CheckOpen(const Session& session) {
  if (session.closed()) {
    throw NotFound("session s" + std::to_string(session.serial()) +
                   " not found: it was closed while this request waited; create a new session");
  }
}

template <typename Work>
OneModelService::Unary* OneModelService::Inline(Method method, Context* ctx, Work work) {
  Unary* reactor = NewUnaryReactor();
  grpc::Status status;
  Call call{method, ctx};
  try {
    Begin(call);
    work(call);
  } catch (...) {
    status = CurrentExceptionStatus();
  }
  End(call, status);
  reactor->Finish(status);
  return reactor;
}

namespace {

// Frees the parsed `request`'s parts now, once its work is over, rather than when gRPC deletes
// the message after the reply has gone (which can come after the client's next request, or
// several, on a loaded server), and refunds their charge: a client that waits for each reply
// never finds its earlier requests still charged. gRPC only deletes the message afterwards.
template <typename Request>
void FreeRequest(const Request& request, RequestCharge& charge) {
  Request gone;
  const_cast<Request&>(request).Swap(&gone);
  charge = RequestCharge();
}

}  // namespace

template <typename Request, typename Cost, typename Work>
OneModelService::Unary* OneModelService::OnSession(Method method, Context* ctx,
                                                   const Request& request, Cost cost, Work work) {
  UnaryReactor* reactor = NewUnaryReactor();
  Call call{method, ctx};
  std::shared_ptr<Session> session;
  try {
    Begin(call);
    session = SessionOf(call, request.session_id());
    // A call that frees memory runs even when its full session is idle (RequestCharge).
    const bool frees = method == Method::kReleaseTensors || method == Method::kResetArena;
    reactor->request_charge() = RequestCharge(
        session, request, frees ? RequestCharge::Kind::kFrees : RequestCharge::Kind::kHolds);
  } catch (...) {
    const grpc::Status status = CurrentExceptionStatus();
    End(call, status);
    reactor->Finish(status);
    return reactor;
  }
  Session& s = *session;
  // The strand is let go (done) before the reply leaves, so the client's next call finds the
  // session idle.
  auto task = [this, reactor, call = std::move(call), session = std::move(session),
               work = std::move(work), request = &request,
               received_on = std::this_thread::get_id()](Strand::Done done) mutable {
    call.work_start = std::chrono::steady_clock::now();
    call.ran_inline = std::this_thread::get_id() == received_on;
    const PhaseScope phases(&call.phases);
    grpc::Status status;
    try {
      const CancelScope scope(&reactor->token());  // long kernels stop when the call does
      const ConvCacheScope conv_cache(&session->conv_cache());
      // A request on a worker may run many kernels: the pool's threads stay awake meanwhile.
      std::optional<ThreadPool::Warm> warm;
      if (!call.ran_inline) warm.emplace(ThreadPool::Shared());
      CheckOpen(*session);
      CheckLive(*call.ctx, "before it started");
      reactor->request_charge().Start();
      if constexpr (std::is_invocable_v<Work&, const std::shared_ptr<Session>&, UnaryReactor&>) {
        work(session, *reactor);
      } else {
        work(*session);
      }
    } catch (...) {
      status = CurrentExceptionStatus();
    }
    FreeRequest(*request, reactor->request_charge());
    if (!session->closed()) session->FinishRequest();
    done();
    End(call, status);
    reactor->Finish(status);
  };
  // Small work runs here, on gRPC's thread, when nothing of the session runs or waits.
  s.strand().RunHereOrPost(std::move(task), [&] {
    return config_.inline_max_bytes > 0 && !s.closed() && cost(s) <= config_.inline_max_bytes;
  });
  return reactor;
}

OneModelService::Unary* OneModelService::Ping(Context* ctx, const v1::PingRequest*,
                                              v1::PingReply* reply) {
  return Inline(Method::kPing, ctx, [&](Call&) { reply->set_server_instance_id(instance_id_); });
}

OneModelService::Unary* OneModelService::CreateSession(Context* ctx,
                                                       const v1::CreateSessionRequest* request,
                                                       v1::CreateSessionReply* reply) {
  return Inline(Method::kCreateSession, ctx, [&](Call& call) {
    if (!v1::KernelChoice_IsValid(request->kernels())) {
      throw InvalidArgument(
          "kernels " + std::to_string(request->kernels()) +
          " is not defined; use KERNEL_CHOICE_FAST (1) or KERNEL_CHOICE_EXACT (2)");
    }
    SessionRequest r;
    r.exact_kernels = request->kernels() == v1::KERNEL_CHOICE_EXACT;
    r.arena_chunk_bytes = request->arena_chunk_bytes();
    r.memory_limit_bytes = request->memory_limit_bytes();
    r.idle_timeout_ms = request->idle_timeout_ms();
    r.client_name = request->client_name();
    // A proxy's placement key becomes the id, so the proxy routes the session's calls back here.
    r.id = SessionHeaderOf(*call.ctx);
    std::shared_ptr<Session> s = sessions_.Create(r);
    call.session_serial = s->serial();
    const SessionOptions& o = s->options();
    reply->set_session_id(o.id);
    reply->set_kernel_variant(std::string(o.kernels->name()));
    reply->set_server_instance_id(instance_id_);
    reply->set_arena_chunk_bytes(o.arena_chunk_bytes);
    reply->set_memory_limit_bytes(o.memory_limit_bytes);
    reply->set_idle_timeout_ms(o.idle_timeout.count());
    reply->set_max_message_bytes(config_.max_message_bytes);
    const std::string created = fmt::format(
        "created: kernels {}, memory limit {}, idle timeout {} ms, arena chunk {}, client '{}'",
        o.kernels->name(), FormatBytes(o.memory_limit_bytes), o.idle_timeout.count(),
        FormatBytes(o.arena_chunk_bytes), Printable(o.client_name, 128));
    LogWithFields(
        spdlog::level::info,
        {.request_id = call.request_id, .rpc = "CreateSession", .session_serial = o.serial},
        fmt::format("request {} session s{} {}", call.request_id, o.serial, created),
        "session " + created);
  });
}

OneModelService::Unary* OneModelService::KeepAlive(Context* ctx,
                                                   const v1::KeepAliveRequest* request,
                                                   v1::KeepAliveReply* reply) {
  return Inline(Method::kKeepAlive, ctx, [&](Call& call) {
    std::shared_ptr<Session> s = SessionOf(call, request->session_id());
    s->Touch();
    reply->set_server_instance_id(instance_id_);
    reply->set_idle_timeout_ms(s->options().idle_timeout.count());
  });
}

OneModelService::Unary* OneModelService::CloseSession(Context* ctx,
                                                      const v1::CloseSessionRequest* request,
                                                      v1::CloseSessionReply* reply) {
  Unary* reactor = NewUnaryReactor();
  Call call{Method::kCloseSession, ctx};
  try {
    Begin(call);
    std::shared_ptr<Session> s = SessionOf(call, request->session_id());
    sessions_.Close(s->id(), [this, reactor, reply, call](int64_t buffers, int64_t bytes) {
      reply->set_released_buffers(buffers);
      reply->set_released_bytes(bytes);
      End(call, grpc::Status::OK);
      reactor->Finish(grpc::Status::OK);
    });
  } catch (...) {
    const grpc::Status status = CurrentExceptionStatus();
    End(call, status);
    reactor->Finish(status);
  }
  return reactor;
}

OneModelService::Unary* OneModelService::PutTensor(Context* ctx,
                                                   const v1::PutTensorRequest* request,
                                                   v1::TensorInfo* reply) {
  const auto cost = [=](Session&) { return TensorProtoCost(request->tensor()); };
  return OnSession(Method::kPutTensor, ctx, *request, cost, [=](Session& s) {
    const Placement placement = PlacementOf(request->placement(), Placement::kPool);
    Tensor value = [&] {
      const PhaseTimer timer(Phase::kDecode);
      return DecodeTensor(request->tensor(), UploadAllocator(s, placement, request->target()));
    }();
    StoreTensor(s, value, placement, request->requires_grad(), request->target(), reply);
  });
}

OneModelService::Unary* OneModelService::GetTensor(Context* ctx,
                                                   const v1::GetTensorRequest* request,
                                                   onnx::TensorProto* reply) {
  return OnSession(
      Method::kGetTensor, ctx, *request,
      [=](Session& s) { return HandleCost(s, request->handle()); },
      [=, this](const std::shared_ptr<Session>& s, UnaryReactor& reactor) {
        const Tensor& t = s->handles().Find(request->handle()).tensor;
        const int64_t bytes = t.ElementCount() * ElementSize(t.dtype());
        if (bytes > max_payload_bytes()) {
          throw ResourceExhausted("tensor '" + request->handle() + "' holds " +
                                  std::to_string(bytes) +
                                  " bytes, more than fits in one message of at most " +
                                  std::to_string(config_.max_message_bytes) +
                                  " bytes (--max-message-bytes); fetch it with DownloadTensor");
        }
        // The reply's values and gRPC's serialized copy stay until the client has read them.
        try {
          reactor.Hold(ReplyCharge(s, 2 * bytes));
        } catch (const MemoryLimitException& e) {
          throw ResourceExhausted("the reply to GetTensor of '" + request->handle() + "' holds " +
                                  FormatBytes(bytes) + " twice until the client reads it (values " +
                                  "and gRPC's copy), which does not fit: " + e.what() +
                                  "; fetch it with DownloadTensor, which streams it in chunks");
        }
        const PhaseTimer timer(Phase::kEncode);
        EncodeTensor(t, s->ledger(), reply);
        reply->set_name(request->handle());
      });
}

OneModelService::Unary* OneModelService::DescribeTensor(Context* ctx,
                                                        const v1::DescribeTensorRequest* request,
                                                        v1::TensorInfo* reply) {
  return OnSession(Method::kDescribeTensor, ctx, *request, Free, [=](Session& s) {
    FillTensorInfo(request->handle(), s.handles().Find(request->handle()), reply);
  });
}

OneModelService::Unary* OneModelService::ReleaseTensors(Context* ctx,
                                                        const v1::ReleaseTensorsRequest* request,
                                                        v1::ReleaseTensorsReply* reply) {
  return OnSession(Method::kReleaseTensors, ctx, *request, Free,
                   [=](Session& s) { reply->set_released(ReleaseHandles(s, request->handles())); });
}

OneModelService::Unary* OneModelService::Run(Context* ctx, const v1::RunRequest* request,
                                             v1::RunReply* reply) {
  const auto cost = [=](Session& s) { return RunCost(s, *request); };
  return OnSession(Method::kRun, ctx, *request, cost, [=, this](Session& s) {
    ExecuteRun(s, *request, config_.max_run_operations, *ctx, reply);
  });
}

OneModelService::Unary* OneModelService::Backward(Context* ctx, const v1::BackwardRequest* request,
                                                  v1::BackwardReply* reply) {
  // The graph behind the root is not sized here: backward always runs on a worker.
  const auto cost = [](Session&) { return kNotInline; };
  return OnSession(Method::kBackward, ctx, *request, cost,
                   [=](Session& s) { ExecuteBackward(s, *request, reply); });
}

OneModelService::Unary* OneModelService::ResetArena(Context* ctx,
                                                    const v1::ResetArenaRequest* request,
                                                    v1::ResetArenaReply* reply) {
  return OnSession(Method::kResetArena, ctx, *request, Free, [=](Session& s) {
    if (request->keep_bytes() < 0) {
      throw InvalidArgument("keep_bytes must be at least 0 (the arena chunk bytes to keep); got " +
                            std::to_string(request->keep_bytes()));
    }
    reply->set_stale_handles(s.ResetArena(request->trim(), request->keep_bytes()));
    FillArenaStats(s.arena().Stats(), reply->mutable_arena());
  });
}

void OneModelService::FillServerStats(const Session* session, v1::Stats* stats) const {
  FillStats(sessions_.Snapshot(), rpc_stats_, stats);
  stats->set_server_instance_id(instance_id_);
  if (!session) return;
  const SessionSnapshot snap = session->Snapshot();
  v1::SessionStats* out = stats->mutable_session();
  out->set_session_id(session->id());
  out->set_kernel_variant(snap.kernel_variant);
  FillArenaStats(snap.arena, out->mutable_arena());
  FillConvCacheStats(snap.conv_cache, out->mutable_conv_cache());
  out->set_handles(snap.handles);
  out->set_pool_buffers(snap.pool_buffers);
  out->set_pool_bytes(snap.pool_bytes);
  out->set_memory_limit_bytes(snap.memory_limit_bytes);
  out->set_requests(snap.requests);
}

OneModelService::Unary* OneModelService::GetStats(Context* ctx, const v1::StatsRequest* request,
                                                  v1::Stats* reply) {
  return Inline(Method::kGetStats, ctx, [&](Call& call) {
    FillServerStats(OptionalSessionOf(call, request->session_id()).get(), reply);
  });
}

grpc::ServerReadReactor<v1::UploadTensorRequest>* OneModelService::UploadTensor(
    Context* ctx, v1::TensorInfo* reply) {
  return new UploadReactor(*this, ctx, reply);
}

grpc::ServerWriteReactor<v1::DownloadTensorReply>* OneModelService::DownloadTensor(
    Context* ctx, const v1::DownloadTensorRequest* request) {
  return new DownloadReactor(*this, ctx, request);
}

void OneModelService::AddWatch(WatchStatsReactor* watch, const Session* session) {
  std::lock_guard guard(calls_mutex_);
  if (std::cmp_greater_equal(watches_.size(), config_.max_watches)) {
    throw ResourceExhausted(std::to_string(watches_.size()) +
                            " WatchStats streams are open, the server's limit (--max-watches); "
                            "end one, or poll GetStats");
  }
  if (session) {
    const auto same = std::count_if(watches_.begin(), watches_.end(),
                                    [&](const auto& w) { return w.second == session; });
    if (same >= config_.max_watches_per_session) {
      throw ResourceExhausted(
          std::to_string(same) + " WatchStats streams of session s" +
          std::to_string(session->serial()) +
          " are open, the limit for one session (--max-watches-per-session); end one first");
    }
  }
  watches_.emplace(watch, session);
}

void OneModelService::RemoveWatch(WatchStatsReactor* watch) {
  std::lock_guard guard(calls_mutex_);
  watches_.erase(watch);
}

bool OneModelService::draining() const {
  std::lock_guard guard(calls_mutex_);
  return draining_;
}

void OneModelService::StartDrain() {
  std::lock_guard guard(calls_mutex_);
  draining_ = true;
  for (const auto& entry : watches_) entry.first->End();
}

bool OneModelService::WaitIdle(std::chrono::system_clock::time_point deadline) {
  std::unique_lock lock(calls_mutex_);
  return idle_.wait_until(lock, deadline, [&] { return active_calls_ == 0; });
}

bool OneModelService::WaitDrain(std::chrono::system_clock::time_point deadline) {
  std::unique_lock lock(calls_mutex_);
  idle_.wait_until(lock, deadline, [&] { return active_calls_ == 0 || drain_cut_short_; });
  return active_calls_ == 0;
}

void OneModelService::CutDrainShort() {
  std::lock_guard guard(calls_mutex_);
  drain_cut_short_ = true;
  idle_.notify_all();
}

void OneModelService::CancelCalls() {
  std::vector<std::function<void()>> stops;
  {
    std::lock_guard guard(calls_mutex_);
    for (CancelToken* token : tokens_) {
      token->Cancel(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
    }
    for (const auto& entry : transfers_) stops.push_back(entry.second);
  }
  // Outside the lock: a transfer takes it under its own (Begin), and a stop takes that one.
  for (const std::function<void()>& stop : stops) stop();
}

void OneModelService::AddTransfer(const void* transfer, std::function<void()> stop) {
  std::lock_guard guard(calls_mutex_);
  transfers_.emplace(transfer, std::move(stop));
}

void OneModelService::RemoveTransfer(const void* transfer) {
  std::lock_guard guard(calls_mutex_);
  transfers_.erase(transfer);
}

grpc::ServerWriteReactor<v1::Stats>* OneModelService::WatchStats(
    Context* ctx, const v1::WatchStatsRequest* request) {
  return new WatchStatsReactor(*this, ctx, request);
}

OneModelService::Unary* OneModelService::ListOperations(Context* ctx,
                                                        const v1::ListOperationsRequest* request,
                                                        v1::ListOperationsReply* reply) {
  return Inline(Method::kListOperations, ctx,
                [&](Call&) { server::ListOperations(request->name(), reply); });
}

}  // namespace onemodel::server
