// Shared pieces of the client integration tests: a fixture whose test suite shares one real
// onemodeld, an assertion on client::Error's code and message, and small data helpers.
//
//   class RunTest : public ServerTest {};
//   TEST_F(RunTest, Adds) {
//     client::Session session = NewSession();
//     EXPECT_TRUE(FailsWith([&] { session.Get(client::TensorHandle("p1.x")); },
//                           grpc::StatusCode::NOT_FOUND, {"p1.x"}));
//   }
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/lib/client.h"
#include "onemodel/v1/onemodel.grpc.pb.h"
#include "tests/common/server_process.h"

namespace onemodel::testing {

// One onemodeld per test suite (started before the first test, stopped after the last with a
// check that it exited 0), and a Client of it for each test. A suite that needs other flags
// defines its own SetUpTestSuite() calling StartServer(flags).
class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { StartServer({}); }
  // Starts the suite's onemodeld with `flags`; SetUp() reports a failure to start.
  static void StartServer(const std::vector<std::string>& flags);
  static void TearDownTestSuite();
  void SetUp() override;

  static ServerProcess& server() { return *server_; }
  client::Client& client() { return *client_; }
  // A session with the exact (reference) kernels unless told otherwise.
  client::Session NewSession(v1::KernelChoice kernels = v1::KERNEL_CHOICE_EXACT);

 private:
  static std::unique_ptr<ServerProcess> server_;
  static std::string start_error_;
  std::unique_ptr<client::Client> client_;
};

// Success when `call` throws client::Error with `code` and a message containing every one of
// `parts`; otherwise a failure saying what happened instead.
::testing::AssertionResult FailsWith(const std::function<void()>& call, grpc::StatusCode code,
                                     const std::vector<std::string>& parts = {});

// Polls `condition` every 20 ms for up to `timeout`; true once it holds, false if it never did.
bool Eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Sends `request` (its session_id set) by a raw stub, so the test holds the call's context.
grpc::Status RawRun(client::Client& client, const v1::RunRequest& request,
                    grpc::ClientContext& context);

// An UploadTensor stream of `session` that the test drives chunk by chunk. The constructor
// sends the header announcing `dims` of `type` placed at `placement`; `header_sent` says
// whether the stream took it.
class RawUpload {
 public:
  RawUpload(client::Client& client, const client::Session& session, std::vector<int64_t> dims,
            onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT,
            v1::Placement placement = v1::PLACEMENT_UNSPECIFIED);
  RawUpload(const RawUpload&) = delete;
  RawUpload& operator=(const RawUpload&) = delete;

  // Sends `data` as one chunk; false once the stream is broken.
  bool Send(std::string data);
  // Waits for the stream's status without ending the client's half: for a stream the server
  // ends (a refusal, a cancelled stall).
  grpc::Status Finish();
  // Ends the client's half of the stream and returns its status.
  grpc::Status End();
  // Sends `data` as the last chunk, ends the stream and returns its status.
  grpc::Status SendAll(std::string data);
  // Cancels the stream from the client and returns its status (CANCELLED).
  grpc::Status Cancel();

  bool header_sent() const { return header_sent_; }
  // The uploaded tensor's info, once Finish() returned OK.
  const v1::TensorInfo& info() const { return info_; }

 private:
  std::unique_ptr<v1::OneModel::Stub> stub_;
  grpc::ClientContext context_;
  v1::TensorInfo info_;
  std::unique_ptr<grpc::ClientWriter<v1::UploadTensorRequest>> writer_;
  bool header_sent_ = false;
};

// A DownloadTensor of `handle` in `session` that the test reads at will, on a channel of its
// own without BDP probing: its flow-control window stays small, so the server's writes stall
// once the test stops reading. `header_read` says whether the header arrived.
class RawDownload {
 public:
  RawDownload(const std::string& address, const client::Session& session,
              const client::TensorHandle& handle);
  RawDownload(const RawDownload&) = delete;
  RawDownload& operator=(const RawDownload&) = delete;

  bool header_read() const { return header_read_; }
  // Reads whatever is left, adds its data bytes to `*received` when given, and returns the
  // stream's status.
  grpc::Status Finish(int64_t* received = nullptr);

 private:
  std::unique_ptr<v1::OneModel::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::DownloadTensorReply>> reader_;
  bool header_read_ = false;
};

// `count` floats drawn uniformly from [lo, hi) by a generator seeded with `seed`.
std::vector<float> RandomFloats(size_t count, uint32_t seed, float lo = -2.0f, float hi = 2.0f);

// The body of an HTTP GET of `path` from `address` ("host:port"), with the status line first.
std::string HttpGet(const std::string& address, const std::string& path);

}  // namespace onemodel::testing
