// What grows with a session's requests besides tensor data is charged to its memory limit
// (issue 19, finding 3): handle-table entries, backward records and requests waiting on the
// session's strand. A 1 MiB session could
// hold the default 2^20 handles before (about 200 MiB of server memory); now passing its limit
// answers RESOURCE_EXHAUSTED with a message naming the limit and what to do, the session keeps
// working, and released handles give their bytes back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using client::RunInput;
using client::RunOutput;
using client::RunResult;
using client::Session;
using client::TensorHandle;
using grpc::StatusCode;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kMiB = int64_t{1} << 20;
// Operations per Run: small enough that a Run's own parsed message (about 150 B an operation,
// charged until gRPC frees it, which may be after the client sends the next Run) stays a small
// part of the limit beside what the test fills it with.
constexpr int kBatch = 256;
// Far more than a 1 MiB session may hold at a few hundred bytes each, far fewer than the
// default --max-handles of 2^20, so only the memory limit can stop the loop.
constexpr int kEnough = 8192;

// The default flags: --max-handles 2^20, --max-run-operations 4096.
class StructureLimitsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    stub_ = v1::OneModel::NewStub(client().channel());
  }

  // A 1 MiB session with 4 KiB arena chunks (the smallest), holding x = [1, 2, 3, 4].
  Session SmallSession() {
    return client().CreateSession({.arena_chunk_bytes = 4096, .memory_limit_bytes = kMiB});
  }
  // kBatch views of x (Expand to its own shape: no buffer, only a handle each).
  static RunResult Views(Session& session, const TensorHandle& x) {
    RunBuilder run;
    for (int i = 0; i < kBatch; ++i) run.Op("Expand", {x}, {{"shape", Ints{4}}});
    return session.Run(run);
  }
  // The handles of `result`.
  static std::vector<TensorHandle> All(const RunResult& result) {
    std::vector<TensorHandle> handles;
    for (size_t i = 0; i < result.size(); ++i) handles.push_back(result[i]);
    return handles;
  }
  // A 240 KiB session with 32 KiB arena chunks, for BehindALongRun. After the long run's own
  // charges (its parsed message, about 100 KiB, its 256 handles, reserved first, and one 32 KiB
  // arena chunk that holds all its results, 128 B each with the checked build's canaries, so it
  // needs no memory once it has started) there is room for about 70 waiting requests of 512 B
  // and their messages' 100-odd B. With smaller chunks a run that got far before its deadline
  // would need a new chunk, and the waiting requests' charges would refuse it.
  Session SessionForALongRun() {
    return client().CreateSession({.arena_chunk_bytes = 32 << 10, .memory_limit_bytes = 240 << 10});
  }
  // Calls `send` while a Run that takes about 3 s holds `session`'s strand (sums over views of
  // 2^26 elements, ended between operations by a 3 s deadline in any build: seconds of work
  // and no memory), so the requests `send` makes wait behind it; returns once the Run ended.
  void BehindALongRun(Session& session, const std::function<void()>& send) {
    const TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
    RunBuilder slow;
    for (int i = 0; i < 128; ++i)
      slow.Op("Sum", {slow.Op("Expand", {one}, {{"shape", Ints{1 << 26}}})});
    v1::RunRequest request = slow.request();
    request.set_session_id(session.id());
    v1::RunRequest parsed;  // as the server holds it: about 100 KiB
    ASSERT_TRUE(parsed.ParseFromString(request.SerializeAsString()));
    ASSERT_LE(parsed.SpaceUsedLong(), 112u << 10);
    std::thread runner([&] {
      grpc::ClientContext context;
      context.AddMetadata("onemodel-session", session.id());
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
      v1::RunReply reply;
      const grpc::Status status = stub_->Run(&context, request, &reply);
      EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED) << status.error_message();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the run has arrived
    send();
    runner.join();
  }
  // Sends `count` unary requests at once, each started by start(context, queue) (a stub's
  // Async* call), and returns their statuses.
  template <typename Reply, typename Start>
  static std::vector<grpc::Status> AllAtOnce(int count, const Start& start) {
    grpc::CompletionQueue queue;
    struct Call {
      grpc::ClientContext context;
      Reply reply;
      grpc::Status status;
    };
    std::vector<Call> calls(static_cast<size_t>(count));
    for (Call& call : calls) start(call.context, &queue)->Finish(&call.reply, &call.status, &call);
    std::vector<grpc::Status> statuses;
    void* tag = nullptr;
    bool ok = false;
    while (statuses.size() < calls.size() && queue.Next(&tag, &ok)) {
      statuses.push_back(static_cast<Call*>(tag)->status);
    }
    queue.Shutdown();
    while (queue.Next(&tag, &ok)) {
    }
    return statuses;
  }
  // Statuses of requests that waited: refused for the session's memory (RESOURCE_EXHAUSTED,
  // saying to send fewer at a time), answered (OK) or other.
  struct Tally {
    int refused = 0, answered = 0, other = 0;
    std::string first_other;
    static Tally Of(const std::vector<grpc::Status>& statuses) {
      Tally t;
      for (const grpc::Status& s : statuses) {
        if (s.ok()) {
          ++t.answered;
        } else if (s.error_code() == StatusCode::RESOURCE_EXHAUSTED &&
                   s.error_message().find("fewer requests at a time") != std::string::npos) {
          ++t.refused;
        } else if (t.other++ == 0) {
          t.first_other = s.error_message();
        }
      }
      return t;
    }
  };

  // A small run works in `session` and x still holds 1..4.
  static void ExpectUsable(Session& session, const TensorHandle& x) {
    RunBuilder run;
    run.Op("Neg", {x});
    EXPECT_EQ(session.Get<float>(session.Run(run).back()), (std::vector<float>{-1, -2, -3, -4}));
  }

  std::unique_ptr<v1::OneModel::Stub> stub_;
};

const std::vector<float> kValues = {1, 2, 3, 4};

TEST_F(StructureLimitsTest, HandlesAreChargedToTheSessionMemoryLimit) {
  Session session = SmallSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  std::vector<RunResult> made;
  int64_t handles = 1;
  EXPECT_TRUE(FailsWith(
      [&] {
        while (handles < kEnough) {
          made.push_back(Views(session, x));
          handles += kBatch;
        }
      },
      // The handles' charge ("256 more tensor handles need ...") or, when the last Run's
      // message was still charged, the next Run's: both name the limit and what to do.
      StatusCode::RESOURCE_EXHAUSTED, {"session memory limit of 1 MiB", "release tensors"}))
      << "a 1 MiB session held " << handles << " handles";
  RecordProperty("handles_in_one_mib", std::to_string(handles));
  EXPECT_EQ(session.Stats().session().handles(), handles) << "the refused run made none";
  ExpectUsable(session, x);

  ASSERT_FALSE(made.empty());
  session.Release(All(made.back()));  // gives the bytes back: room for another batch
  made.back() = Views(session, x);
  EXPECT_TRUE(FailsWith(
      [&] {
        for (int i = 0; i < 4; ++i) made.push_back(Views(session, x));
      },
      StatusCode::RESOURCE_EXHAUSTED, {"session memory limit of 1 MiB"}))
      << "the limit holds again after the released batch was made again";
  session.ResetArena();  // the views were arena handles
  made.clear();
  for (int i = 0; i < 2; ++i) made.push_back(Views(session, x));
  ExpectUsable(session, x);
}

TEST_F(StructureLimitsTest, BackwardRecordsAreChargedToTheSessionMemoryLimit) {
  Session session = SmallSession();
  const TensorHandle x = session.Put<float>(kValues, {4}, {.requires_grad = true});
  // Chains of Neg over x: each operation keeps a record (it needs gradients) besides its
  // handle and 16 bytes of arena.
  const auto chain = [&](bool no_grad) {
    RunBuilder run;
    RunOutput y = run.Op("Neg", {x});
    for (int i = 1; i < kBatch; ++i) y = run.Op("Neg", {y});
    return session.Run(run.NoGrad(no_grad));
  };
  int64_t recorded = 0;
  EXPECT_TRUE(FailsWith(
      [&] {
        while (recorded < kEnough) {
          chain(false);
          recorded += kBatch;
        }
      },
      StatusCode::RESOURCE_EXHAUSTED, {"session memory limit of 1 MiB"}));
  RecordProperty("recorded_operations_in_one_mib", std::to_string(recorded));
  session.ResetArena();  // drops the handles, and with them the records
  int64_t unrecorded = 0;
  try {
    while (unrecorded < kEnough) {
      chain(true);
      unrecorded += kBatch;
    }
  } catch (const client::Error&) {
  }
  RecordProperty("unrecorded_operations_in_one_mib", std::to_string(unrecorded));
  EXPECT_GT(unrecorded, recorded) << "without records the same memory holds more results";
  session.ResetArena();
  chain(false);  // the records' bytes came back with the reset
  ExpectUsable(session, x);
}

TEST_F(StructureLimitsTest, ARunsParsedMessageIsChargedToTheSessionMemoryLimit) {
  // One Concat of 8192 inline one-element tensors: 112 KiB on the wire, 2.6 MiB once the
  // server has parsed it, while its values and output take about 1 MiB of a 2 MiB session's
  // arena. Before, the run was charged only that, and succeeded.
  Session session =
      client().CreateSession({.arena_chunk_bytes = 64 << 10, .memory_limit_bytes = 2 * kMiB});
  const TensorHandle x = session.Put<float>(kValues, {4});
  RunBuilder run;
  const std::vector<float> one = {1};
  const std::vector<RunInput> parts(8192, RunInput(client::TensorData::From<float>(one, {1})));
  run.Op("Concat", parts, {{"axis", 0}});
  EXPECT_TRUE(FailsWith([&] { session.Run(run); }, StatusCode::RESOURCE_EXHAUSTED,
                        {"the RunRequest takes 2.6 MiB", "once parsed",
                         "session memory limit of 2 MiB", "fewer, larger parts"}));
  EXPECT_EQ(session.Stats().session().handles(), 1) << "the refused run made none";
  ExpectUsable(session, x);
}

TEST_F(StructureLimitsTest, ARunsMessageIsRefundedBeforeItsReplyLeaves) {
  // Runs whose parsed message (one Concat of 2048 inline one-element tensors: about 650 KiB)
  // takes most of a 1 MiB session, one after another: each fits only if the one before it no
  // longer holds its charge. Before, the charge lasted until gRPC freed the message after the
  // reply, sometimes after the next Run had arrived, which was then refused.
  Session session =
      client().CreateSession({.arena_chunk_bytes = 64 << 10, .memory_limit_bytes = kMiB});
  RunBuilder run;
  const std::vector<float> one = {1};
  const std::vector<RunInput> parts(2048, RunInput(client::TensorData::From<float>(one, {1})));
  run.Op("Concat", parts, {{"axis", 0}});
  run.ResetArena();
  v1::RunRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(run.request().SerializeAsString()));
  ASSERT_GT(parsed.SpaceUsedLong(), 600u << 10) << "more than half of the session's limit";
  for (int i = 1; i < 200; ++i) ASSERT_NO_THROW(session.Run(run)) << "run " << i;
  EXPECT_EQ(session.Get<float>(session.Run(run).back()), std::vector<float>(2048, 1.0f));
}

TEST_F(StructureLimitsTest, RequestsWaitingBehindALongRunAreChargedToTheSession) {
  Session session = SessionForALongRun();
  const TensorHandle x = session.Put<float>(kValues, {4});
  v1::DescribeTensorRequest describe;
  describe.set_session_id(session.id());
  describe.set_handle(x.id());
  Tally tally;
  BehindALongRun(session, [&] {
    tally = Tally::Of(AllAtOnce<v1::TensorInfo>(400, [&](auto& context, auto* queue) {
      return stub_->AsyncDescribeTensor(&context, describe, queue);
    }));
  });
  RecordProperty("waiting_requests_answered", std::to_string(tally.answered));
  EXPECT_GT(tally.refused, 0) << "400 requests waited in a 240 KiB session";
  EXPECT_GT(tally.answered, 0);
  EXPECT_EQ(tally.other, 0) << tally.first_other;
  ExpectUsable(session, x);  // the waiting requests' bytes came back
}

TEST_F(StructureLimitsTest, ReleasesAndResetsWaitingBehindALongRunAreChargedToo) {
  // The calls that free memory run uncharged in a full idle session, but not while they wait:
  // a client could otherwise queue any number of them (each 25 times its wire size parsed).
  Session session = SessionForALongRun();
  const TensorHandle x = session.Put<float>(kValues, {4});
  v1::ReleaseTensorsRequest release;
  release.set_session_id(session.id());
  for (int i = 0; i < 8; ++i) release.add_handles("p1.unknown" + std::to_string(i));
  v1::ResetArenaRequest reset;
  reset.set_session_id(session.id());
  Tally releases, resets;
  BehindALongRun(session, [&] {
    std::thread other([&] {
      resets = Tally::Of(AllAtOnce<v1::ResetArenaReply>(200, [&](auto& context, auto* queue) {
        return stub_->AsyncResetArena(&context, reset, queue);
      }));
    });
    releases = Tally::Of(AllAtOnce<v1::ReleaseTensorsReply>(200, [&](auto& context, auto* queue) {
      return stub_->AsyncReleaseTensors(&context, release, queue);
    }));
    other.join();
  });
  EXPECT_GT(releases.refused + resets.refused, 0) << "400 requests waited in a 240 KiB session";
  EXPECT_GT(resets.answered, 0);
  EXPECT_EQ(resets.other, 0) << resets.first_other;
  // The answered releases name handles that do not exist.
  EXPECT_EQ(releases.answered, 0);
  EXPECT_GT(releases.other, 0);
  ExpectUsable(session, x);
}

TEST_F(StructureLimitsTest, TransfersWaitingBehindALongRunAreChargedToTheSession) {
  // An upload's header and a download's request, 128 KiB each parsed (16384 dims; a handle of
  // 128 KiB), waiting on a 240 KiB session: at most one of each fits beside the long run.
  Session session = SessionForALongRun();
  const TensorHandle x = session.Put<float>(kValues, {4});
  v1::UploadTensorRequest upload;
  v1::UploadHeader* header = upload.mutable_header();
  header->set_session_id(session.id());
  header->set_data_type(1);
  for (int i = 0; i < 16384; ++i) header->add_dims(1);
  v1::DownloadTensorRequest download;
  download.set_session_id(session.id());
  download.set_handle(std::string(128 << 10, 'h'));
  constexpr int kEach = 8;
  std::vector<grpc::Status> uploads(kEach), downloads(kEach);
  BehindALongRun(session, [&] {
    std::vector<std::thread> clients;
    for (int i = 0; i < kEach; ++i) {
      clients.emplace_back([&, i] {
        grpc::ClientContext context;
        v1::TensorInfo info;
        auto writer = stub_->UploadTensor(&context, &info);
        writer->Write(upload);
        writer->WritesDone();
        uploads[static_cast<size_t>(i)] = writer->Finish();
      });
      clients.emplace_back([&, i] {
        grpc::ClientContext context;
        auto reader = stub_->DownloadTensor(&context, download);
        v1::DownloadTensorReply reply;
        while (reader->Read(&reply)) {
        }
        downloads[static_cast<size_t>(i)] = reader->Finish();
      });
    }
    for (std::thread& t : clients) t.join();
  });
  for (const auto& [name, statuses, what, after] :
       {std::tuple{"uploads", &uploads, "the UploadHeader takes", StatusCode::INVALID_ARGUMENT},
        std::tuple{"downloads", &downloads, "the DownloadTensorRequest takes",
                   StatusCode::NOT_FOUND}}) {
    int refused = 0;
    for (const grpc::Status& status : *statuses) {
      if (status.error_code() == StatusCode::RESOURCE_EXHAUSTED) {
        ++refused;
        EXPECT_THAT(status.error_message(),
                    AllOf(HasSubstr(what), HasSubstr("waits behind the session's other requests"),
                          HasSubstr("session memory limit of 240 KiB")));
      } else {  // ran after the long run: the rank or the handle is refused
        EXPECT_EQ(status.error_code(), after) << name << ": " << status.error_message();
      }
    }
    EXPECT_GE(refused, kEach - 2) << name;
  }
  ExpectUsable(session, x);
}

}  // namespace
}  // namespace onemodel::testing
