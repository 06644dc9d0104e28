// Every server limit refuses at once: RESOURCE_EXHAUSTED (INVALID_ARGUMENT for a tensor past
// the shape limits of 2^31-1 elements or bytes, which no server could hold), a message naming the
// limit and its value, no retry, and the session that hit it still works with its tensors intact.
// Clients that ask for 100 GiB or upload without end get refused before anything is allocated.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using client::RunOutput;
using client::Session;
using client::TensorData;
using client::TensorHandle;
using grpc::StatusCode;
using P = onnx::TensorProto;

// A refusal must come back well under this, even in a sanitizer build.
constexpr auto kImmediate = std::chrono::seconds(1);
constexpr int64_t kMiB = int64_t{1} << 20;
// Small, so that transfers stay quick under sanitizers; above the client's 64 KiB envelope.
constexpr int64_t kMessageLimit = 256 << 10;

// One onemodeld with small limits for the whole suite. Each test closes what it opens, so the
// server-wide ceiling and session count start from zero in every test.
class RefusalTest : public ServerTest {
 protected:
  static void SetUpTestSuite() {
    StartServer({"--memory-limit", "40MiB", "--session-memory-default", "8MiB",
                 "--session-memory-max", "32MiB", "--max-sessions", "4", "--max-run-operations",
                 "8", "--max-handles", "16", "--max-message-bytes", "256KiB"});
  }

  // Success when `call` fails with `code`, a message holding every one of `parts`, within
  // kImmediate; records the time as the test property `figure`.
  ::testing::AssertionResult RefusedAtOnce(const std::string& figure,
                                           const std::function<void()>& call, StatusCode code,
                                           const std::vector<std::string>& parts) {
    const auto start = std::chrono::steady_clock::now();
    ::testing::AssertionResult result = FailsWith(call, code, parts);
    const auto took = std::chrono::steady_clock::now() - start;
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    RecordProperty(figure + "_us", std::to_string(micros));
    if (result && took > kImmediate) {
      return ::testing::AssertionFailure() << "refused, but only after " << micros << " us";
    }
    return result;
  }

  // A small Run works in `session` and `kept` still holds `values`.
  static void ExpectUsable(Session& session, const TensorHandle& kept,
                           const std::vector<float>& values) {
    RunBuilder run;
    run.Op("Neg", {kept});
    const std::vector<float> negated = session.Get<float>(session.Run(run).back());
    ASSERT_EQ(negated.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(negated[i], -values[i]) << i;
    EXPECT_EQ(session.Get<float>(kept), values);
  }

  v1::Stats Stats() { return client().Stats(); }
};

const std::vector<float> kValues = {1, -2, 3, -4};

TEST_F(RefusalTest, SessionMemoryLimit) {
  Session session = client().CreateSession();  // the 8 MiB default
  const TensorHandle x = session.Put<float>(kValues, {4});
  RunBuilder run;  // 16 MiB of results in the arena
  const RunOutput wide = run.Op("Expand", {session.Put<float>(std::vector<float>{1}, {1})},
                                {{"shape", Ints{2048, 2048}}});
  run.Op("Exp", {wide});
  EXPECT_TRUE(RefusedAtOnce("session_memory", [&] { session.Run(run); },
                            StatusCode::RESOURCE_EXHAUSTED,
                            {"operation 1 (Exp)", "session memory limit of 8 MiB"}));
  ExpectUsable(session, x, kValues);
}

TEST_F(RefusalTest, ServerMemoryCeiling) {
  Session holder = client().CreateSession({.memory_limit_bytes = 32 * kMiB});
  const TensorHandle kept = holder.Put<float>(kValues, {4});
  RunBuilder fill;  // 16 + 8 MiB in the pool, made on the server (no upload)
  for (const int64_t count : {4 * kMiB, 2 * kMiB}) {
    fill.Op("Neg", {fill.Op("Expand", {kept}, {{"shape", Ints{count / 4, 4}}})}, {},
            v1::PLACEMENT_POOL);
  }
  const TensorHandle big = holder.Run(fill)[1];
  Session other = client().CreateSession({.memory_limit_bytes = 32 * kMiB});
  const TensorHandle x = other.Put<float>(kValues, {4});
  RunBuilder run;  // 16 MiB: within other's own 32 MiB, but 24 + 16 MiB pass the 40 MiB ceiling
  run.Op("Exp", {run.Op("Expand", {x}, {{"shape", Ints{1024, 1024, 4}}})});
  EXPECT_TRUE(RefusedAtOnce("server_ceiling", [&] { other.Run(run); },
                            StatusCode::RESOURCE_EXHAUSTED,
                            {"server memory ceiling (--memory-limit) of 40 MiB"}));
  ExpectUsable(other, x, kValues);
  EXPECT_EQ(holder.Describe(big).DataBytes(), 16 * kMiB);
  ExpectUsable(holder, kept, kValues);
}

TEST_F(RefusalTest, SessionMemoryMaxRefusesAHundredGiBQuota) {
  EXPECT_TRUE(
      RefusedAtOnce("session_memory_max",
                    [&] { client().CreateSession({.memory_limit_bytes = int64_t{100} << 30}); },
                    StatusCode::RESOURCE_EXHAUSTED, {"100 GiB", "32 MiB", "--session-memory-max"}));
  Session session = client().CreateSession({.memory_limit_bytes = 32 * kMiB});
  EXPECT_EQ(session.created().memory_limit_bytes(), 32 * kMiB);
  ExpectUsable(session, session.Put<float>(kValues, {4}), kValues);
}

TEST_F(RefusalTest, MaxSessions) {
  std::vector<Session> open;
  std::vector<TensorHandle> kept;
  for (int i = 0; i < 4; ++i) {
    open.push_back(client().CreateSession());
    kept.push_back(open.back().Put<float>(kValues, {4}));
  }
  EXPECT_TRUE(RefusedAtOnce("max_sessions", [&] { client().CreateSession(); },
                            StatusCode::RESOURCE_EXHAUSTED, {"4 sessions open", "--max-sessions"}));
  for (int i = 0; i < 4; ++i) ExpectUsable(open[i], kept[i], kValues);
  open.pop_back();  // closes it: room for one more
  client().CreateSession();
}

TEST_F(RefusalTest, MaxRunOperations) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  RunBuilder nine;
  for (int i = 0; i < 9; ++i) nine.Op("Neg", {x});
  EXPECT_TRUE(RefusedAtOnce("max_run_operations", [&] { session.Run(nine); },
                            StatusCode::RESOURCE_EXHAUSTED,
                            {"9 operations", "limit of 8 (--max-run-operations)"}));
  EXPECT_EQ(session.Stats().session().handles(), 1) << "the refused run made no handles";
  RunBuilder eight;
  for (int i = 0; i < 8; ++i) eight.Op("Neg", {x});
  EXPECT_EQ(session.Run(eight).size(), 8);
  ExpectUsable(session, x, kValues);
}

TEST_F(RefusalTest, MaxHandles) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  for (int count : {8, 7}) {  // 1 + 8 + 7: the session holds the most it may
    RunBuilder run;
    for (int i = 0; i < count; ++i) run.Op("Neg", {x});
    session.Run(run);
  }
  EXPECT_TRUE(RefusedAtOnce("max_handles_put", [&] { session.Put<float>(kValues, {4}); },
                            StatusCode::RESOURCE_EXHAUSTED,
                            {"16 tensor handles", "limit of 16 (--max-handles)"}));
  RunBuilder one;
  one.Op("Neg", {x});
  EXPECT_TRUE(RefusedAtOnce("max_handles_run", [&] { session.Run(one); },
                            StatusCode::RESOURCE_EXHAUSTED, {"limit of 16 (--max-handles)"}));
  session.ResetArena();  // the 15 arena results go: room again
  ExpectUsable(session, x, kValues);
}

TEST_F(RefusalTest, MaxMessageBytes) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  P proto;
  proto.set_data_type(P::FLOAT);
  proto.add_dims(kMessageLimit / 2);  // twice the limit
  proto.set_raw_data(std::string(kMessageLimit * 2, '\0'));
  // gRPC refuses it on arrival: the time is the message's transfer (slow under TSan), so untimed.
  EXPECT_TRUE(FailsWith([&] { session.PutProto(proto); }, StatusCode::RESOURCE_EXHAUSTED,
                        {std::to_string(kMessageLimit)}));
  const TensorHandle streamed = session.Upload(client::FromProto(proto));
  EXPECT_TRUE(RefusedAtOnce("max_message_bytes_get", [&] { session.GetProto(streamed); },
                            StatusCode::RESOURCE_EXHAUSTED,
                            {std::to_string(kMessageLimit), "--max-message-bytes"}));
  ExpectUsable(session, x, kValues);
}

TEST_F(RefusalTest, AHundredGiBTensorIsRefusedBeforeAnyAllocation) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  const TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
  const int64_t rented = Stats().pool().rented_bytes();
  P huge;  // 160000 x 160000 floats: 95 GiB
  huge.set_data_type(P::FLOAT);
  huge.add_dims(160000);
  huge.add_dims(160000);
  EXPECT_TRUE(RefusedAtOnce("hundred_gib_put", [&] { session.PutProto(huge); },
                            StatusCode::INVALID_ARGUMENT,
                            {"[160000, 160000]", "above the limit of 2147483647"}));
  RunBuilder product;  // [160000, 1] x [1, 160000]
  product.Op("MatMul", {product.Op("Expand", {one}, {{"shape", Ints{160000, 1}}}),
                        product.Op("Expand", {one}, {{"shape", Ints{1, 160000}}})});
  EXPECT_TRUE(RefusedAtOnce(
      "hundred_gib_matmul", [&] { session.Run(product); }, StatusCode::INVALID_ARGUMENT,
      {"operation 2 (MatMul)", "[160000, 160000]", "above the limit of 2147483647"}));
  RunBuilder quota;  // 1 GiB: below the buffer limit, above the session's 8 MiB
  quota.Op("Exp", {quota.Op("Expand", {x}, {{"shape", Ints{65536, 1024, 4}}})});
  EXPECT_TRUE(RefusedAtOnce("one_gib_run", [&] { session.Run(quota); },
                            StatusCode::RESOURCE_EXHAUSTED, {"session memory limit of 8 MiB"}));
  EXPECT_EQ(Stats().pool().rented_bytes(), rented);
  ExpectUsable(session, x, kValues);
}

TEST_F(RefusalTest, SlowUploadsCannotHoldTheCeilingAgainstAnotherSession) {
  // Three sessions each start a 12 MiB upload and send almost nothing: together they would
  // hold 36 of the 40 MiB ceiling. --max-upload-bytes-in-flight (by default half the
  // ceiling: 20 MiB) lets only the first reserve its size.
  std::vector<Session> uploaders;
  std::vector<std::unique_ptr<RawUpload>> uploads;
  const int64_t rented = Stats().pool().rented_bytes();
  for (int i = 0; i < 3; ++i) {
    uploaders.push_back(client().CreateSession({.memory_limit_bytes = 16 * kMiB}));
    uploads.push_back(std::make_unique<RawUpload>(client(), uploaders.back(),
                                                  std::vector<int64_t>{3 * kMiB}));  // 12 MiB
    if (i == 0) {
      ASSERT_TRUE(uploads.back()->Send(std::string(4096, '\0')));
      ASSERT_TRUE(Eventually([&] { return Stats().pool().rented_bytes() >= rented + 12 * kMiB; }))
          << "the server never started the first upload";
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const grpc::Status status = uploads.back()->Finish();
    RecordProperty("upload_reservation_us",
                   std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count()));
    EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
    EXPECT_NE(status.error_message().find("reserve 12 MiB of the 20 MiB that "
                                          "--max-upload-bytes-in-flight allows"),
              std::string::npos)
        << status.error_message();
  }
  Session other = client().CreateSession({.memory_limit_bytes = 32 * kMiB});
  const TensorHandle x = other.Put<float>(kValues, {4});
  RunBuilder run;  // 16 MiB (a 20 MiB chunk): fits beside the one upload in flight
  run.Op("Exp", {run.Op("Expand", {x}, {{"shape", Ints{1024, 1024, 4}}})});
  EXPECT_EQ(other.Describe(other.Run(run).back()).DataBytes(), 16 * kMiB);
  ExpectUsable(other, x, kValues);

  EXPECT_EQ(uploads.front()->Cancel().error_code(), StatusCode::CANCELLED);
  other.Close();
  EXPECT_TRUE(Eventually([&] { return Stats().pool().rented_bytes() == rented; }));
}

// An upload larger than --max-upload-bytes-in-flight itself can never be taken: the refusal
// says so rather than "retry when they have finished".
TEST_F(RefusalTest, AnUploadAboveTheWholeUploadCapIsToldNoRetryCanHelp) {
  Session session = client().CreateSession({.memory_limit_bytes = 32 * kMiB});
  const int64_t rented = Stats().pool().rented_bytes();
  RawUpload upload(client(), session, {6 * kMiB});  // 24 MiB: fits the session, not the cap
  const grpc::Status status = upload.Finish();
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find(
                "this upload announces 24 MiB, more than the 20 MiB that "
                "--max-upload-bytes-in-flight allows all uploads in flight together"),
            std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("can never take it"), std::string::npos);
  EXPECT_EQ(status.error_message().find("retry"), std::string::npos);
  EXPECT_EQ(Stats().pool().rented_bytes(), rented);
}

TEST_F(RefusalTest, AnUploadThatNeverStopsIsRefusedAtItsHeader) {
  Session session = client().CreateSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  const int64_t rented = Stats().pool().rented_bytes();
  const auto start = std::chrono::steady_clock::now();
  RawUpload upload(client(), session, {int64_t{256} << 20});  // 1 GiB
  ASSERT_TRUE(upload.header_sent());
  int64_t sent = 0;
  while (sent < (int64_t{1} << 30) && upload.Send(std::string(kMessageLimit / 4, '\0'))) {
    sent += kMessageLimit / 4;
  }
  const grpc::Status status = upload.Finish();
  const auto took = std::chrono::steady_clock::now() - start;
  RecordProperty(
      "endless_upload_us",
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
  RecordProperty("endless_upload_sent_bytes", std::to_string(sent));
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("session memory limit of 8 MiB"), std::string::npos)
      << status.error_message();
  EXPECT_LT(sent, int64_t{64} << 20) << "the server let the stream run long after refusing it";
  EXPECT_EQ(Stats().pool().rented_bytes(), rented);
  EXPECT_EQ(session.Stats().session().handles(), 1);
  ExpectUsable(session, x, kValues);
}

// Floats in a tensor that takes one 1 MiB arena chunk or pool class (with any canary).
constexpr int64_t kAlmostMiBFloats = (kMiB - 4096) / 4;

// A run of seven results of almost 1 MiB each (7 arena chunks), from a 4-byte tensor.
RunBuilder SevenChunks(const TensorHandle& one) {
  RunBuilder run;
  const RunOutput wide = run.Op("Expand", {one}, {{"shape", Ints{kAlmostMiBFloats}}});
  for (int i = 0; i < 7; ++i) run.Op("Neg", {wide});
  return run;
}

TEST_F(RefusalTest, FreeArenaChunksGoBackBeforeTheSessionLimitRefuses) {
  Session session = client().CreateSession();  // 8 MiB
  const TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
  session.Run(SevenChunks(one));
  session.ResetArena();
  EXPECT_EQ(session.Stats().session().arena().chunks(), 7) << "kept for the next run";
  RunBuilder pool;  // 1 MiB in the pool: with 7 MiB of chunks held it passes 8 MiB
  pool.Op("Neg", {pool.Op("Expand", {one}, {{"shape", Ints{kMiB / 4}}})}, {}, v1::PLACEMENT_POOL);
  const TensorHandle kept = session.Run(pool).back();
  EXPECT_EQ(session.Describe(kept).DataBytes(), kMiB);
  EXPECT_LT(session.Stats().session().arena().chunks(), 7) << "the free chunks went back";
  const std::vector<float> values = session.Get<float>(kept);
  EXPECT_EQ(values.front(), -1.0f);
  EXPECT_EQ(values.back(), -1.0f);
}

TEST_F(RefusalTest, ResetArenaWithTrimKeepsAtMostWhatItIsTold) {
  Session session = client().CreateSession();
  const TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
  session.Run(SevenChunks(one));
  v1::ResetArenaReply reply = session.ResetArena();
  EXPECT_EQ(reply.arena().chunks(), 7) << "without trim every chunk stays";
  reply = session.ResetArena({.trim = true, .keep_bytes = 2 * kMiB});
  EXPECT_EQ(reply.arena().chunks(), 2);
  EXPECT_LE(reply.arena().reserved_bytes(), 2 * kMiB);
  reply = session.ResetArena({.trim = true});
  EXPECT_EQ(reply.arena().chunks(), 0);
  EXPECT_EQ(reply.arena().reserved_bytes(), 0);
  EXPECT_TRUE(FailsWith([&] { session.ResetArena({.trim = true, .keep_bytes = -1}); },
                        StatusCode::INVALID_ARGUMENT, {"keep_bytes must be at least 0", "-1"}));
  session.Run(SevenChunks(one));  // rents again
  EXPECT_EQ(session.Stats().session().arena().chunks(), 7);
}

TEST_F(RefusalTest, ABackwardWhosePoolPlacementFailsPartWayLeavesNothingBehind) {
  const std::vector<float> ones(kAlmostMiBFloats, 1.0f);
  // y = a * b with a, b, g in the pool; returns {y, a, b, g}.
  const auto build = [&](Session& s) {
    const TensorHandle a = s.Put<float>(ones, {kAlmostMiBFloats}, {.requires_grad = true});
    const TensorHandle b = s.Put<float>(ones, {kAlmostMiBFloats}, {.requires_grad = true});
    const TensorHandle g = s.Put<float>(ones, {kAlmostMiBFloats});
    RunBuilder run;
    run.Op("Mul", {a, b});
    return std::vector<TensorHandle>{s.Run(run).back(), a, b, g};
  };
  int64_t chunks = 0;  // the arena chunks the forward and backward take
  {
    Session probe = client().CreateSession({.memory_limit_bytes = 32 * kMiB});
    const std::vector<TensorHandle> h = build(probe);
    probe.Backward(h[0], {h[1], h[2]}, {.grad_output = h[3]});
    chunks = probe.Stats().session().arena().chunks();
  }
  // Room for the three inputs, the chunks and one gradient copy, not for the second.
  Session session =
      client().CreateSession({.memory_limit_bytes = (3 + chunks + 1) * kMiB + kMiB / 2});
  const std::vector<TensorHandle> h = build(session);
  const v1::SessionStats before = session.Stats().session();
  EXPECT_TRUE(FailsWith(
      [&] {
        session.Backward(h[0], {h[1], h[2]},
                         {.grad_output = h[3], .placement = v1::PLACEMENT_POOL});
      },
      StatusCode::RESOURCE_EXHAUSTED, {"session memory limit"}));
  const v1::SessionStats after = session.Stats().session();
  EXPECT_EQ(after.handles(), before.handles());
  EXPECT_EQ(after.pool_buffers(), before.pool_buffers());
  EXPECT_EQ(after.pool_bytes(), before.pool_bytes()) << "the first gradient's copy was freed";
}

// GetTensor calls whose replies nobody reads: a channel of its own without BDP probing, so
// the client's transport takes at most its 64 KiB window of each reply and the rest waits on
// the server. A thread polls the completion queue (which drives the channel) but no call
// asks for its reply until the destructor cancels them.
class UnreadReplies {
 public:
  UnreadReplies(const std::string& address, const Session& session, const TensorHandle& handle,
                int count) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    stub_ = v1::OneModel::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    v1::GetTensorRequest request;
    request.set_session_id(session.id());
    request.set_handle(handle.id());
    for (int i = 0; i < count; ++i) {
      calls_.push_back(std::make_unique<Call>());
      Call& c = *calls_.back();
      c.reader = stub_->PrepareAsyncGetTensor(&c.context, request, &queue_);
      c.reader->StartCall();
      c.reader->ReadInitialMetadata(&c);  // sends the request; Finish() alone would read
    }
    poller_ = std::thread([this] {
      void* tag;
      bool ok;
      while (queue_.Next(&tag, &ok)) {
      }
    });
  }
  // Cancels every call and waits until gRPC has finished them.
  ~UnreadReplies() {
    for (auto& c : calls_) {
      c->context.TryCancel();
      c->reader->Finish(&c->reply, &c->status, c.get());
    }
    queue_.Shutdown();  // Next() returns false once every Finish has completed
    poller_.join();
  }

 private:
  struct Call {
    grpc::ClientContext context;
    onnx::TensorProto reply;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<onnx::TensorProto>> reader;
  };
  std::unique_ptr<v1::OneModel::Stub> stub_;
  grpc::CompletionQueue queue_;
  std::vector<std::unique_ptr<Call>> calls_;
  std::thread poller_;
};

TEST_F(RefusalTest, GetTensorRepliesNobodyReadsAreChargedToTheSessionUntilSent) {
  Session session = client().CreateSession();  // 8 MiB
  const TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
  RunBuilder run;  // 4 bytes seen as 240000: each reply holds 60000 times its source, twice
  run.Op("Expand", {one}, {{"shape", Ints{60000}}});
  const TensorHandle view = session.Run(run).back();
  const int64_t rss = ResidentBytes(server().pid());
  {
    const UnreadReplies unread(server().grpc_address(), session, view, 40);  // 19 MB if kept
    // Once the unread replies fill the session's 8 MiB, a reply that would be read is refused.
    std::string refusal;
    EXPECT_TRUE(Eventually(
        [&] {
          try {
            session.GetProto(view);
            return false;
          } catch (const client::Error& e) {
            refusal = e.what();
            return e.code() == StatusCode::RESOURCE_EXHAUSTED;
          }
        },
        std::chrono::seconds(20)))
        << "40 unread replies of 480 KB never filled the session's 8 MiB";
    for (const char* part : {"GetTensor", "session memory limit of 8 MiB", "DownloadTensor"}) {
      EXPECT_NE(refusal.find(part), std::string::npos) << refusal;
    }
    // A figure only: sanitizers' quarantines make RSS too noisy to assert on.
    RecordProperty("unread_replies_rss_growth_bytes",
                   std::to_string(ResidentBytes(server().pid()) - rss));
    // The advice works: two 16 KiB chunks in flight fit where a 480 KB reply does not.
    const TensorData streamed = session.Download(view, {}, 16 << 10);
    EXPECT_EQ(streamed.ToVector<float>(), std::vector<float>(60000, 1.0f));
  }
  // Cancelled: gRPC is done with them and the session has its memory back.
  EXPECT_TRUE(Eventually([&] {
    try {
      return session.GetProto(view).raw_data().size() == 240000;
    } catch (const client::Error&) {
      return false;
    }
  }));
}

TEST_F(RefusalTest, ADownloadOfAHugeViewHoldsOnlyItsChunks) {
  Session session = client().CreateSession();  // 8 MiB
  const TensorHandle one = session.Put<float>(std::vector<float>{2.5f}, {1});
  RunBuilder run;  // 32 MiB seen through 4 bytes: four times the session's limit
  run.Op("Expand", {one}, {{"shape", Ints{2048, 4096}}});
  const TensorHandle view = session.Run(run).back();
  const int64_t rented = Stats().pool().rented_bytes();
  const std::vector<float> values = session.Download(view).ToVector<float>();
  ASSERT_EQ(values.size(), size_t{2048} * 4096);
  EXPECT_EQ(std::count(values.begin(), values.end(), 2.5f), 2048 * 4096);
  EXPECT_EQ(Stats().pool().rented_bytes(), rented) << "no copy of the view was made";
}

TEST_F(RefusalTest, A256MiBDownloadRentsNoTemporaryOfItsSize) {
  Session session = client().CreateSession();  // 8 MiB; the server's ceiling is 40 MiB
  const TensorHandle one = session.Put<float>(std::vector<float>{-1.5f}, {1});
  RunBuilder run;  // 256 MiB seen through 4 bytes, copied to the wire one chunk at a time
  run.Op("Expand", {one}, {{"shape", Ints{64, 1 << 20}}});
  const TensorHandle view = session.Run(run).back();
  const int64_t rented = Stats().pool().rented_bytes();
  const TensorData data = session.Download(view);
  ASSERT_EQ(static_cast<int64_t>(data.bytes.size()), 256 * kMiB);
  const std::vector<float> values = data.ToVector<float>();
  EXPECT_EQ(std::count(values.begin(), values.end(), -1.5f), int64_t{64} << 20);
  const v1::PoolStats pool = Stats().pool();
  EXPECT_EQ(pool.rented_bytes(), rented);
  // The pool's high-water mark over the server's life: a 256 MiB temporary would be in it.
  EXPECT_LT(pool.peak_rented_bytes(), 64 * kMiB);
}

}  // namespace
}  // namespace onemodel::testing
