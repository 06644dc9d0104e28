// The streaming RPCs: UploadTensor and DownloadTensor move a tensor of any size (up to
// 2^31-1 bytes) in chunks; WatchStats pushes statistics at an interval.
//
// Transfers hold their session's strand from the header to the last chunk, so nothing else of
// that session (a release, an arena reset, the session's close) can touch the tensor while
// its bytes move; no thread waits meanwhile: chunks are copied as gRPC delivers or accepts
// them. A transfer that fails or is cancelled frees what it allocated. A transfer's request
// (an upload's header) is charged to its session like a unary request's, and so is its wait
// while the session is busy (RequestCharge). A client that keeps a transfer waiting (sends or
// reads nothing) for --stream-idle-timeout gets DEADLINE_EXCEEDED,
// which frees the transfer's memory and lets its session's strand go; so does one that moves
// less than --stream-min-bytes-per-second over --stream-idle-timeout of waiting on it (a
// trickle). An upload reserves its announced size at its header, within
// --max-upload-bytes-in-flight for all uploads at once. A download copies a view
// chunk by chunk and charges its two chunks in flight to the session until gRPC is done with
// it. When the drain time after SIGTERM runs out, a transfer still waiting on its client ends
// UNAVAILABLE the same way, so its session can close. WatchStats streams are capped per server
// and per session (--max-watches*).
//
//   return new UploadReactor(service, ctx, reply);   // gRPC deletes it when done
#pragma once

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "server/rpc/service.h"
#include "server/sessions/reply_charge.h"
#include "server/sessions/request_charge.h"

namespace onemodel::server {

// Notices a transfer whose client stopped or trickles: the transfer reports each wait on its
// client (a read or a write in flight) and each completion with the bytes it moved; when one
// wait lasts `timeout`, or the client moved less than `min_bytes_per_second` over a window of
// `timeout` spent waiting on it (0: no minimum), `on_stall` runs, once, on a gRPC thread, and
// reason() says which. Time the transfer spends on its own work does not count. The
// transfer's own callbacks and `on_stall` all run under Lock(), so they never overlap. The
// alarm holds only a weak reference: a transfer may be deleted once it called Stop(), whether
// or not the alarm has fired.
class StallWatch {
  struct State;

 public:
  StallWatch(std::chrono::milliseconds timeout, int64_t min_bytes_per_second,
             std::function<void()> on_stall);
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

  // Holds the lock around one step of the transfer, and the lock's own memory with it: a step
  // that finishes the transfer may see gRPC delete the transfer (OnDone, on another thread)
  // before the step returns, so the lock must not live in the transfer alone.
  class Guard {
   public:
    explicit Guard(std::shared_ptr<State> state);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    std::shared_ptr<State> state_;
  };
  // The lock around every step of the transfer; on_stall runs with it held.
  [[nodiscard]] Guard Lock() const { return Guard(state_); }
  // Under Lock(): the transfer now waits on its client (the first call arms the watch).
  void Waiting();
  // Under Lock(): the client did its part (a chunk of `bytes` arrived or was accepted).
  void Moved(int64_t bytes);
  // Under Lock(): the transfer is over; on_stall never runs after this.
  void Stop();
  // Under Lock(), once on_stall ran: "nothing for 2 s (--stream-idle-timeout)" or "only 40
  // bytes in 2 s, less than --stream-min-bytes-per-second (1 KiB/s)", for messages.
  const std::string& reason() const { return state_->reason; }
  // What stops the transfer at the drain's end (OneModelService::CancelCalls): from any thread,
  // even once the transfer is gone, without waiting on it. on_stall then runs, with
  // interrupted() true, as soon as the transfer waits on its client (at once if it does now).
  std::function<void()> Interrupter() const;
  // Under Lock(): whether on_stall ran for the Interrupter rather than for a stall.
  bool interrupted() const { return state_->interrupted; }

 private:
  using Clock = std::chrono::steady_clock;
  struct State {
    std::mutex mutex;
    std::chrono::milliseconds timeout;
    int64_t min_bytes_per_second = 0;
    std::function<void()> on_stall;  // empty once stopped or fired
    bool waiting = false;
    Clock::time_point since;          // when the current wait began
    Clock::time_point counted_from;   // the current wait counts in the window from here
    Clock::duration window_waited{};  // the window's earlier waits
    int64_t window_bytes = 0;         // bytes moved in the window
    bool interrupted = false;         // the Interrupter ran: stop at the next wait
    std::string reason;
    std::unique_ptr<grpc::Alarm> alarm;
  };
  // Under the lock: the reason to stop the transfer now, or empty (then starts a new rate
  // window when the current one is full).
  static std::string Check(State& s, Clock::time_point now);
  // Sets a new alarm at `at` (replacing the one that may be calling this) that checks `state`.
  static void Arm(const std::shared_ptr<State>& state, Clock::time_point at);

  std::shared_ptr<State> state_;
};

class UploadReactor final : public grpc::ServerReadReactor<v1::UploadTensorRequest> {
 public:
  UploadReactor(OneModelService& service, grpc::CallbackServerContext* ctx, v1::TensorInfo* reply);
  void OnReadDone(bool ok) override;
  void OnDone() override {
    service_.RemoveTransfer(this);
    service_.Done();
    delete this;
  }

 private:
  // The header arrived: find the session, validate, allocate (on the strand).
  void Start();
  // Takes `bytes` from --max-upload-bytes-in-flight until Finish(), or throws RpcError
  // RESOURCE_EXHAUSTED naming the flag.
  void Reserve(int64_t bytes);
  // Copies one data chunk into the tensor.
  void Append(const std::string& data);
  // The stream ended: keep the tensor (on the strand, which this upload holds).
  void Complete();
  // Frees what was allocated, lets the strand go and finishes with `status`.
  void Fail(const grpc::Status& status);
  void Finish(const grpc::Status& status);
  // Asks gRPC for the next message and starts waiting on the client for it.
  void ReadNext();
  // The client sent nothing for the stall timeout, or the drain ran out: fails the upload.
  void OnStall();

  OneModelService& service_;
  OneModelService::Call call_;
  StallWatch watch_;  // guards every step of the upload
  bool finished_ = false;
  v1::TensorInfo* reply_;
  v1::UploadTensorRequest message_;
  v1::UploadHeader header_;
  std::shared_ptr<Session> session_;
  RequestCharge header_charge_;  // header_ (and its wait on a busy session), until deleted
  Strand::Done release_strand_;
  Placement placement_ = Placement::kPool;
  int64_t reserved_ = 0;  // bytes of --max-upload-bytes-in-flight this upload holds
  Tensor tensor_;
  std::byte* destination_ = nullptr;  // tensor_'s bytes, seen by nobody else until Complete()
  int64_t received_ = 0;
  int64_t total_ = 0;
};

class DownloadReactor final : public grpc::ServerWriteReactor<v1::DownloadTensorReply> {
 public:
  DownloadReactor(OneModelService& service, grpc::CallbackServerContext* ctx,
                  const v1::DownloadTensorRequest* request);
  void OnWriteDone(bool ok) override;
  void OnDone() override {
    service_.RemoveTransfer(this);
    service_.Done();
    delete this;
  }

 private:
  // On the strand: find the tensor, charge the chunks in flight, write the header.
  void Start(const v1::DownloadTensorRequest& request);
  // Writes the next chunk, or finishes after the last.
  void WriteNext();
  // Sends message_ and starts waiting on the client to accept it.
  void Write();
  void Finish(const grpc::Status& status);
  // The client accepted nothing for the stall timeout, or the drain ran out: fails the
  // download.
  void OnStall();

  OneModelService& service_;
  OneModelService::Call call_;
  StallWatch watch_;  // guards every step of the download
  bool finished_ = false;
  std::shared_ptr<Session> session_;
  RequestCharge request_charge_;  // the request (and its wait on a busy session), until deleted
  Strand::Done release_strand_;
  ReplyCharge in_flight_;   // the chunks waiting on the client; refunded when deleted
  Tensor source_;           // the tensor (or view) whose values are sent in row-major order
  bool temporary_ = false;  // source_ is an unblocked copy this download must free
  int64_t sent_ = 0;
  int64_t total_ = 0;
  int64_t chunk_bytes_ = 0;
  v1::DownloadTensorReply message_;
};

class WatchStatsReactor final : public grpc::ServerWriteReactor<v1::Stats> {
 public:
  WatchStatsReactor(OneModelService& service, grpc::CallbackServerContext* ctx,
                    const v1::WatchStatsRequest* request);
  void OnWriteDone(bool ok) override;
  void OnCancel() override { alarm_.Cancel(); }
  void OnDone() override;
  // Ends the watch at its next step (server shutdown); called under the service's lock.
  void End() { alarm_.Cancel(); }

 private:
  void Tick();
  void Finish(const grpc::Status& status);

  OneModelService& service_;
  OneModelService::Call call_;
  std::shared_ptr<Session> session_;
  std::chrono::milliseconds interval_{1000};
  v1::Stats stats_;
  grpc::Alarm alarm_;
};

}  // namespace onemodel::server
