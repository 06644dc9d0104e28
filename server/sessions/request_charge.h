// RequestCharge: the memory a session request holds on the server from the moment the service
// has it until its work is over (the service then frees the parsed message, before the reply
// leaves: FreeRequest in service.cc), charged to the session's budget (and through it to the
// server's ceiling). That is its parsed message, whose size is not its wire size: a Run of a
// million inline one-element tensors is 13 MiB on the wire and about 310 MiB of protobuf
// objects (MessageBytes), and, while the request waits behind the session's others, its task
// (kQueuedBytes). A client that sends messages of many small parts, or pipelines them, then
// pins at most what its session may hold.
//
//   RequestCharge charge(session, *request);  // on arrival; throws RpcError RESOURCE_EXHAUSTED
//   ... strand task: charge.Start();          // the wait is over; may throw the same
//   ... the reactor keeps `charge` until the work is over, then frees the message with it
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <memory>

#include "server/sessions/session.h"

namespace onemodel::server {

class RequestCharge {
 public:
  // What a request posted to a busy strand holds while it waits besides its message: its
  // task's closure, the two std::functions around it and its queue slot (about 250 B added up
  // from the types' sizes, rounded up).
  static constexpr int64_t kQueuedBytes = 512;

  // Whether a request frees memory (ReleaseTensors, ResetArena): a full session must still be
  // able to send one.
  enum class Kind { kHolds, kFrees };

  RequestCharge() = default;
  // Charges `request`'s MessageBytes and, when the session's strand is busy (the request will
  // wait), kQueuedBytes, from the thread that received it, so without trimming the arena (the
  // strand may be using it). When that does not fit: with the strand busy, throws RpcError
  // RESOURCE_EXHAUSTED and charges nothing, whatever the kind; with it idle, leaves the
  // message's charge to Start(), which may trim (kHolds), or lets the request run uncharged
  // (kFrees). Keeps the session (and so its budget) alive until the refund.
  RequestCharge(std::shared_ptr<Session> session, const google::protobuf::Message& request,
                Kind kind = Kind::kHolds);
  // On the session's strand, when the request's work begins: gives the waiting charge back,
  // then charges the message if arrival could not (the arena's free chunks go first) and the
  // request does not free memory. Throws RpcError RESOURCE_EXHAUSTED when it still does not fit.
  void Start();
  // Refunds what is still charged: call it when the message is freed.
  ~RequestCharge();
  RequestCharge(RequestCharge&& other) noexcept;
  RequestCharge& operator=(RequestCharge&& other) noexcept;

  // Bytes charged for the message (0 before Start() when arrival could not charge it).
  int64_t message_charged() const { return message_charged_; }
  // Bytes the parsed `message` holds: protobuf's SpaceUsedLong (each object, string and
  // repeated field's capacity). It leaves out malloc's block headers and rounding: glibc's
  // heap grows about 17% more for many small parts (SessionChargeTest.TheChargeIs…).
  static int64_t MessageBytes(const google::protobuf::Message& message);

 private:
  // The refusal: what did not fit (`request`'s size, parsed and on the wire), the limit's
  // message `limit` and what to do.
  [[noreturn]] static void Refuse(const google::protobuf::Message& request, int64_t bytes,
                                  bool queued, const char* limit);

  std::shared_ptr<Session> session_;
  const google::protobuf::Message* request_ = nullptr;  // until Start(), for its refusal
  Kind kind_ = Kind::kHolds;
  int64_t message_bytes_ = 0;
  int64_t message_charged_ = 0;
  int64_t queued_charged_ = 0;
};

}  // namespace onemodel::server
