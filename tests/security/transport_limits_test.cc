// What gRPC's transport would let any client do before a handler runs, bounded by onemodeld's
// server settings (docs/security.md): compressed messages are refused before they are inflated,
// and server reflection's streams cannot multiply the server's threads.
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using grpc::StatusCode;

// 16 MiB of zeros compress to a few KiB: before, gRPC inflated such a message and only then
// found it above --max-message-bytes (a 1 MB body became 1 GiB of memory and 7 s of CPU).
TEST(CompressionTest, CompressedCallsAreRefusedBeforeAnythingIsInflated) {
  ServerProcess server({"--max-message-bytes", "4194304", "--metrics-listen", "off"});
  client::Client client(server.grpc_address());
  client::Session session = client.CreateSession();
  auto stub = v1::OneModel::NewStub(client.channel());
  v1::PutTensorRequest put;
  put.set_session_id(session.id());
  put.mutable_tensor()->set_data_type(onnx::TensorProto::FLOAT);
  put.mutable_tensor()->add_dims(4 << 20);
  put.mutable_tensor()->set_raw_data(std::string(16 << 20, '\0'));
  for (const grpc_compression_algorithm algorithm : {GRPC_COMPRESS_GZIP, GRPC_COMPRESS_DEFLATE}) {
    SCOPED_TRACE(algorithm);
    grpc::ClientContext context;
    context.set_compression_algorithm(algorithm);
    v1::TensorInfo info;
    const grpc::Status status = stub->PutTensor(&context, put, &info);
    EXPECT_EQ(status.error_code(), StatusCode::UNIMPLEMENTED) << status.error_message();
    EXPECT_NE(status.error_message().find("is disabled"), std::string::npos)
        << status.error_message();

    grpc::ClientContext ping_context;  // a small call is refused the same way
    ping_context.set_compression_algorithm(algorithm);
    v1::PingReply pong;
    EXPECT_EQ(stub->Ping(&ping_context, v1::PingRequest(), &pong).error_code(),
              StatusCode::UNIMPLEMENTED);
  }
  EXPECT_EQ(client.Ping(), server.instance_id());  // uncompressed calls are served
  EXPECT_EQ(session.Stats().session().handles(), 0);
  EXPECT_TRUE(server.Stop().ok());
}

// Reflection is a synchronous service: gRPC gave each of its calls a thread of its own, so one
// connection opening 6000 streams made 6000 threads. They are capped now, and our calls (which
// use the callback API) go on being served.
TEST(SyncThreadsTest, ReflectionStreamsCannotMultiplyTheServersThreads) {
  ServerProcess server({"--metrics-listen", "off"});
  client::Client client(server.grpc_address());
  EXPECT_EQ(client.Ping(), server.instance_id());
  const int64_t before = ProcStatusNumber(server.pid(), "Threads");
  constexpr int kStreams = 200;
  grpc::GenericStub generic(client.channel());
  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::GenericClientAsyncReaderWriter>> calls;
  for (int i = 0; i < kStreams; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    calls.push_back(generic.PrepareCall(
        contexts.back().get(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        &queue));
    calls.back()->StartCall(calls.back().get());
  }
  void* tag = nullptr;
  bool ok = false;
  for (int i = 0; i < kStreams; ++i) ASSERT_TRUE(queue.Next(&tag, &ok));
  int64_t most = before;
  for (int i = 0; i < 20; ++i) {  // a second for the server to take them all
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    most = std::max(most, ProcStatusNumber(server.pid(), "Threads"));
  }
  EXPECT_LE(most, before + 24) << before << " threads before " << kStreams
                               << " open reflection streams, " << most << " with them";
  client::Session session = client.CreateSession();  // still served
  EXPECT_EQ(session.Get<float>(session.Put<float>(std::vector<float>{5}, {1})),
            std::vector<float>{5});

  std::vector<grpc::Status> statuses(kStreams);
  for (int i = 0; i < kStreams; ++i) {
    contexts[i]->TryCancel();
    calls[i]->Finish(&statuses[i], calls[i].get());
  }
  for (int i = 0; i < kStreams; ++i) ASSERT_TRUE(queue.Next(&tag, &ok));
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  EXPECT_TRUE(server.Stop().ok());
}

}  // namespace
}  // namespace onemodel::testing
