// ReplyCharge: the memory a reply holds until gRPC has sent it (its encoded values and gRPC's
// serialized copy), charged to the session's budget, and through it to the server's ceiling,
// from the encoding until gRPC is done with the call. A client that never reads its replies
// then pins at most what its session may hold.
//
//   ReplyCharge charge(session, 2 * bytes);   // throws MemoryLimitException: nothing charged
//   reactor->Hold(std::move(charge));         // refunded when the reactor is done
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "server/sessions/session.h"

namespace onemodel::server {

class ReplyCharge {
 public:
  ReplyCharge() = default;
  // Charges `bytes` to `session`'s budget, or throws MemoryLimitException and charges nothing.
  // Keeps the session (and so its budget) alive until the refund.
  ReplyCharge(std::shared_ptr<Session> session, int64_t bytes)
      : session_(std::move(session)), bytes_(bytes) {
    session_->budget().Charge(bytes_);
  }
  // Refunds what was charged.
  ~ReplyCharge() {
    if (session_) session_->budget().Refund(bytes_);
  }
  ReplyCharge(ReplyCharge&& other) noexcept
      : session_(std::move(other.session_)), bytes_(other.bytes_) {}
  ReplyCharge& operator=(ReplyCharge&& other) noexcept {
    std::swap(session_, other.session_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }

 private:
  std::shared_ptr<Session> session_;
  int64_t bytes_ = 0;
};

}  // namespace onemodel::server
