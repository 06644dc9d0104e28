#include "bench/rpc/raw_stream_service.h"

#include <algorithm>
#include <memory>
#include <string>

namespace onemodel::bench {
namespace {

constexpr int64_t kDefaultChunkBytes = int64_t{1} << 20;

class UploadReactor final : public grpc::ServerReadReactor<raw::Chunk> {
 public:
  explicit UploadReactor(raw::Ack* reply) : reply_(reply) { StartRead(&chunk_); }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client finished sending
      reply_->set_total_bytes(total_);
      Finish(grpc::Status::OK);
      return;
    }
    total_ += static_cast<int64_t>(chunk_.data().size());
    StartRead(&chunk_);
  }
  void OnDone() override { delete this; }

 private:
  raw::Ack* reply_;
  raw::Chunk chunk_;
  int64_t total_ = 0;
};

class DownloadReactor final : public grpc::ServerWriteReactor<raw::Chunk> {
 public:
  DownloadReactor(int64_t total, int64_t chunk_bytes) : left_(total) {
    full_.mutable_data()->assign(static_cast<size_t>(std::min(chunk_bytes, total)), '\0');
    if (const int64_t tail = total % chunk_bytes; tail) {
      tail_.mutable_data()->assign(static_cast<size_t>(tail), '\0');
    }
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped receiving"));
      return;
    }
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    if (left_ == 0) {
      Finish(grpc::Status::OK);
      return;
    }
    const raw::Chunk& chunk = left_ >= static_cast<int64_t>(full_.data().size()) ? full_ : tail_;
    left_ -= static_cast<int64_t>(chunk.data().size());
    StartWrite(&chunk);
  }

  int64_t left_;
  raw::Chunk full_;  // filled once, sent as often as it fits
  raw::Chunk tail_;  // the remainder, when total_bytes is not a multiple of the chunk size
};

}  // namespace

grpc::ServerReadReactor<raw::Chunk>* RawStreamService::Upload(Context*, raw::Ack* reply) {
  return new UploadReactor(reply);
}

grpc::ServerWriteReactor<raw::Chunk>* RawStreamService::Download(Context*,
                                                                 const raw::Size* request) {
  const int64_t chunk = request->chunk_bytes() > 0 ? request->chunk_bytes() : kDefaultChunkBytes;
  return new DownloadReactor(std::max<int64_t>(0, request->total_bytes()), chunk);
}

}  // namespace onemodel::bench
