// RawStreamService: the baseline of the tensor transfer benchmark (raw_stream.proto). It moves
// bytes in chunks like UploadTensor/DownloadTensor but does nothing with them: uploads are
// counted and dropped, downloads send one preallocated chunk over and over. Served beside
// onemodeld's own service (Server's extra services), so both share the server and the channel.
//
//   RawStreamService raw;
//   Server server(config, {&raw});
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "raw_stream.grpc.pb.h"

namespace onemodel::bench {

class RawStreamService final : public raw::RawStream::CallbackService {
 public:
  using Context = grpc::CallbackServerContext;

  // Counts the bytes of every chunk; replies with the total.
  grpc::ServerReadReactor<raw::Chunk>* Upload(Context* ctx, raw::Ack* reply) override;
  // Sends request->total_bytes in chunks of request->chunk_bytes (0: 1 MiB) without copying.
  grpc::ServerWriteReactor<raw::Chunk>* Download(Context* ctx, const raw::Size* request) override;
};

}  // namespace onemodel::bench
