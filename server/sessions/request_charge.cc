#include "server/sessions/request_charge.h"

#include <string>
#include <utility>

#include "core/common/exceptions.h"
#include "core/memory/memory_budget.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {

RequestCharge::RequestCharge(std::shared_ptr<Session> session,
                             const google::protobuf::Message& request, Kind kind)
    : session_(std::move(session)),
      request_(&request),
      kind_(kind),
      message_bytes_(MessageBytes(request)) {
  const bool queued = session_->strand().busy();
  const int64_t waiting = queued ? kQueuedBytes : 0;
  try {
    session_->budget().ChargeWithoutReclaim(message_bytes_ + waiting);
  } catch (const MemoryLimitException& e) {
    if (queued) Refuse(request, message_bytes_, true, e.what());
    return;  // Start() charges it on the strand, where the arena's free chunks can go first
  }
  message_charged_ = message_bytes_;
  queued_charged_ = waiting;
}

void RequestCharge::Start() {
  if (!session_) return;
  session_->budget().Refund(std::exchange(queued_charged_, 0));
  const google::protobuf::Message* request = std::exchange(request_, nullptr);
  if (message_charged_ == message_bytes_ || kind_ == Kind::kFrees) return;
  try {
    session_->budget().Charge(message_bytes_);
  } catch (const MemoryLimitException& e) {
    Refuse(*request, message_bytes_, false, e.what());
  }
  message_charged_ = message_bytes_;
}

RequestCharge::~RequestCharge() {
  if (session_) session_->budget().Refund(message_charged_ + queued_charged_);
}

RequestCharge::RequestCharge(RequestCharge&& other) noexcept
    : session_(std::move(other.session_)),
      request_(std::exchange(other.request_, nullptr)),
      kind_(other.kind_),
      message_bytes_(std::exchange(other.message_bytes_, 0)),
      message_charged_(std::exchange(other.message_charged_, 0)),
      queued_charged_(std::exchange(other.queued_charged_, 0)) {}

RequestCharge& RequestCharge::operator=(RequestCharge&& other) noexcept {
  std::swap(session_, other.session_);
  std::swap(request_, other.request_);
  std::swap(kind_, other.kind_);
  std::swap(message_bytes_, other.message_bytes_);
  std::swap(message_charged_, other.message_charged_);
  std::swap(queued_charged_, other.queued_charged_);
  return *this;
}

int64_t RequestCharge::MessageBytes(const google::protobuf::Message& message) {
  return static_cast<int64_t>(message.SpaceUsedLong());
}

void RequestCharge::Refuse(const google::protobuf::Message& request, int64_t bytes, bool queued,
                           const char* limit) {
  const std::string what = request.GetDescriptor()->name();
  throw ResourceExhausted(
      "the " + what + " takes " + FormatBytes(bytes) + " of server memory once parsed (" +
      FormatBytes(static_cast<int64_t>(request.ByteSizeLong())) + " on the wire)" +
      (queued ? " and waits behind the session's other requests (" + std::to_string(kQueuedBytes) +
                    " B more)"
              : std::string()) +
      ", which does not fit: " + limit +
      "; send fewer, larger parts (each inline tensor, input or operation costs a few hundred "
      "bytes parsed, whatever its values), put large tensors with UploadTensor, " +
      (queued ? "send fewer requests at a time, " : "") +
      "or create the session with a larger memory_limit_bytes");
}

}  // namespace onemodel::server
