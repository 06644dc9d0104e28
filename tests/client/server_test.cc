#include "tests/client/server_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <stdexcept>
#include <thread>

namespace onemodel::testing {

std::unique_ptr<ServerProcess> ServerTest::server_;
std::string ServerTest::start_error_;

void ServerTest::StartServer(const std::vector<std::string>& flags) {
  try {
    server_ = std::make_unique<ServerProcess>(flags);
  } catch (const std::exception& e) {
    start_error_ = e.what();
  }
}

void ServerTest::TearDownTestSuite() {
  if (!server_) return;
  const ExitStatus exit = server_->Stop();
  if (!exit.ok()) ADD_FAILURE() << "onemodeld ended with " << exit.Describe() << " after SIGTERM";
  server_.reset();
}

void ServerTest::SetUp() {
  ASSERT_NE(server_, nullptr) << "onemodeld did not start: " << start_error_;
  client_ = std::make_unique<client::Client>(server_->grpc_address());
}

client::Session ServerTest::NewSession(v1::KernelChoice kernels) {
  return client().CreateSession({.kernels = kernels, .client_name = "client-tests"});
}

::testing::AssertionResult FailsWith(const std::function<void()>& call, grpc::StatusCode code,
                                     const std::vector<std::string>& parts) {
  try {
    call();
  } catch (const client::Error& e) {
    if (e.code() != code) {
      return ::testing::AssertionFailure()
             << "expected " << client::StatusCodeName(code) << ", got: " << e.what();
    }
    for (const std::string& part : parts) {
      if (e.message().find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "message lacks '" << part << "': " << e.what();
      }
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected " << client::StatusCodeName(code) << ", but the call succeeded";
}

bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

grpc::Status RawRun(client::Client& client, const v1::RunRequest& request,
                    grpc::ClientContext& context) {
  context.AddMetadata("onemodel-session", request.session_id());
  v1::RunReply reply;
  return v1::OneModel::NewStub(client.channel())->Run(&context, request, &reply);
}

RawUpload::RawUpload(client::Client& client, const client::Session& session,
                     std::vector<int64_t> dims, onnx::TensorProto::DataType type,
                     v1::Placement placement)
    : stub_(v1::OneModel::NewStub(client.channel())) {
  context_.AddMetadata("onemodel-session", session.id());
  writer_ = stub_->UploadTensor(&context_, &info_);
  v1::UploadTensorRequest message;
  message.mutable_header()->set_session_id(session.id());
  message.mutable_header()->set_data_type(type);
  message.mutable_header()->mutable_dims()->Add(dims.begin(), dims.end());
  message.mutable_header()->set_placement(placement);
  header_sent_ = writer_->Write(message);
}

bool RawUpload::Send(std::string data) {
  v1::UploadTensorRequest message;
  message.set_data(std::move(data));
  return writer_->Write(message);
}

grpc::Status RawUpload::Finish() { return writer_->Finish(); }

grpc::Status RawUpload::End() {
  writer_->WritesDone();
  return writer_->Finish();
}

grpc::Status RawUpload::SendAll(std::string data) {
  Send(std::move(data));
  return End();
}

grpc::Status RawUpload::Cancel() {
  context_.TryCancel();
  return writer_->Finish();
}

RawDownload::RawDownload(const std::string& address, const client::Session& session,
                         const client::TensorHandle& handle) {
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  stub_ = v1::OneModel::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments));
  context_.AddMetadata("onemodel-session", session.id());
  v1::DownloadTensorRequest request;
  request.set_session_id(session.id());
  request.set_handle(handle.id());
  reader_ = stub_->DownloadTensor(&context_, request);
  v1::DownloadTensorReply reply;
  header_read_ = reader_->Read(&reply) && reply.has_header();
}

grpc::Status RawDownload::Finish(int64_t* received) {
  v1::DownloadTensorReply reply;
  while (reader_->Read(&reply)) {
    if (received) *received += static_cast<int64_t>(reply.data().size());
  }
  return reader_->Finish();
}

std::vector<float> RandomFloats(size_t count, uint32_t seed, float lo, float hi) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(lo, hi);
  std::vector<float> values(count);
  for (float& v : values) v = distribution(generator);
  return values;
}

std::string HttpGet(const std::string& address, const std::string& path) {
  const size_t colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    throw std::runtime_error("not an IPv4 address: " + address);
  }
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot connect to " + address);
  }
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: " + address + "\r\nConnection: close\r\n\r\n";
  std::string response;
  if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, n);
  }
  close(fd);
  return response;
}

}  // namespace onemodel::testing
