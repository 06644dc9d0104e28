#include "server/rpc/stream_reactors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>

#include "core/common/exceptions.h"
#include "core/memory/memory_budget.h"
#include "server/codec/tensor_codec.h"
#include "server/rpc/rpc_error.h"
#include "server/rpc/session_ops.h"
#include "server/rpc/status_mapping.h"

namespace onemodel::server {
namespace {

constexpr int64_t kDefaultChunkBytes = int64_t{1} << 20;
// The longest WatchStats interval_ms: a day. A deadline far past that overflows the alarm's
// clock (nanoseconds from 1970: about 292 years) and comes out in the past, so the watch
// would send as fast as the client reads.
constexpr int64_t kMaxWatchIntervalMs = int64_t{24} * 60 * 60 * 1000;

// --stream-idle-timeout.
std::chrono::milliseconds StallTimeout(const OneModelService& service) {
  return std::chrono::ceil<std::chrono::milliseconds>(
      std::chrono::duration<double>(service.config().stream_idle_timeout_seconds));
}

// "1.5 s": a duration, for messages.
std::string Seconds(std::chrono::steady_clock::duration d) {
  const double seconds = std::chrono::duration<double>(d).count();
  char text[32];
  std::snprintf(text, sizeof text, seconds < 100 ? "%.3g s" : "%.0f s", seconds);
  return text;
}

// A transfer's end: counts the request and lets the next task of the session's strand run
// (when the transfer got as far as holding it).
void LetGo(Session* session, Strand::Done& release_strand) {
  if (!release_strand) return;
  if (!session->closed()) session->FinishRequest();
  std::exchange(release_strand, nullptr)();
}

}  // namespace

// --- StallWatch ---

StallWatch::StallWatch(std::chrono::milliseconds timeout, int64_t min_bytes_per_second,
                       std::function<void()> on_stall)
    : state_(std::make_shared<State>()) {
  state_->timeout = timeout;
  state_->min_bytes_per_second = min_bytes_per_second;
  state_->on_stall = std::move(on_stall);
}

StallWatch::Guard::Guard(std::shared_ptr<State> state) : state_(std::move(state)) {
  state_->mutex.lock();
}

StallWatch::Guard::~Guard() { state_->mutex.unlock(); }

void StallWatch::Waiting() {
  state_->waiting = true;
  state_->since = state_->counted_from = Clock::now();
  if (state_->interrupted) {
    Arm(state_, state_->since);  // stops it from a gRPC thread, not inside this step
  } else if (!state_->alarm) {
    Arm(state_, state_->since + state_->timeout);
  }
}

void StallWatch::Moved(int64_t bytes) {
  if (state_->waiting) state_->window_waited += Clock::now() - state_->counted_from;
  state_->waiting = false;
  state_->window_bytes += bytes;
}

void StallWatch::Stop() {
  state_->on_stall = nullptr;
  if (state_->alarm) state_->alarm->Cancel();
}

std::function<void()> StallWatch::Interrupter() const {
  return [weak = std::weak_ptr<State>(state_)] {
    const std::shared_ptr<State> s = weak.lock();
    if (!s) return;
    std::lock_guard guard(s->mutex);
    if (!s->on_stall || s->interrupted) return;  // over, or already told
    s->interrupted = true;
    if (s->waiting) Arm(s, Clock::now());
  };
}

std::string StallWatch::Check(State& s, Clock::time_point now) {
  if (!s.waiting) return {};  // the transfer is busy with its own work, or between waits
  if (s.interrupted) return "the drain time (--drain-seconds) ran out";
  if (now - s.since >= s.timeout) {
    return "nothing for " + Seconds(s.timeout) + " (--stream-idle-timeout)";
  }
  const Clock::duration window = s.window_waited + (now - s.counted_from);
  if (s.min_bytes_per_second <= 0 || window < s.timeout) return {};
  if (s.window_bytes == 0) return "nothing for " + Seconds(window) + " (--stream-idle-timeout)";
  const double seconds = std::chrono::duration<double>(window).count();
  if (static_cast<double>(s.window_bytes) < static_cast<double>(s.min_bytes_per_second) * seconds) {
    return "only " + std::to_string(s.window_bytes) + " bytes in " + Seconds(window) +
           ", less than --stream-min-bytes-per-second (" + FormatBytes(s.min_bytes_per_second) +
           "/s)";
  }
  s.window_waited = {};  // fast enough: the next window starts now
  s.window_bytes = 0;
  s.counted_from = now;
  return {};
}

void StallWatch::Arm(const std::shared_ptr<State>& state, Clock::time_point at) {
  const auto deadline =
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::system_clock::duration>(at - Clock::now());
  // Replacing the alarm whose callback runs now is safe: gRPC keeps it until the callback ends.
  state->alarm = std::make_unique<grpc::Alarm>();
  state->alarm->Set(deadline, [weak = std::weak_ptr<State>(state)](bool fired) {
    const std::shared_ptr<State> s = weak.lock();
    if (!s || !fired) return;  // the transfer is gone, or stopped
    std::lock_guard guard(s->mutex);
    if (!s->on_stall) return;
    const Clock::time_point now = Clock::now();
    if (std::string reason = Check(*s, now); !reason.empty()) {
      s->reason = std::move(reason);
      std::exchange(s->on_stall, nullptr)();
      return;
    }
    // Next: when the current wait reaches the timeout or the rate window fills, whichever
    // comes first; a transfer not waiting is looked at again a timeout later.
    Clock::time_point next = now + s->timeout;
    if (s->waiting) next = s->since + s->timeout;
    if (s->waiting && s->min_bytes_per_second > 0) {
      const Clock::duration window = s->window_waited + (now - s->counted_from);
      next = std::min(next, now + (s->timeout - window));
    }
    Arm(s, next);
  });
}

// --- UploadTensor ---

UploadReactor::UploadReactor(OneModelService& service, grpc::CallbackServerContext* ctx,
                             v1::TensorInfo* reply)
    : service_(service),
      call_{Method::kUploadTensor, ctx},
      watch_(StallTimeout(service), service.config().stream_min_bytes_per_second,
             [this] { OnStall(); }),
      reply_(reply) {
  service_.AddTransfer(this, watch_.Interrupter());
  const StallWatch::Guard guard = watch_.Lock();
  try {
    service_.Begin(call_);
  } catch (...) {
    Finish(CurrentExceptionStatus());
    return;
  }
  ReadNext();
}

void UploadReactor::OnReadDone(bool ok) {
  const StallWatch::Guard guard = watch_.Lock();
  if (finished_) return;  // the upload stalled and failed while this read was in flight
  watch_.Moved(ok ? static_cast<int64_t>(message_.data().size()) : 0);
  if (!ok) {  // the client finished sending, or the call broke
    if (call_.ctx->IsCancelled()) {
      Fail({grpc::StatusCode::CANCELLED, "the upload was cancelled; nothing was kept"});
    } else if (!session_) {
      Fail({grpc::StatusCode::INVALID_ARGUMENT,
            "the upload ended before its header: send an UploadHeader, then the data"});
    } else if (received_ != total_) {
      Fail({grpc::StatusCode::INVALID_ARGUMENT,
            "the upload ended after " + std::to_string(received_) + " of the " +
                std::to_string(total_) + " bytes its header announced; nothing was kept"});
    } else {
      Complete();
    }
    return;
  }
  if (!session_) {
    if (message_.part_case() != v1::UploadTensorRequest::kHeader) {
      Fail({grpc::StatusCode::INVALID_ARGUMENT,
            "the first message of an upload must be its header (UploadHeader)"});
      return;
    }
    header_ = std::move(*message_.mutable_header());
    message_.Clear();  // and whatever else the first message carried
    try {
      session_ = service_.SessionOf(call_, header_.session_id());
      header_charge_ = RequestCharge(session_, header_);
    } catch (...) {
      Fail(CurrentExceptionStatus());
      return;
    }
    session_->strand().PostAsync([this](Strand::Done done) {
      const StallWatch::Guard guard = watch_.Lock();
      release_strand_ = std::move(done);
      Start();
    });
    return;
  }
  if (message_.part_case() != v1::UploadTensorRequest::kData) {
    Fail({grpc::StatusCode::INVALID_ARGUMENT,
          "an upload sends one header, then only data messages; got a second header"});
    return;
  }
  Append(message_.data());
}

void UploadReactor::Start() {
  try {
    OneModelService::CheckOpen(*session_);
    header_charge_.Start();
    const TensorHeader h = DecodeHeader(
        header_.data_type(), std::span<const int64_t>(header_.dims().data(), header_.dims_size()));
    placement_ = PlacementOf(header_.placement(), Placement::kPool);
    if (!header_.target().empty()) session_->handles().Find(header_.target());
    // Reserved before the buffer is rented, so a rented upload buffer always has its
    // reservation; a tensor larger than the session's whole limit gets the session's refusal
    // (it says more) from the allocation first.
    const bool fits_session = h.bytes <= session_->budget().limit();
    if (fits_session) Reserve(h.bytes);
    tensor_ =
        Tensor::Empty(h.shape, h.dtype, UploadAllocator(*session_, placement_, header_.target()));
    if (!fits_session) Reserve(h.bytes);
    total_ = h.bytes;
    destination_ = tensor_.MutableRawData().data();  // one write, as PutTensor's decode
  } catch (...) {
    Fail(CurrentExceptionStatus());
    return;
  }
  ReadNext();
}

void UploadReactor::Reserve(int64_t bytes) {
  MemoryBudget& uploads = service_.sessions().upload_budget();
  if (bytes > uploads.limit()) {  // no retry can help
    throw ResourceExhausted("this upload announces " + FormatBytes(bytes) + ", more than the " +
                            FormatBytes(uploads.limit()) +
                            " that --max-upload-bytes-in-flight allows all uploads in flight "
                            "together (by default half of --memory-limit), so this server can "
                            "never take it; send a smaller tensor (for example in slices) or "
                            "restart the server with a larger limit");
  }
  try {
    uploads.Charge(bytes);
  } catch (const MemoryLimitException&) {
    throw ResourceExhausted("the uploads in flight already reserve " + FormatBytes(uploads.used()) +
                            " of the " + FormatBytes(uploads.limit()) +
                            " that --max-upload-bytes-in-flight allows, and this one announces " +
                            FormatBytes(bytes) + "; retry when they have finished");
  }
  reserved_ = bytes;
}

void UploadReactor::Append(const std::string& data) {
  const int64_t n = static_cast<int64_t>(data.size());
  if (n > total_ - received_) {
    Fail({grpc::StatusCode::INVALID_ARGUMENT, "the upload sent more than the " +
                                                  std::to_string(total_) +
                                                  " bytes its header announced; nothing was kept"});
    return;
  }
  std::memcpy(destination_ + received_, data.data(), static_cast<size_t>(n));
  received_ += n;
  ReadNext();
}

void UploadReactor::ReadNext() {
  watch_.Waiting();
  StartRead(&message_);
}

void UploadReactor::OnStall() {
  const std::string progress =
      session_ ? "after " + std::to_string(received_) + " of " + std::to_string(total_) + " bytes"
               : "before its header";
  if (watch_.interrupted()) {
    Fail({grpc::StatusCode::UNAVAILABLE,
          "the server is shutting down and stopped this upload " + progress + " when " +
              watch_.reason() + "; nothing was kept; upload it again to another instance or " +
              "after it restarts"});
    return;
  }
  Fail({grpc::StatusCode::DEADLINE_EXCEEDED, "the upload received " + watch_.reason() + " " +
                                                 progress +
                                                 "; it was cancelled and nothing was kept"});
}

void UploadReactor::Complete() {
  try {
    if (tensor_.dtype() == DType::kBool) {
      CheckBoolBytes({destination_, static_cast<size_t>(total_)}, "uploaded data");
    }
    // StoreTensor owns the tensor now (and frees it on failure).
    StoreTensor(*session_, std::exchange(tensor_, Tensor()), placement_, header_.requires_grad(),
                header_.target(), reply_);
  } catch (...) {
    Fail(CurrentExceptionStatus());
    return;
  }
  Finish(grpc::Status::OK);
}

void UploadReactor::Fail(const grpc::Status& status) {
  if (session_) DisposeIfOwned(*session_, std::exchange(tensor_, Tensor()));
  Finish(status);
}

void UploadReactor::Finish(const grpc::Status& status) {
  finished_ = true;
  watch_.Stop();
  service_.sessions().upload_budget().Refund(std::exchange(reserved_, 0));
  LetGo(session_.get(), release_strand_);
  service_.End(call_, status);
  grpc::ServerReadReactor<v1::UploadTensorRequest>::Finish(status);
}

// --- DownloadTensor ---

DownloadReactor::DownloadReactor(OneModelService& service, grpc::CallbackServerContext* ctx,
                                 const v1::DownloadTensorRequest* request)
    : service_(service),
      call_{Method::kDownloadTensor, ctx},
      watch_(StallTimeout(service), service.config().stream_min_bytes_per_second,
             [this] { OnStall(); }) {
  service_.AddTransfer(this, watch_.Interrupter());
  const StallWatch::Guard guard = watch_.Lock();
  try {
    service_.Begin(call_);
    session_ = service_.SessionOf(call_, request->session_id());
    request_charge_ = RequestCharge(session_, *request);
  } catch (...) {
    Finish(CurrentExceptionStatus());
    return;
  }
  session_->strand().PostAsync([this, request](Strand::Done done) {
    const StallWatch::Guard guard = watch_.Lock();
    call_.work_start = std::chrono::steady_clock::now();
    release_strand_ = std::move(done);
    Start(*request);
  });
}

void DownloadReactor::Start(const v1::DownloadTensorRequest& request) {
  try {
    OneModelService::CheckOpen(*session_);
    CheckLive(*call_.ctx, "before it started");
    request_charge_.Start();
    const Tensor& t = session_->handles().Find(request.handle()).tensor;
    if (request.chunk_bytes() < 0) {
      throw InvalidArgument("chunk_bytes must be positive (0 means 1 MiB)");
    }
    const int64_t largest = service_.max_payload_bytes();
    const int size = ElementSize(t.dtype());
    chunk_bytes_ =
        std::min(request.chunk_bytes() ? request.chunk_bytes() : kDefaultChunkBytes, largest);
    chunk_bytes_ = std::max<int64_t>(size, chunk_bytes_ / size * size);  // whole elements
    total_ = t.ElementCount() * size;
    // One chunk and gRPC's copy of it wait on the client: charged until the download is done.
    try {
      in_flight_ = ReplyCharge(session_, 2 * std::min(chunk_bytes_, total_));
    } catch (const MemoryLimitException& e) {
      throw ResourceExhausted("a download holds two chunks of " + FormatBytes(chunk_bytes_) +
                              " while the client reads, which does not fit: " + e.what() +
                              "; or ask for smaller chunk_bytes");
    }
    // A view is copied chunk by chunk as it is sent (an Expand view of 4 bytes may span
    // 2 GiB); only a blocked tensor is unblocked first, into memory the session is charged.
    if (t.block_size()) {
      source_ = t.ToLayout(Layout::kNchw, session_->ledger());
      temporary_ = true;
    } else {
      source_ = t;
    }
    v1::DownloadHeader* header = message_.mutable_header();
    header->set_data_type(static_cast<int32_t>(t.dtype()));
    for (int32_t extent : t.shape().extents()) header->add_dims(extent);
    header->set_total_bytes(total_);
    header->set_name(request.handle());
  } catch (...) {
    Finish(CurrentExceptionStatus());
    return;
  }
  Write();
}

void DownloadReactor::OnWriteDone(bool ok) {
  const StallWatch::Guard guard = watch_.Lock();
  if (finished_) return;  // the download stalled and failed while this write was in flight
  watch_.Moved(ok ? static_cast<int64_t>(message_.data().size()) : 0);
  if (!ok) {
    Finish({grpc::StatusCode::CANCELLED, "the client stopped receiving the download"});
    return;
  }
  WriteNext();
}

void DownloadReactor::WriteNext() {
  if (sent_ == total_) {
    Finish(grpc::Status::OK);
    return;
  }
  const int64_t n = std::min(chunk_bytes_, total_ - sent_);
  std::string* data = message_.mutable_data();
  data->resize(static_cast<size_t>(n));
  try {
    source_.CopyLogicalBytes(sent_, std::as_writable_bytes(std::span(*data)));
  } catch (...) {
    Finish(CurrentExceptionStatus());
    return;
  }
  sent_ += n;
  Write();
}

void DownloadReactor::Write() {
  watch_.Waiting();
  StartWrite(&message_);
}

void DownloadReactor::OnStall() {
  const std::string progress =
      "after " + std::to_string(sent_) + " of " + std::to_string(total_) + " bytes were sent";
  if (watch_.interrupted()) {
    Finish({grpc::StatusCode::UNAVAILABLE,
            "the server is shutting down and stopped this download " + progress + " when " +
                watch_.reason() + "; download it again after it restarts"});
    return;
  }
  Finish({grpc::StatusCode::DEADLINE_EXCEEDED, "the client read " + watch_.reason() +
                                                   " of the download " + progress +
                                                   "; it was cancelled"});
}

void DownloadReactor::Finish(const grpc::Status& status) {
  finished_ = true;
  watch_.Stop();
  if (temporary_) session_->ledger().ReleaseIfOwned(source_.buffer(), source_.generation());
  temporary_ = false;
  LetGo(session_.get(), release_strand_);
  service_.End(call_, status);
  grpc::ServerWriteReactor<v1::DownloadTensorReply>::Finish(status);
}

// --- WatchStats ---

WatchStatsReactor::WatchStatsReactor(OneModelService& service, grpc::CallbackServerContext* ctx,
                                     const v1::WatchStatsRequest* request)
    : service_(service), call_{Method::kWatchStats, ctx} {
  try {
    service_.Begin(call_);
    session_ = service_.OptionalSessionOf(call_, request->session_id());
    const int64_t shortest = service_.config().min_watch_interval_ms;
    if (request->interval_ms() != 0 && request->interval_ms() < shortest) {
      throw InvalidArgument("interval_ms must be at least " + std::to_string(shortest) +
                            " (--min-watch-interval-ms; 0 means 1000); got " +
                            std::to_string(request->interval_ms()));
    }
    if (request->interval_ms() > kMaxWatchIntervalMs) {
      throw InvalidArgument("interval_ms must be at most " + std::to_string(kMaxWatchIntervalMs) +
                            " (a day; 0 means 1000); got " +
                            std::to_string(request->interval_ms()));
    }
    if (request->interval_ms()) interval_ = std::chrono::milliseconds(request->interval_ms());
    service_.AddWatch(this, session_.get());
  } catch (...) {
    Finish(CurrentExceptionStatus());
    return;
  }
  Tick();
}

void WatchStatsReactor::OnDone() {
  service_.RemoveWatch(this);
  service_.Done();
  delete this;
}

void WatchStatsReactor::Tick() {
  if (session_ && session_->closed()) {
    Finish({grpc::StatusCode::NOT_FOUND, "session s" + std::to_string(session_->serial()) +
                                             " not found: it was closed or expired; the watch "
                                             "ends"});
    return;
  }
  stats_.Clear();
  service_.FillServerStats(session_.get(), &stats_);
  StartWrite(&stats_);
}

void WatchStatsReactor::OnWriteDone(bool ok) {
  if (!ok || call_.ctx->IsCancelled() || service_.draining()) {
    Finish(grpc::Status::OK);  // the watcher went away or the server stops: a normal end
    return;
  }
  alarm_.Set(std::chrono::system_clock::now() + interval_, [this](bool fired) {
    if (fired) {
      Tick();
    } else {
      Finish(grpc::Status::OK);
    }
  });
}

void WatchStatsReactor::Finish(const grpc::Status& status) {
  service_.End(call_, status);
  grpc::ServerWriteReactor<v1::Stats>::Finish(status);
}

}  // namespace onemodel::server
