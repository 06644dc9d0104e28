// Connection: the channel and stubs a Client and its Sessions share, and the one place that
// prepares call contexts (bearer token, session header) and turns statuses into Errors.
// Internal to the client library.
//
//   auto conn = std::make_shared<internal::Connection>("127.0.0.1:50051", ClientOptions{});
//   v1::PingReply reply = conn->Call("Ping", &v1::OneModel::Stub::Ping, v1::PingRequest{}, "");
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "client/lib/error.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "onemodel/v1/onemodel.grpc.pb.h"

namespace onemodel::client {

struct ClientOptions {
  std::string bearer_token{};  // sent as "authorization: Bearer <token>" when not empty
  std::shared_ptr<grpc::ChannelCredentials> credentials{};  // null: plaintext
};

namespace internal {

inline constexpr char kSessionHeader[] = "onemodel-session";
inline constexpr char kInstanceHeader[] = "onemodel-instance";

class Connection {
 public:
  template <typename Request, typename Reply>
  using UnaryMethod = grpc::Status (v1::OneModel::Stub::*)(grpc::ClientContext*, const Request&,
                                                           Reply*);

  // A channel to `target` ("host:port") allowing messages up to 2^31-1 bytes each way.
  Connection(const std::string& target, ClientOptions options);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Adds the bearer token and, unless `session_id` is empty, the session header.
  void Prepare(grpc::ClientContext& context, std::string_view session_id) const;

  // Runs one unary call; throws Error("<rpc> failed: ...") unless it succeeds. When `instance`
  // is not null it receives the reply's onemodel-instance header.
  template <typename Request, typename Reply>
  Reply Call(std::string_view rpc, UnaryMethod<Request, Reply> method, const Request& request,
             std::string_view session_id, std::string* instance = nullptr) const {
    grpc::ClientContext context;
    Prepare(context, session_id);
    Reply reply;
    CheckStatus(rpc, (stub_.get()->*method)(&context, request, &reply));
    if (instance != nullptr) *instance = ReplyInstance(context);
    return reply;
  }

  v1::OneModel::Stub& stub() const { return *stub_; }
  grpc::health::v1::Health::Stub& health() const { return *health_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // The onemodel-instance header of a call whose initial metadata has arrived ("" if none).
  static std::string ReplyInstance(const grpc::ClientContext& context);

 private:
  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::OneModel::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace internal
}  // namespace onemodel::client
