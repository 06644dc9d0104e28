// Large tensors: streamed transfers above the message limit, and the limit on unary calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Session;
using client::TensorData;
using client::TensorHandle;
using P = onnx::TensorProto;

// `count` floats whose bytes differ everywhere (exact integers, no NaN).
TensorData Pattern(int64_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), 0.0f);
  return TensorData::From<float>(values, {count});
}

// Checks that progress reports grow to `total`.
struct ProgressLog {
  int64_t last = -1;
  int64_t total = -1;
  int calls = 0;
  client::Progress Callback() {
    return [this](int64_t done, int64_t all) {
      EXPECT_GE(done, last);
      last = done;
      total = all;
      ++calls;
    };
  }
};

class StreamingTest : public ServerTest {};

TEST_F(StreamingTest, TensorAbove64MiBRoundTripsByteExact) {
  Session session = NewSession();
  const int64_t count = (int64_t{64} << 20) / 4 + 1024;  // 64 MiB + 4 KiB
  const TensorData data = Pattern(count);
  ProgressLog up, down;
  const TensorHandle handle = session.Put(data, {.progress = up.Callback()});
  EXPECT_EQ(handle.DataBytes(), count * 4);
  EXPECT_GT(up.calls, 1) << "a tensor above the message limit must be streamed";
  EXPECT_EQ(up.last, count * 4);
  const TensorData back = session.Get(handle, down.Callback());
  EXPECT_GT(down.calls, 1);
  EXPECT_EQ(down.last, count * 4);
  EXPECT_EQ(back.data_type, P::FLOAT);
  EXPECT_EQ(back.dims, data.dims);
  ASSERT_EQ(back.bytes.size(), data.bytes.size());
  EXPECT_EQ(std::memcmp(back.bytes.data(), data.bytes.data(), data.bytes.size()), 0);
}

// A server whose message limit is 1 MiB.
class SmallMessagesTest : public ::testing::Test {
 protected:
  static constexpr int64_t kLimit = 1 << 20;
  void TearDown() override { EXPECT_TRUE(server_.Stop().ok()); }

  ServerProcess server_{{"--max-message-bytes", "1MiB"}};
  client::Client client_{server_.grpc_address()};
};

TEST_F(SmallMessagesTest, SessionsReportTheLimitAndTransfersSwitchToStreams) {
  Session session = client_.CreateSession();
  EXPECT_EQ(session.created().max_message_bytes(), kLimit);
  const TensorData data = Pattern(kLimit / 2);  // 2 MiB
  ProgressLog up;
  const TensorHandle handle = session.Put(data, {.progress = up.Callback()});
  EXPECT_GT(up.calls, 1);
  EXPECT_EQ(session.Get(handle).bytes, data.bytes);
}

TEST_F(SmallMessagesTest, UnaryCallsAboveTheLimitAreResourceExhausted) {
  Session session = client_.CreateSession();
  const TensorData data = Pattern(kLimit / 2);
  EXPECT_TRUE(FailsWith([&] { session.PutProto(client::ToProto(data)); },
                        grpc::StatusCode::RESOURCE_EXHAUSTED, {std::to_string(kLimit)}));
  const TensorHandle handle = session.Upload(data);
  EXPECT_TRUE(FailsWith([&] { session.GetProto(handle); }, grpc::StatusCode::RESOURCE_EXHAUSTED,
                        {std::to_string(kLimit), std::to_string(data.bytes.size())}));
}

// Raw upload streams that break the protocol.
class UploadProtocolTest : public ServerTest {
 protected:
  // Sends `messages` on one UploadTensor stream; returns its status.
  grpc::Status Upload(const Session& session,
                      const std::vector<v1::UploadTensorRequest>& messages) {
    auto stub = v1::OneModel::NewStub(client().channel());
    grpc::ClientContext context;
    context.AddMetadata("onemodel-session", session.id());
    v1::TensorInfo info;
    auto writer = stub->UploadTensor(&context, &info);
    for (const auto& message : messages) {
      if (!writer->Write(message)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  static v1::UploadTensorRequest Header(const Session& session, std::vector<int64_t> dims) {
    v1::UploadTensorRequest message;
    message.mutable_header()->set_session_id(session.id());
    message.mutable_header()->set_data_type(P::FLOAT);
    message.mutable_header()->mutable_dims()->Add(dims.begin(), dims.end());
    return message;
  }
  static v1::UploadTensorRequest Data(size_t bytes) {
    v1::UploadTensorRequest message;
    message.set_data(std::string(bytes, '\0'));
    return message;
  }
};

TEST_F(UploadProtocolTest, TooFewOrTooManyBytesAreInvalid) {
  Session session = NewSession();
  const grpc::Status short_stream = Upload(session, {Header(session, {1000}), Data(3000)});
  EXPECT_EQ(short_stream.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(short_stream.error_message(), ::testing::HasSubstr("4000"));
  const grpc::Status long_stream =
      Upload(session, {Header(session, {1000}), Data(3000), Data(2000)});
  EXPECT_EQ(long_stream.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(long_stream.error_message(), ::testing::HasSubstr("4000"));
}

TEST_F(UploadProtocolTest, DataBeforeTheHeaderIsInvalid) {
  Session session = NewSession();
  const grpc::Status status = Upload(session, {Data(4), Header(session, {1})});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("header"));
}

}  // namespace
}  // namespace onemodel::testing
