// OneModelService: the gRPC service of onemodeld (proto/onemodel/v1/onemodel.proto).
//
// Built on gRPC's callback API: handlers never block a gRPC thread on long work. Calls that
// touch a session run on its strand (one at a time per session, in parallel across sessions):
// on the worker pool, or at once on the gRPC thread when the session is idle and the work is
// small (inline_cost.h, --inline-max-bytes); Ping, CreateSession, GetStats and ListOperations
// answer at once. Every reply carries the server instance id in the `onemodel-instance`
// metadata; every call is counted in RpcStats and each failure is logged once with its request
// id.
//
//   OneModelService service(config, sessions, rpc_stats, instance_id, auth_token);
//   builder.RegisterService(&service);
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/cancellation.h"
#include "onemodel/v1/onemodel.grpc.pb.h"
#include "server/config.h"
#include "server/observability/rpc_stats.h"
#include "server/rpc/request_context.h"
#include "server/sessions/session_manager.h"

namespace onemodel::server {

// The RPCs of the OneModel service, one row each, in the order RpcStats numbers them (and
// GetStats and /metrics list them): X(Name) gives Method::kName and the name "Name" in
// MethodNames(). MethodListTest holds the rows to the proto's service, in its order.
#define ONEMODEL_FOR_EACH_METHOD(X)                                                         \
  X(Ping) X(CreateSession) X(KeepAlive) X(CloseSession) X(PutTensor) X(GetTensor)           \
  X(UploadTensor) X(DownloadTensor) X(DescribeTensor) X(ReleaseTensors) X(Run) X(Backward)  \
  X(ResetArena) X(GetStats) X(WatchStats) X(ListOperations)

#define ONEMODEL_METHOD_ENUMERATOR(Name) k##Name,
enum class Method { ONEMODEL_FOR_EACH_METHOD(ONEMODEL_METHOD_ENUMERATOR) };
#undef ONEMODEL_METHOD_ENUMERATOR
// Their names, indexed by Method.
std::vector<std::string> MethodNames();

class OneModelService final : public v1::OneModel::CallbackService {
 public:
  OneModelService(const ServerConfig& config, SessionManager& sessions, RpcStats& rpc_stats,
                  std::string instance_id, std::string auth_token);

  using Context = grpc::CallbackServerContext;
  using Unary = grpc::ServerUnaryReactor;

  Unary* Ping(Context* ctx, const v1::PingRequest* request, v1::PingReply* reply) override;
  Unary* CreateSession(Context* ctx, const v1::CreateSessionRequest* request,
                       v1::CreateSessionReply* reply) override;
  Unary* KeepAlive(Context* ctx, const v1::KeepAliveRequest* request,
                   v1::KeepAliveReply* reply) override;
  Unary* CloseSession(Context* ctx, const v1::CloseSessionRequest* request,
                      v1::CloseSessionReply* reply) override;
  Unary* PutTensor(Context* ctx, const v1::PutTensorRequest* request,
                   v1::TensorInfo* reply) override;
  Unary* GetTensor(Context* ctx, const v1::GetTensorRequest* request,
                   onnx::TensorProto* reply) override;
  grpc::ServerReadReactor<v1::UploadTensorRequest>* UploadTensor(Context* ctx,
                                                                 v1::TensorInfo* reply) override;
  grpc::ServerWriteReactor<v1::DownloadTensorReply>* DownloadTensor(
      Context* ctx, const v1::DownloadTensorRequest* request) override;
  Unary* DescribeTensor(Context* ctx, const v1::DescribeTensorRequest* request,
                        v1::TensorInfo* reply) override;
  Unary* ReleaseTensors(Context* ctx, const v1::ReleaseTensorsRequest* request,
                        v1::ReleaseTensorsReply* reply) override;
  Unary* Run(Context* ctx, const v1::RunRequest* request, v1::RunReply* reply) override;
  Unary* Backward(Context* ctx, const v1::BackwardRequest* request,
                  v1::BackwardReply* reply) override;
  Unary* ResetArena(Context* ctx, const v1::ResetArenaRequest* request,
                    v1::ResetArenaReply* reply) override;
  Unary* GetStats(Context* ctx, const v1::StatsRequest* request, v1::Stats* reply) override;
  grpc::ServerWriteReactor<v1::Stats>* WatchStats(Context* ctx,
                                                  const v1::WatchStatsRequest* request) override;
  Unary* ListOperations(Context* ctx, const v1::ListOperationsRequest* request,
                        v1::ListOperationsReply* reply) override;

  // Shared with the streaming reactors (stream_reactors.h).
  struct Call {
    Call(Method m, Context* c) : method(m), ctx(c) {}
    Method method;
    Context* ctx;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::string request_id;
    int64_t session_serial = 0;
    // When its work began on the session's strand, after the requests queued before it.
    std::optional<std::chrono::steady_clock::time_point> work_start;
    // Its decode and encode time, timed while its work runs (request_phases.h).
    RequestPhases phases;
    bool ran_inline = false;  // its work ran on the gRPC thread that received it
  };
  // Starts `call`: counts it in flight, reply metadata, request id, then refusal while
  // draining and authentication (throws RpcError). Every Begin() is paired with one End(),
  // when the call finishes, and one Done(), from its reactor's OnDone.
  void Begin(Call& call);
  // Counts a finished call, and logs it when it failed or was slow (--slow-request-ms).
  void End(const Call& call, const grpc::Status& status);
  // gRPC is done with a call (its reply and status have gone, or it broke): the drain stops
  // waiting for it. Until then a shutdown would cut off a reply still on its way.
  void Done();
  // The session the call names (throws RpcError NOT_FOUND / INVALID_ARGUMENT).
  std::shared_ptr<Session> SessionOf(Call& call, const std::string& field) const;
  // As SessionOf, or null when the call names no session (it is optional for statistics).
  std::shared_ptr<Session> OptionalSessionOf(Call& call, const std::string& field) const;
  // Throws RpcError NOT_FOUND when `session` was closed while the call waited on its strand.
  static void CheckOpen(const Session& session);
  // The most tensor bytes one message carries: the limit less room for the message's own
  // fields (dims, type, framing).
  int64_t max_payload_bytes() const { return config_.max_message_bytes - 1024; }
  // Fills `stats` (pool, counters, RPCs; the session's own part when `session` is set).
  void FillServerStats(const Session* session, v1::Stats* stats) const;

  // Shutdown, first step: new calls fail with UNAVAILABLE and every WatchStats stream ends.
  void StartDrain();
  // Waits until no call is in flight or `deadline` passes; true when none is left.
  bool WaitIdle(std::chrono::system_clock::time_point deadline);
  // As WaitIdle, but also returns (false) once CutDrainShort() was called.
  bool WaitDrain(std::chrono::system_clock::time_point deadline);
  // Makes WaitDrain return now (a second termination signal); any thread.
  void CutDrainShort();
  // Shutdown, after the drain: every unary call in flight or queued is asked to stop; its
  // kernels stop between blocks and it ends UNAVAILABLE. So does every transfer, once it
  // waits on its client (at once if it does now).
  void CancelCalls();
  // Calls begun over the service's life (what QuietHeapTrim watches for quiet).
  int64_t CallsBegun() const;
  // Transfers (stream_reactors.h) register from their start to their OnDone how CancelCalls()
  // stops them: `stop` must be callable from any thread, even once the transfer is gone.
  void AddTransfer(const void* transfer, std::function<void()> stop);
  void RemoveTransfer(const void* transfer);
  // WatchStats reactors register while they run, so StartDrain() can reach them. Throws
  // RpcError RESOURCE_EXHAUSTED when `watch` would pass --max-watches or, for `session`,
  // --max-watches-per-session.
  void AddWatch(class WatchStatsReactor* watch, const Session* session);
  void RemoveWatch(class WatchStatsReactor* watch);
  bool draining() const;

  const ServerConfig& config() const { return config_; }
  SessionManager& sessions() const { return sessions_; }

 private:
  // Runs `work(session)` on the strand of the session the call names, then finishes; a
  // `work(session_ptr, reactor)` may hold a ReplyCharge in the reactor. The session is the one
  // `request.session_id()` or the metadata names; `request` is charged to it until the work is
  // over, when its parts are freed (RequestCharge). The work runs on the calling (gRPC) thread
  // when the strand is idle and `cost(session)` (inline_cost.h), asked on the strand, is at
  // most --inline-max-bytes; otherwise on a worker.
  template <typename Request, typename Cost, typename Work>
  Unary* OnSession(Method method, Context* ctx, const Request& request, Cost cost, Work work);
  // A unary call's reactor (service.cc): calls Done() when gRPC is done with the call, and
  // holds the call's CancelToken, cancelled when the call is (client, deadline, drain).
  class UnaryReactor;
  UnaryReactor* NewUnaryReactor();
  // Runs `work()` on the calling thread, then finishes.
  template <typename Work>
  Unary* Inline(Method method, Context* ctx, Work work);

  const ServerConfig& config_;
  SessionManager& sessions_;
  RpcStats& rpc_stats_;
  CallObserver observer_;
  const std::string instance_id_;
  const std::string auth_token_;
  mutable std::mutex calls_mutex_;  // guards the seven below
  std::condition_variable idle_;
  int64_t active_calls_ = 0;
  int64_t calls_begun_ = 0;
  bool draining_ = false;
  bool drain_cut_short_ = false;
  std::unordered_map<WatchStatsReactor*, const Session*> watches_;  // with the session watched
  std::unordered_set<CancelToken*> tokens_;                         // of the unary reactors alive
  std::unordered_map<const void*, std::function<void()>> transfers_;  // with how to stop each
};

}  // namespace onemodel::server
