// Session's streamed transfers: UploadTensor and DownloadTensor.
#include <algorithm>
#include <cstring>

#include "client/lib/session.h"

namespace onemodel::client {
namespace {

Error DataLoss(const std::string& message) {
  return Error(grpc::StatusCode::DATA_LOSS, "DownloadTensor: " + message);
}

// Takes the type and dims of `header` into `data` and sizes its bytes; returns why the
// header is unusable, or "".
std::string AcceptHeader(const v1::DownloadHeader& header, TensorData& data) {
  data.data_type = header.data_type();
  data.dims.assign(header.dims().begin(), header.dims().end());
  int64_t total = 0;
  try {
    const int64_t element_bytes = ElementBytes(data.data_type);
    if (element_bytes == 0 ||
        __builtin_mul_overflow(NumElements(data.dims), element_bytes, &total) ||
        total != header.total_bytes()) {
      return "the header's total_bytes " + std::to_string(header.total_bytes()) +
             " does not match its type and dims";
    }
  } catch (const Error& e) {
    return "the header has bad dims: " + e.message();
  }
  data.bytes.resize(total);
  return "";
}

}  // namespace

TensorHandle Session::Upload(const TensorData& data, const PutOptions& options) {
  data.Validate();
  grpc::ClientContext context;
  connection_->Prepare(context, id());
  v1::TensorInfo info;
  auto writer = connection_->stub().UploadTensor(&context, &info);

  v1::UploadTensorRequest message;
  v1::UploadHeader* header = message.mutable_header();
  header->set_session_id(id());
  header->set_data_type(data.data_type);
  header->mutable_dims()->Add(data.dims.begin(), data.dims.end());
  header->set_requires_grad(options.requires_grad);
  header->set_placement(options.placement);
  header->set_target(options.target);
  bool open = writer->Write(message);

  const auto total = static_cast<int64_t>(data.bytes.size());
  const int64_t chunk = ChunkBytes();
  for (int64_t done = 0; open && done < total;) {
    const int64_t n = std::min(chunk, total - done);
    message.mutable_data()->assign(data.bytes.data() + done, n);
    open = writer->Write(message);
    done += n;
    if (open && options.progress) options.progress(done, total);
  }
  if (open) writer->WritesDone();
  CheckStatus("UploadTensor", writer->Finish());  // on a broken stream, the server's reason
  last_reply_instance_ = internal::Connection::ReplyInstance(context);
  return TensorHandle(std::move(info));
}

TensorData Session::Download(const TensorHandle& handle, const Progress& progress,
                             int64_t chunk_bytes) {
  grpc::ClientContext context;
  connection_->Prepare(context, id());
  v1::DownloadTensorRequest request;
  request.set_session_id(id());
  request.set_handle(handle.id());
  request.set_chunk_bytes(chunk_bytes);
  auto reader = connection_->stub().DownloadTensor(&context, request);

  v1::DownloadTensorReply message;
  TensorData data;
  int64_t done = 0;
  bool have_header = false;
  std::string broken;  // why the stream is unusable, when it is
  while (broken.empty() && reader->Read(&message)) {
    if (message.has_header()) {
      broken = have_header ? "a second header arrived" : AcceptHeader(message.header(), data);
      have_header = true;
    } else if (!have_header) {
      broken = "data arrived before the header";
    } else if (message.data().size() > data.bytes.size() - done) {
      broken = "more bytes arrived than the header announced";
    } else {
      std::memcpy(data.bytes.data() + done, message.data().data(), message.data().size());
      done += static_cast<int64_t>(message.data().size());
      if (progress) progress(done, static_cast<int64_t>(data.bytes.size()));
    }
  }
  if (!broken.empty()) context.TryCancel();
  const grpc::Status status = reader->Finish();
  if (!broken.empty()) throw DataLoss(broken);
  CheckStatus("DownloadTensor", status);
  last_reply_instance_ = internal::Connection::ReplyInstance(context);
  if (!have_header) throw DataLoss("the stream ended without a header");
  if (done != static_cast<int64_t>(data.bytes.size())) {
    throw DataLoss("received " + std::to_string(done) + " of " + std::to_string(data.bytes.size()) +
                   " bytes");
  }
  return data;
}

}  // namespace onemodel::client
