// --stream-idle-timeout: a transfer whose client stops sending (upload) or reading (download)
// without closing the stream, or trickles below --stream-min-bytes-per-second, is cancelled with
// DEADLINE_EXCEEDED, its memory goes back and the session's queued requests run; a slow client
// that keeps above the minimum rate is never cancelled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using client::Session;
using client::TensorHandle;
using ::testing::HasSubstr;
using P = onnx::TensorProto;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kStallTimeout(2000);
constexpr int kMinBytesPerSecond = 1024;

class StreamStallTest : public ServerTest {
 protected:
  static void SetUpTestSuite() {
    StartServer({"--stream-idle-timeout", std::to_string(kStallTimeout.count() / 1000),
                 "--stream-min-bytes-per-second", std::to_string(kMinBytesPerSecond)});
  }

  // Runs Neg(x) in `session` on another thread: it queues behind whatever holds the strand.
  static std::future<std::vector<float>> NegateLater(Session& session, const TensorHandle& x) {
    return std::async(std::launch::async, [&session, x] {
      RunBuilder run;
      run.Op("Neg", {x});
      return session.Get<float>(session.Run(run).back());
    });
  }

  // Rented pool bytes, once `session` has its first arena chunk (later runs need no more).
  int64_t RentedBytes(Session& session, const TensorHandle& x) {
    NegateLater(session, x).get();
    return RentedBytes();
  }
  // Rented pool bytes now.
  int64_t RentedBytes() { return client().Stats().pool().rented_bytes(); }

  // Runs Neg(x) in `session`, which a stream stalled since `stalled` holds, and checks that it
  // ran once the stall timeout let the session go; records the wait as `property` (ms).
  static void ExpectTheSessionGoesOn(Session& session, const TensorHandle& x,
                                     Clock::time_point stalled, const char* property) {
    std::future<std::vector<float>> negated = NegateLater(session, x);
    ASSERT_EQ(negated.wait_for(std::chrono::seconds(60)), std::future_status::ready)
        << "the stalled stream still holds the session";
    const auto waited = Clock::now() - stalled;
    EXPECT_EQ(negated.get(), (std::vector<float>{-1, 2, -3}));
    EXPECT_GE(waited, kStallTimeout - std::chrono::milliseconds(100));
    ::testing::Test::RecordProperty(
        property,
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()));
  }
};

const std::vector<float> kValues = {1, -2, 3};

TEST_F(StreamStallTest, AStalledUploadIsCancelledAndLetsTheSessionGo) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {3});
  const int64_t rented = RentedBytes(session, x);

  RawUpload upload(client(), session, {1 << 20});  // 4 MiB announced
  ASSERT_TRUE(upload.header_sent());
  ASSERT_TRUE(upload.Send(std::string(64 << 10, '\0')));
  const auto stalled = Clock::now();  // from here the client sends nothing, and keeps the stream
  // The upload holds the session from the moment the server starts it (it rents the announced
  // 4 MiB then); a Run sent before that would simply go first.
  ASSERT_TRUE(Eventually([&] { return RentedBytes() >= rented + (int64_t{4} << 20); }))
      << "the server never started the upload";

  ASSERT_NO_FATAL_FAILURE(
      ExpectTheSessionGoesOn(session, x, stalled, "stalled_upload_released_ms"));

  const grpc::Status status = upload.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr("received nothing for 2 s (--stream-idle-timeout) after 65536 of 4194304 "
                        "bytes"));
  EXPECT_EQ(RentedBytes(), rented) << "the partial tensor's memory went back";
  EXPECT_EQ(session.Stats().session().handles(), 3) << "x and two Neg(x); no upload";
  EXPECT_EQ(session.Get<float>(x), kValues);
}

TEST_F(StreamStallTest, AStalledDownloadIsCancelledAndLetsTheSessionGo) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {3});
  const TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
  RunBuilder expand;  // a 64 MiB broadcast view: the download sends a temporary copy
  expand.Op("Expand", {one}, {{"shape", Ints{16 << 20}}});
  const TensorHandle wide = session.Run(expand).back();
  const int64_t rented = RentedBytes(session, x);

  RawDownload download(server().grpc_address(), session, wide);
  ASSERT_TRUE(download.header_read());
  const auto stalled = Clock::now();  // from here the client reads nothing

  ASSERT_NO_FATAL_FAILURE(
      ExpectTheSessionGoesOn(session, x, stalled, "stalled_download_released_ms"));
  EXPECT_EQ(RentedBytes(), rented) << "the temporary copy went back";

  int64_t received = 0;  // what was already on its way, then the reason
  const grpc::Status status = download.Finish(&received);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr("the client read nothing for 2 s (--stream-idle-timeout) of the download"));
  EXPECT_LT(received, int64_t{64} << 20);
}

TEST_F(StreamStallTest, ATricklingUploadIsCancelledAndLetsTheSessionGo) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {3});
  const int64_t rented = RentedBytes(session, x);

  RawUpload upload(client(), session, {1 << 20});  // 4 MiB announced
  ASSERT_TRUE(upload.header_sent());
  ASSERT_TRUE(Eventually([&] { return RentedBytes() >= rented + (int64_t{4} << 20); }))
      << "the server never started the upload";
  const auto started = Clock::now();
  // 16 bytes every kStallTimeout / 20 (160 B/s): never silent for the idle timeout, but far
  // below the minimum rate. The writes end when the server cancels the upload.
  int sent = 0;
  while (Clock::now() - started < 10 * kStallTimeout && upload.Send(std::string(16, '\0'))) {
    ++sent;
    std::this_thread::sleep_for(kStallTimeout / 20);
  }
  const grpc::Status status = upload.Finish();
  const auto took = Clock::now() - started;  // the client notices a while after the server
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr("less than --stream-min-bytes-per-second (1 KiB/s) after"));
  EXPECT_THAT(status.error_message(), HasSubstr("of 4194304 bytes; it was cancelled"));
  EXPECT_GE(took, kStallTimeout - std::chrono::milliseconds(100));
  EXPECT_GT(sent, 3) << "the upload was cancelled as silent, not as slow";
  EXPECT_EQ(RentedBytes(), rented) << "the partial tensor's memory went back";
  EXPECT_EQ(NegateLater(session, x).get(), (std::vector<float>{-1, 2, -3}));
  EXPECT_EQ(session.Stats().session().handles(), 3) << "x and two Neg(x); no upload";
}

TEST_F(StreamStallTest, ASlowUploadThatKeepsMovingIsNotCancelled) {
  Session session = client().CreateSession();
  // One every kStallTimeout / 6: 4 s in all, twice the timeout, at 3 KiB/s, thrice the minimum.
  constexpr int kChunks = 12;
  std::vector<float> values(kChunks * 256);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);

  RawUpload upload(client(), session, {static_cast<int64_t>(values.size())});
  ASSERT_TRUE(upload.header_sent());
  const char* bytes = reinterpret_cast<const char*>(values.data());
  for (int i = 0; i < kChunks; ++i) {
    std::this_thread::sleep_for(kStallTimeout / 6);
    ASSERT_TRUE(upload.Send(std::string(bytes + i * 1024, 1024))) << "chunk " << i;
  }
  const grpc::Status status = upload.End();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(session.Get<float>(TensorHandle(upload.info())), values);
}

}  // namespace
}  // namespace onemodel::testing
