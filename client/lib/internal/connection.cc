#include "client/lib/internal/connection.h"

#include <climits>

#include "proto/grpc_runtime.h"

namespace onemodel::client::internal {

Connection::Connection(const std::string& target, ClientOptions options)
    : options_(std::move(options)) {
  QuietAbseilMutexes();  // before the channel's first mutex
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(INT_MAX);
  args.SetMaxSendMessageSize(INT_MAX);
  auto credentials =
      options_.credentials ? options_.credentials : grpc::InsecureChannelCredentials();
  channel_ = grpc::CreateCustomChannel(target, credentials, args);
  stub_ = v1::OneModel::NewStub(channel_);
  health_ = grpc::health::v1::Health::NewStub(channel_);
}

void Connection::Prepare(grpc::ClientContext& context, std::string_view session_id) const {
  if (!options_.bearer_token.empty()) {
    context.AddMetadata("authorization", "Bearer " + options_.bearer_token);
  }
  if (!session_id.empty()) context.AddMetadata(kSessionHeader, std::string(session_id));
}

std::string Connection::ReplyInstance(const grpc::ClientContext& context) {
  const auto& metadata = context.GetServerInitialMetadata();
  const auto it = metadata.find(kInstanceHeader);
  return it == metadata.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

}  // namespace onemodel::client::internal
