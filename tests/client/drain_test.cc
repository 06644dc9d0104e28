// Stopping long work: a MatMul that would run for minutes stops between blocks when its
// client cancels or its deadline passes (an exact Conv2d or AvgPool2d on one image too), and
// when the drain time after SIGTERM runs out (the process exits within --drain-seconds plus
// kExitMargin), and so is a transfer waiting on its client; a second SIGTERM during the drain
// ends the process cleanly with exit code 3; calls racing a SIGTERM end OK or UNAVAILABLE.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using client::Session;
using client::TensorHandle;
using grpc::StatusCode;
using Clock = std::chrono::steady_clock;

// server/daemon.h: the exit codes and margin the daemon documents.
constexpr int kExitSecondSignal = 3;
constexpr auto kExitMargin = std::chrono::seconds(5);
// How much later than the daemon's bound the test accepts an exit (process start-up of the
// waiter, a slow sanitizer build).
constexpr auto kSlack = std::chrono::seconds(3);

// One MatMul of two stride-0 views of the 1 x 1 tensor `x`, (128 x 2^23) x (2^23 x 128):
// 1.4e11 multiply-adds on no memory, minutes in any build unless it is stopped.
v1::RunRequest LongMatMul(const Session& session, const TensorHandle& x) {
  RunBuilder run;
  run.Op("MatMul", {run.Op("Expand", {x}, {{"shape", Ints{128, 1 << 23}}}),
                    run.Op("Expand", {x}, {{"shape", Ints{1 << 23, 128}}})});
  v1::RunRequest request = run.request();
  request.set_session_id(session.id());
  return request;
}

// A session with x = [[1]] (fast kernels: the strided MatMul path of MatMulBlas).
struct LongWork {
  explicit LongWork(client::Client& client)
      : session(client.CreateSession({.kernels = v1::KERNEL_CHOICE_FAST})),
        x(session.Put<float>(std::vector<float>{1}, {1, 1})) {}
  Session session;
  TensorHandle x;
};

// Calls `stop` while a LongMatMul runs in its own thread; returns the call's status.
template <typename Stop>
grpc::Status RunLongMatMulAnd(client::Client& client, const LongWork& work,
                              grpc::ClientContext& context, const Stop& stop) {
  grpc::Status status;
  std::thread call([&] { status = RawRun(client, LongMatMul(work.session, work.x), context); });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the MatMul is under way
  stop();
  call.join();
  return status;
}

class CancelLongWorkTest : public ServerTest {};

TEST_F(CancelLongWorkTest, ADeadlineStopsALongMatMulPromptly) {
  LongWork work(client());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  const grpc::Status status = RawRun(client(), LongMatMul(work.session, work.x), context);
  EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  // The session's next call waits on its strand for the MatMul: it runs once the kernel stops.
  const auto start = Clock::now();
  RunBuilder run;
  run.Op("Neg", {work.x});
  EXPECT_EQ(work.session.Get<float>(work.session.Run(run).back()), (std::vector<float>{-1}));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "the MatMul went on";
  EXPECT_EQ(work.session.Stats().session().handles(), 2) << "x and Neg(x); the MatMul made none";
}

TEST_F(CancelLongWorkTest, AClientCancelStopsALongMatMulPromptly) {
  LongWork work(client());
  grpc::ClientContext context;
  const grpc::Status status =
      RunLongMatMulAnd(client(), work, context, [&] { context.TryCancel(); });
  EXPECT_EQ(status.error_code(), StatusCode::CANCELLED) << status.error_message();
  const auto start = Clock::now();
  RunBuilder run;
  run.Op("Neg", {work.x});
  EXPECT_EQ(work.session.Get<float>(work.session.Run(run).back()), (std::vector<float>{-1}));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "the MatMul went on";
}

// Minutes of exact (reference) work on one image, from stride-0 views of x = [[[[1]]]]:
// Conv2d with 64 x 62 x 62 outputs of 4096 x 9 multiply-adds each, or one AvgPool2d output
// whose window holds 2^31 - 2^15 elements. Before, the exact Conv2d looked for cancellation only
// between images and the pooling only between outputs: each held its session (and a worker)
// to its end, and a CloseSession behind it timed out.
v1::RunRequest LongExactWork(const Session& session, const TensorHandle& x, bool conv) {
  RunBuilder run;
  if (conv) {
    run.Op("Conv2d", {run.Op("Expand", {x}, {{"shape", Ints{1, 4096, 64, 64}}}),
                      run.Op("Expand", {x}, {{"shape", Ints{64, 4096, 3, 3}}})});
  } else {
    run.Op("AvgPool2d", {run.Op("Expand", {x}, {{"shape", Ints{1, 1, 32768, 65535}}})},
           {{"kernel_shape", Ints{32768, 65535}}});
  }
  v1::RunRequest request = run.request();
  request.set_session_id(session.id());
  return request;
}

TEST_F(CancelLongWorkTest, ADeadlineStopsALongExactConv2dOrAvgPool2dPromptly) {
  for (const bool conv : {true, false}) {
    Session session = client().CreateSession({.kernels = v1::KERNEL_CHOICE_EXACT});
    const TensorHandle x = session.Put<float>(std::vector<float>{1}, {1, 1, 1, 1});
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    const grpc::Status status = RawRun(client(), LongExactWork(session, x, conv), context);
    EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED)
        << (conv ? "Conv2d: " : "AvgPool2d: ") << status.error_message();
    // The session's next call waits on its strand for the kernel: it runs once the kernel stops.
    const auto start = Clock::now();
    RunBuilder run;
    run.Op("Neg", {x});
    EXPECT_EQ(session.Get<float>(session.Run(run).back()), (std::vector<float>{-1}));
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5))
        << (conv ? "the Conv2d" : "the AvgPool2d") << " went on";
    EXPECT_EQ(session.Stats().session().handles(), 2) << "x and Neg(x); the stopped op made none";
  }
}

// Pooling in a fast-kernel session over one row of a stride-0 view of 2^31 - 1 elements with
// a window of all but one column (two outputs, each summing 2^31 - 2 elements), and
// GlobalAvgPool2d over a 46340 x 46340 view. Before, the fast pooling loops looked for
// cancellation only between output rows: the next call waited 17-75 s for them (hostile
// tester, 2026-12-06).
TEST_F(CancelLongWorkTest, ADeadlineStopsHugePoolingWindowsInAFastSession) {
  Session session = client().CreateSession({.kernels = v1::KERNEL_CHOICE_FAST});
  const TensorHandle x = session.Put<float>(std::vector<float>{1}, {1, 1, 1, 1});
  const int64_t wide = (int64_t{1} << 31) - 1;
  for (const char* op : {"AvgPool2d", "MaxPool2d", "GlobalAvgPool2d"}) {
    RunBuilder run;
    const bool global = std::string_view(op) == "GlobalAvgPool2d";
    const auto view =
        run.Op("Expand", {x}, {{"shape", global ? Ints{1, 1, 46340, 46340} : Ints{1, 1, 1, wide}}});
    if (global) {
      run.Op(op, {view});
    } else {
      run.Op(op, {view}, {{"kernel_shape", Ints{1, wide - 1}}});
    }
    v1::RunRequest request = run.request();
    request.set_session_id(session.id());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    const grpc::Status status = RawRun(client(), request, context);
    EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED)
        << op << ": " << status.error_message();
    const auto start = Clock::now();
    RunBuilder next;
    next.Op("Neg", {x});
    const TensorHandle negated = session.Run(next).back();
    EXPECT_EQ(session.Get<float>(negated), (std::vector<float>{-1}));
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << op << " went on";
    session.Release({negated});
  }
}

TEST_F(CancelLongWorkTest, CloseSessionEndsALongExactConv2dPromptly) {
  Session session = client().CreateSession({.kernels = v1::KERNEL_CHOICE_EXACT});
  const TensorHandle x = session.Put<float>(std::vector<float>{1}, {1, 1, 1, 1});
  grpc::ClientContext context;
  grpc::Status status;
  std::thread call([&] { status = RawRun(client(), LongExactWork(session, x, true), context); });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the Conv2d is under way
  // The client gives up on the Run and closes the session: the close waits on the strand for
  // the kernel, which stops at the cancel.
  const auto start = Clock::now();
  context.TryCancel();
  session.Close();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "the Conv2d went on";
  call.join();
  EXPECT_EQ(status.error_code(), StatusCode::CANCELLED) << status.error_message();
}

TEST(DrainTest, ALongMatMulIsStoppedWhenTheDrainTimeRunsOut) {
  ServerProcess server({"--drain-seconds", "1"});
  client::Client client(server.grpc_address());
  LongWork work(client);
  work.session.Detach();  // the server closes it when it stops
  grpc::ClientContext context;
  ExitStatus exit;
  Clock::duration took{};
  const grpc::Status status = RunLongMatMulAnd(client, work, context, [&] {
    const auto start = Clock::now();
    exit = server.Stop(SIGTERM);
    took = Clock::now() - start;
  });
  ::testing::Test::RecordProperty(
      "drain_1s_long_matmul_exit_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_TRUE(exit.ok()) << exit.Describe();
  EXPECT_GE(took, std::chrono::seconds(1)) << "the MatMul was not in flight";
  EXPECT_LT(took, std::chrono::seconds(1) + kExitMargin + kSlack);
  EXPECT_EQ(status.error_code(), StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(status.error_message().find("drain time (--drain-seconds) ran out"), std::string::npos)
      << status.error_message();
}

// A transfer holds its session's strand while it waits on its client; one whose client neither
// sends nor reads (but keeps the stream) is stopped when the drain runs out, like a unary call,
// so its session closes and the process exits 0. Before, both held their sessions until the
// daemon gave up 5 s later and exited with code 4.
TEST(DrainTest, TransfersWaitingOnTheirClientsAreStoppedWhenTheDrainTimeRunsOut) {
  ServerProcess server({"--drain-seconds", "1"});
  client::Client client(server.grpc_address());
  const auto rented = [&] { return client.Stats().pool().rented_bytes(); };
  // Both sessions are detached: the server closes them when it stops.
  Session uploading = client.CreateSession();
  uploading.Detach();
  RawUpload upload(client, uploading, {1 << 20});  // 4 MiB announced, 64 KiB sent
  ASSERT_TRUE(upload.Send(std::string(64 << 10, '\0')));
  ASSERT_TRUE(Eventually([&] { return rented() >= int64_t{4} << 20; }))
      << "the server never started the upload";

  Session downloading = client.CreateSession();
  downloading.Detach();
  RunBuilder expand;  // a 64 MiB view: more than the client's window takes unread
  expand.Op("Expand", {downloading.Put<float>(std::vector<float>{1}, {1})},
            {{"shape", Ints{16 << 20}}});
  const TensorHandle wide = downloading.Run(expand).back();
  RawDownload download(server.grpc_address(), downloading, wide);
  ASSERT_TRUE(download.header_read());

  const auto start = Clock::now();
  const ExitStatus exit = server.Stop(SIGTERM);
  const auto took = Clock::now() - start;
  EXPECT_TRUE(exit.ok()) << exit.Describe();
  EXPECT_GE(took, std::chrono::seconds(1)) << "the transfers were not in flight";
  EXPECT_LT(took, std::chrono::seconds(1) + kExitMargin);

  const grpc::Status uploaded = upload.Finish();
  EXPECT_EQ(uploaded.error_code(), StatusCode::UNAVAILABLE) << uploaded.error_message();
  EXPECT_NE(uploaded.error_message().find("stopped this upload after 65536 of 4194304 bytes when "
                                          "the drain time (--drain-seconds) ran out; nothing was "
                                          "kept"),
            std::string::npos)
      << uploaded.error_message();
  // The status waits behind the chunks this client never read, so the connection usually
  // closes before it arrives ("Socket closed"): UNAVAILABLE either way.
  const grpc::Status downloaded = download.Finish();
  EXPECT_EQ(downloaded.error_code(), StatusCode::UNAVAILABLE) << downloaded.error_message();
}

TEST(DrainTest, ASecondSigtermDuringTheDrainExitsCleanlyWithCodeThree) {
  ServerProcess server({"--drain-seconds", "60"});
  client::Client client(server.grpc_address());
  LongWork work(client);
  work.session.Detach();
  grpc::ClientContext context;
  ExitStatus exit;
  Clock::duration took{};
  const grpc::Status status = RunLongMatMulAnd(client, work, context, [&] {
    const auto start = Clock::now();
    kill(server.pid(), SIGTERM);
    // Apart enough that the first is taken before the second comes (two pending SIGTERMs
    // would merge into one).
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    exit = server.Stop(SIGTERM);
    took = Clock::now() - start;
  });
  EXPECT_EQ(exit.signal, 0) << exit.Describe();
  EXPECT_EQ(exit.code, kExitSecondSignal) << exit.Describe();
  EXPECT_LT(took, kExitMargin + kSlack);
  EXPECT_EQ(status.error_code(), StatusCode::UNAVAILABLE) << status.error_message();
}

// A closed terminal (SIGHUP) drains the server as SIGTERM does; before, it killed the process
// with no drain and no log line.
TEST(DrainTest, ASighupDrainsAndExitsWithCodeZero) {
  ServerProcess server;
  client::Client client(server.grpc_address());
  Session session = client.CreateSession();
  session.Detach();
  const ExitStatus exit = server.Stop(SIGHUP);
  EXPECT_TRUE(exit.ok()) << exit.Describe();
}

// Started with SIGHUP ignored (`nohup onemodeld`), the server stays ignoring it: a blocked
// signal that is ignored still reaches sigwait(), so it must not be in the set waited for.
TEST(DrainTest, UnderNohupASighupIsIgnored) {
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGHUP, &ignore, &before), 0);  // inherited by the server
  ServerProcess server;
  ASSERT_EQ(sigaction(SIGHUP, &before, nullptr), 0);
  client::Client client(server.grpc_address());
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_NO_THROW(client.CreateSession());
  const ExitStatus exit = server.Stop();
  EXPECT_TRUE(exit.ok()) << exit.Describe();
}

// SIGPIPE (a log reader that went away) is ignored: before, the first one killed the process.
TEST(DrainTest, ASigpipeDoesNotStopTheServer) {
  ServerProcess server;
  client::Client client(server.grpc_address());
  ASSERT_EQ(kill(server.pid(), SIGPIPE), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_NO_THROW(client.CreateSession());
  const ExitStatus exit = server.Stop();
  EXPECT_TRUE(exit.ok()) << exit.Describe();
}

// Every thread of onemodeld but the main one (which waits for them in sigwait(), where the
// kernel shows them unblocked) blocks SIGTERM, SIGINT and SIGHUP: a thread that did not would
// die of one, and the process with it.
TEST(DrainTest, EveryThreadBlocksTheTerminationSignals) {
  ServerProcess server;
  const std::string tasks = "/proc/" + std::to_string(server.pid()) + "/task";
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    if (task.path().filename() == std::to_string(server.pid())) continue;
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line) && !line.starts_with("SigBlk:")) {
    }
    const uint64_t blocked = std::stoull(line.substr(7), nullptr, 16);
    const uint64_t wanted = (uint64_t{1} << (SIGTERM - 1)) | (uint64_t{1} << (SIGINT - 1)) |
                            (uint64_t{1} << (SIGHUP - 1));
    EXPECT_EQ(blocked & wanted, wanted) << "thread " << task.path().filename() << ": " << line;
    ++threads;
  }
  EXPECT_GT(threads, 2);
  EXPECT_TRUE(server.Stop().ok());
}

// Threads of short calls, then SIGTERM while they go on: each call ends OK or UNAVAILABLE,
// never a bare CANCELLED. Counts every status code seen in `codes`.
void RaceCallsWithASigterm(std::map<StatusCode, int>& codes, std::string& example) {
  constexpr int kThreads = 16;
  ServerProcess server({"--drain-seconds", "5"});
  client::Client client(server.grpc_address());
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::optional<Session> session;
      std::optional<TensorHandle> x;
      const auto count = [&](StatusCode code, const std::string& message) {
        std::lock_guard guard(mutex);
        ++codes[code];
        if (code != StatusCode::UNAVAILABLE && code != StatusCode::OK) {
          example = std::string(client::StatusCodeName(code)) + ": " + message;
        }
      };
      try {
        session.emplace(client.CreateSession({}));
        session->Detach();
        x = session->Put<float>(std::vector<float>{1, 2, 3}, {3});
      } catch (const client::Error& e) {
        count(e.code(), e.what());
        return;
      }
      for (int i = 0; i < 100000; ++i) {
        try {
          RunBuilder run;
          run.Op("Neg", {*x});
          session->Run(run.ResetArena());
          calls.fetch_add(1);
        } catch (const client::Error& e) {
          count(e.code(), e.what());
          if (e.code() == StatusCode::UNAVAILABLE) return;  // the server is going
        }
      }
    });
  }
  Eventually([&] { return calls.load() >= 20 * kThreads; });
  const ExitStatus exit = server.Stop(SIGTERM);
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(exit.ok()) << exit.Describe();
}

TEST(DrainTest, CallsRacingASigtermEndOkOrUnavailable) {
  std::map<StatusCode, int> codes;
  std::string example;
  for (int round = 0; round < 5; ++round) RaceCallsWithASigterm(codes, example);
  for (const auto& [code, count] : codes) {
    EXPECT_EQ(code, StatusCode::UNAVAILABLE) << count << " call(s) ended " << example;
  }
}

}  // namespace
}  // namespace onemodel::testing
