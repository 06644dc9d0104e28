// Session: one server session (its own arena, kernels and handle table), closed when the
// object is destroyed unless it was closed, detached or moved from.
//
// Every call names the session twice, in the `onemodel-session` header (for session-affine
// proxies) and in the request's session_id. Put and Get pick the unary RPC for tensors that
// fit the server's message limit and the chunked streams above it. A Session is used by one
// thread at a time; make one per thread (the server runs different sessions in parallel).
//
//   Client client("127.0.0.1:50051");
//   Session session = client.CreateSession({.kernels = v1::KERNEL_CHOICE_EXACT});
//   TensorHandle a = session.Put<float>(a_values, {2, 3}, {.requires_grad = true});
//   RunBuilder run;
//   RunOutput y = run.Op("Mul", {a, a});
//   RunOutput s = run.Op("Sum", {y});
//   RunResult out = session.Run(run);
//   std::vector<TensorHandle> grads = session.Backward(out[s], {a});
//   std::vector<float> da = session.Get<float>(grads[0]);   // 2 * a
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/lib/internal/connection.h"
#include "client/lib/run_builder.h"
#include "client/lib/tensor_data.h"
#include "client/lib/tensor_handle.h"

namespace onemodel::client {

// Called as a transfer advances: bytes done so far and the total.
using Progress = std::function<void(int64_t done_bytes, int64_t total_bytes)>;

struct PutOptions {
  bool requires_grad = false;                           // floating-point tensors only
  v1::Placement placement = v1::PLACEMENT_UNSPECIFIED;  // default: the pool
  // When set: the handle of an existing tensor (same type and shape) whose values are
  // overwritten in place; its version increases, so a backward that saved it fails.
  std::string target{};
  Progress progress{};
};

// What ResetArena does besides making every arena handle stale.
struct ResetArenaOptions {
  bool trim = false;       // also give the arena's chunks back to the server's pool
  int64_t keep_bytes = 0;  // with trim: chunk bytes to keep for the next runs
};

struct BackwardOptions {
  std::optional<RunInput> grad_output{};  // required unless the root has one element
  bool retain_graph = false;
  v1::Placement placement = v1::PLACEMENT_UNSPECIFIED;  // where gradients go (default: arena)
};

class Session {
 public:
  // The unary message limit assumed for an attached session, whose real limit is unknown
  // (gRPC's default receive limit, which every server accepts).
  static constexpr int64_t kAttachedMaxMessageBytes = int64_t{4} << 20;
  // Bytes kept free in a unary message for everything but the tensor data.
  static constexpr int64_t kEnvelopeBytes = int64_t{64} << 10;
  // Upper bound of one streamed chunk.
  static constexpr int64_t kMaxChunkBytes = int64_t{4} << 20;

  // A session the object owns (closed by the destructor), as CreateSession described it.
  Session(std::shared_ptr<internal::Connection> connection, v1::CreateSessionReply created);
  // A session the object does not own: an existing id, with the limits unknown.
  Session(std::shared_ptr<internal::Connection> connection, std::string session_id);
  // Closes an owned session, ignoring errors (call Close() to see them).
  ~Session();
  Session(Session&& other) noexcept;
  Session& operator=(Session&& other) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& id() const { return created_.session_id(); }
  // CreateSession's reply: kernel variant, server instance, effective limits.
  const v1::CreateSessionReply& created() const { return created_; }
  const std::string& server_instance_id() const { return created_.server_instance_id(); }
  // The onemodel-instance header of the latest successful reply (which server answered).
  const std::string& last_reply_instance() const { return last_reply_instance_; }
  // Whether the destructor will close the session.
  bool owns() const { return owns_; }

  // Resets the session's idle timer; the reply's instance id tells whether the server restarted.
  v1::KeepAliveReply KeepAlive();
  // Closes the session now; later calls answer NOT_FOUND.
  v1::CloseSessionReply Close();
  // Stops owning the session (it stays open on the server) and returns its id.
  std::string Detach();

  // Uploads `data` by PutTensor when it fits the message limit, else by UploadTensor.
  TensorHandle Put(TensorData data, const PutOptions& options = {});
  // Uploads `values` shaped `dims` (one copy into the message).
  template <typename T>
  TensorHandle Put(std::span<const T> values, std::vector<int64_t> dims,
                   const PutOptions& options = {}) {
    return Put(TensorData::From(values, std::move(dims)), options);
  }
  template <typename T>
  TensorHandle Put(const std::vector<T>& values, std::vector<int64_t> dims,
                   const PutOptions& options = {}) {
    return Put(std::span<const T>(values), std::move(dims), options);
  }
  // PutTensor with `tensor` exactly as given (typed fields, any size: the server judges it).
  TensorHandle PutProto(const onnx::TensorProto& tensor, const PutOptions& options = {});
  // UploadTensor: a header, then `data`'s bytes in chunks.
  TensorHandle Upload(const TensorData& data, const PutOptions& options = {});

  // Downloads a tensor by GetTensor when it fits the message limit, else by DownloadTensor
  // (a handle without info is described first).
  TensorData Get(const TensorHandle& handle, const Progress& progress = {});
  // The elements as T; Error(INVALID_ARGUMENT) when T does not match the tensor's type.
  template <typename T>
  std::vector<T> Get(const TensorHandle& handle, const Progress& progress = {}) {
    return Get(handle, progress).ToVector<T>();
  }
  // GetTensor, whatever the size.
  onnx::TensorProto GetProto(const TensorHandle& handle);
  // DownloadTensor in chunks of `chunk_bytes` (0: the server's default).
  TensorData Download(const TensorHandle& handle, const Progress& progress = {},
                      int64_t chunk_bytes = 0);

  // The server's current description of `handle`.
  TensorHandle Describe(const TensorHandle& handle);
  // Forgets `handles`; returns how many the server released.
  int64_t Release(const std::vector<TensorHandle>& handles);

  // Runs the batch; one handle per operation.
  RunResult Run(const RunBuilder& run);
  // Runs `request` as given (its session id is filled in).
  RunResult Run(v1::RunRequest request);
  // Gradients of `root` with respect to `inputs`, in order.
  std::vector<TensorHandle> Backward(const TensorHandle& root,
                                     const std::vector<TensorHandle>& inputs,
                                     const BackwardOptions& options = {});
  // Resets the arena: every arena handle becomes stale (and with options.trim, its chunks
  // beyond options.keep_bytes go back to the pool).
  v1::ResetArenaReply ResetArena(const ResetArenaOptions& options = {});
  // Server statistics including this session's.
  v1::Stats Stats();

 private:
  // One unary call on this session, recording the reply's instance header.
  template <typename Request, typename Reply>
  Reply Call(std::string_view rpc, internal::Connection::UnaryMethod<Request, Reply> method,
             const Request& request) {
    return connection_->Call(rpc, method, request, id(), &last_reply_instance_);
  }
  // Whether `data_bytes` of tensor data fit a unary message.
  bool FitsUnary(int64_t data_bytes) const;
  // The streamed chunk size for this session's message limit.
  int64_t ChunkBytes() const;

  std::shared_ptr<internal::Connection> connection_;
  v1::CreateSessionReply created_;
  bool owns_ = false;
  std::string last_reply_instance_;
};

}  // namespace onemodel::client
