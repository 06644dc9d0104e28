#include "client/lib/session.h"

#include <algorithm>
#include <utility>

namespace onemodel::client {

using Stub = v1::OneModel::Stub;

Session::Session(std::shared_ptr<internal::Connection> connection, v1::CreateSessionReply created)
    : connection_(std::move(connection)), created_(std::move(created)), owns_(true) {}

Session::Session(std::shared_ptr<internal::Connection> connection, std::string session_id)
    : connection_(std::move(connection)) {
  created_.set_session_id(std::move(session_id));
  created_.set_max_message_bytes(kAttachedMaxMessageBytes);
}

Session::~Session() {
  if (!owns_) return;
  try {
    Close();
  } catch (const Error&) {
    // The server may be gone or have expired the session; either way it holds nothing of ours.
  }
}

Session::Session(Session&& other) noexcept
    : connection_(std::move(other.connection_)),
      created_(std::move(other.created_)),
      owns_(std::exchange(other.owns_, false)),
      last_reply_instance_(std::move(other.last_reply_instance_)) {}

Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    Session old(std::move(*this));
    connection_ = std::move(other.connection_);
    created_ = std::move(other.created_);
    owns_ = std::exchange(other.owns_, false);
    last_reply_instance_ = std::move(other.last_reply_instance_);
  }
  return *this;
}

v1::KeepAliveReply Session::KeepAlive() {
  v1::KeepAliveRequest request;
  request.set_session_id(id());
  return Call("KeepAlive", &Stub::KeepAlive, request);
}

v1::CloseSessionReply Session::Close() {
  v1::CloseSessionRequest request;
  request.set_session_id(id());
  owns_ = false;
  return Call("CloseSession", &Stub::CloseSession, request);
}

std::string Session::Detach() {
  owns_ = false;
  return id();
}

bool Session::FitsUnary(int64_t data_bytes) const {
  return data_bytes + kEnvelopeBytes <= created_.max_message_bytes();
}

int64_t Session::ChunkBytes() const {
  return std::clamp(created_.max_message_bytes() - kEnvelopeBytes, int64_t{1}, kMaxChunkBytes);
}

TensorHandle Session::Put(TensorData data, const PutOptions& options) {
  data.Validate();
  const auto total = static_cast<int64_t>(data.bytes.size());
  if (!FitsUnary(total)) return Upload(data, options);
  TensorHandle handle = PutProto(ToProto(std::move(data)), options);
  if (options.progress) options.progress(total, total);
  return handle;
}

TensorHandle Session::PutProto(const onnx::TensorProto& tensor, const PutOptions& options) {
  v1::PutTensorRequest request;
  request.set_session_id(id());
  *request.mutable_tensor() = tensor;
  request.set_requires_grad(options.requires_grad);
  request.set_placement(options.placement);
  request.set_target(options.target);
  return TensorHandle(Call("PutTensor", &Stub::PutTensor, request));
}

TensorData Session::Get(const TensorHandle& handle, const Progress& progress) {
  const TensorHandle described = handle.has_info() ? handle : Describe(handle);
  const int64_t total = described.DataBytes();
  if (!FitsUnary(total)) return Download(described, progress, ChunkBytes());
  TensorData data = FromProto(GetProto(described));
  if (progress) progress(total, total);
  return data;
}

onnx::TensorProto Session::GetProto(const TensorHandle& handle) {
  v1::GetTensorRequest request;
  request.set_session_id(id());
  request.set_handle(handle.id());
  return Call("GetTensor", &Stub::GetTensor, request);
}

TensorHandle Session::Describe(const TensorHandle& handle) {
  v1::DescribeTensorRequest request;
  request.set_session_id(id());
  request.set_handle(handle.id());
  return TensorHandle(Call("DescribeTensor", &Stub::DescribeTensor, request));
}

int64_t Session::Release(const std::vector<TensorHandle>& handles) {
  v1::ReleaseTensorsRequest request;
  request.set_session_id(id());
  for (const TensorHandle& handle : handles) request.add_handles(handle.id());
  return Call("ReleaseTensors", &Stub::ReleaseTensors, request).released();
}

RunResult Session::Run(const RunBuilder& run) { return Run(run.request()); }

RunResult Session::Run(v1::RunRequest request) {
  request.set_session_id(id());
  return RunResult(Call("Run", &Stub::Run, request));
}

std::vector<TensorHandle> Session::Backward(const TensorHandle& root,
                                            const std::vector<TensorHandle>& inputs,
                                            const BackwardOptions& options) {
  v1::BackwardRequest request;
  request.set_session_id(id());
  request.set_root(root.id());
  if (options.grad_output) *request.mutable_grad_output() = options.grad_output->proto();
  for (const TensorHandle& input : inputs) request.add_inputs(input.id());
  request.set_retain_graph(options.retain_graph);
  request.set_placement(options.placement);
  const v1::BackwardReply reply = Call("Backward", &Stub::Backward, request);
  return {reply.gradients().begin(), reply.gradients().end()};
}

v1::ResetArenaReply Session::ResetArena(const ResetArenaOptions& options) {
  v1::ResetArenaRequest request;
  request.set_session_id(id());
  request.set_trim(options.trim);
  request.set_keep_bytes(options.keep_bytes);
  return Call("ResetArena", &Stub::ResetArena, request);
}

v1::Stats Session::Stats() {
  v1::StatsRequest request;
  request.set_session_id(id());
  return Call("GetStats", &Stub::GetStats, request);
}

}  // namespace onemodel::client
