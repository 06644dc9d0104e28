// The streaming RPCs: UploadTensor and DownloadTensor move a tensor of any size (up to
// 2^31-1 bytes) in chunks; WatchStats pushes statistics at an interval.
//
// Transfers hold their session's strand from the header to the last chunk, so nothing else of
// that session (a release, an arena reset, the session's close) can touch the tensor while
// its bytes move; no thread waits meanwhile: chunks are copied as gRPC delivers or accepts
// them. A transfer that fails or is cancelled frees what it allocated.
//
//   return new UploadReactor(service, ctx, reply);   // gRPC deletes it when done
#pragma once

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>

#include "server/service.h"

namespace onemodel::server {

class UploadReactor final : public grpc::ServerReadReactor<v1::UploadTensorRequest> {
 public:
  UploadReactor(OneModelService& service, grpc::CallbackServerContext* ctx, v1::TensorInfo* reply);
  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  // The header arrived: find the session, validate, allocate (on the strand).
  void Start();
  // Copies one data chunk into the tensor.
  void Append(const std::string& data);
  // The stream ended: keep the tensor (on the strand, which this upload holds).
  void Complete();
  // Frees what was allocated, lets the strand go and finishes with `status`.
  void Fail(const grpc::Status& status);
  void Finish(const grpc::Status& status);

  OneModelService& service_;
  OneModelService::Call call_;
  v1::TensorInfo* reply_;
  v1::UploadTensorRequest message_;
  v1::UploadHeader header_;
  std::shared_ptr<Session> session_;
  Strand::Done release_strand_;
  Placement placement_ = Placement::kPool;
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
  void OnDone() override { delete this; }

 private:
  // On the strand: find the tensor, make it row-major if needed, write the header.
  void Start(const v1::DownloadTensorRequest& request);
  // Writes the next chunk, or finishes after the last.
  void WriteNext();
  void Finish(const grpc::Status& status);

  OneModelService& service_;
  OneModelService::Call call_;
  std::shared_ptr<Session> session_;
  Strand::Done release_strand_;
  Tensor source_;           // row-major view of the bytes to send
  bool temporary_ = false;  // source_ is a copy this download must free
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
