// Faults: clients that vanish mid-upload or mid-run, deadlines that expire during a run, a
// session that expires while another works, SIGTERM with calls in flight, and an operation that
// fails in one session while others run. Nothing leaks, and every other session carries on.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <latch>
#include <mutex>
#include <set>
#include <thread>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using client::RunOutput;
using client::Session;
using client::TensorHandle;
using grpc::StatusCode;
using P = onnx::TensorProto;
using Clock = std::chrono::steady_clock;

constexpr int kLongRunOperations = 200;
constexpr int kN = 512;  // the long run multiplies kN x kN matrices

// kLongRunOperations products a x a with the reference kernels: seconds of work in any build.
v1::RunRequest LongRun(const Session& session, const TensorHandle& a) {
  RunBuilder run;
  for (int i = 0; i < kLongRunOperations; ++i) run.Op("MatMul", {a, a});
  v1::RunRequest request = run.request();
  request.set_session_id(session.id());
  return request;
}

class FaultsTest : public ServerTest {
 protected:
  // The server's pool statistics now.
  v1::PoolStats Pool() { return client().Stats().pool(); }

  // A session and the tensor x = (1, 2, 3) it holds.
  struct Probe {
    Session session;
    TensorHandle x;
  };
  // A new probe (exact kernels).
  Probe NewProbe() {
    Session session = NewSession();
    const TensorHandle x = session.Put<float>(std::vector<float>{1, 2, 3}, {3});
    return {std::move(session), x};
  }
  // A small run in the probe's session works and x is intact.
  static void ExpectUsable(Probe& probe) {
    RunBuilder run;
    run.Op("Neg", {probe.x});
    EXPECT_EQ(probe.session.Get<float>(probe.session.Run(run).back()),
              (std::vector<float>{-1, -2, -3}));
    EXPECT_EQ(probe.session.Get<float>(probe.x), (std::vector<float>{1, 2, 3}));
  }
};

TEST_F(FaultsTest, AClientThatDisconnectsMidUploadLeavesNothingBehind) {
  Probe probe = NewProbe();
  const v1::PoolStats before = Pool();
  {
    RawUpload upload(client(), probe.session, {4 << 20});  // 16 MiB announced, 4 MiB sent
    ASSERT_TRUE(upload.header_sent());
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(upload.Send(std::string(1 << 20, '\0')));
    ASSERT_TRUE(Eventually([&] { return Pool().rented_bytes() > before.rented_bytes(); }))
        << "the server never allocated the upload";
    EXPECT_EQ(upload.Cancel().error_code(), StatusCode::CANCELLED);
  }
  EXPECT_TRUE(Eventually([&] {
    const v1::PoolStats now = Pool();
    return now.rented_bytes() == before.rented_bytes() &&
           now.rented_buffers() == before.rented_buffers();
  })) << "rented "
      << Pool().rented_bytes() << " bytes, " << before.rented_bytes() << " before";
  EXPECT_EQ(probe.session.Stats().session().handles(), 1) << "the upload made no handle";
  ExpectUsable(probe);
}

// 1 MiB of BOOL bytes, all 0 or 1 but one 2: the server refuses them after the last chunk.
std::string BoolsWithABadByte() {
  std::string bytes(1 << 20, '\1');
  bytes[12345] = '\2';
  return bytes;
}

TEST_F(FaultsTest, ARefusedBoolUploadGivesItsMemoryBack) {
  Session session = client().CreateSession({.memory_limit_bytes = int64_t{8} << 20});
  const TensorHandle x = session.Put<float>(std::vector<float>{1, 2, 3}, {3});
  const v1::SessionStats before = session.Stats().session();
  for (int i = 0; i < 12; ++i) {  // 12 MiB refused in an 8 MiB session
    RawUpload upload(client(), session, {1 << 20}, P::BOOL, v1::PLACEMENT_POOL);
    ASSERT_TRUE(upload.header_sent());
    const grpc::Status status = upload.SendAll(BoolsWithABadByte());
    ASSERT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT)
        << "upload " << i << ": " << status.error_message();
  }
  const v1::SessionStats after = session.Stats().session();
  EXPECT_EQ(after.pool_bytes(), before.pool_bytes());
  EXPECT_EQ(after.pool_buffers(), before.pool_buffers());
  EXPECT_EQ(after.handles(), 1);
  // Streamed: a PutTensor's message would be charged beside the tensor until answered.
  const TensorHandle big =
      session.Upload(client::TensorData::From<float>(std::vector<float>(6 << 18, 1.0f), {6 << 18}));
  EXPECT_EQ(session.Describe(big).DataBytes(), int64_t{6} << 20) << "6 MiB of 8 still fit";
}

TEST_F(FaultsTest, AFailedArenaUploadGivesItsArenaBytesBack) {
  Probe probe = NewProbe();
  Session& session = probe.session;
  const v1::ArenaStats before = session.Stats().session().arena();
  int64_t chunks = 0;
  for (int i = 0; i < 3; ++i) {
    RawUpload upload(client(), session, {1 << 20}, P::BOOL, v1::PLACEMENT_ARENA);
    ASSERT_TRUE(upload.header_sent());
    const grpc::Status status = upload.SendAll(BoolsWithABadByte());
    ASSERT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
    const v1::ArenaStats now = session.Stats().session().arena();
    EXPECT_EQ(now.used_bytes(), before.used_bytes()) << "upload " << i;
    if (i == 0) chunks = now.chunks();
    EXPECT_EQ(now.chunks(), chunks) << "upload " << i << " reused the first one's chunk";
  }
  ExpectUsable(probe);
}

TEST_F(FaultsTest, AClientThatDisconnectsMidArenaUploadGivesItsArenaBytesBack) {
  Probe probe = NewProbe();
  Session& session = probe.session;
  const v1::SessionStats before = session.Stats().session();
  const v1::PoolStats pool_before = Pool();
  {
    RawUpload upload(client(), session, {4 << 20}, P::FLOAT, v1::PLACEMENT_ARENA);  // 16 MiB
    ASSERT_TRUE(upload.header_sent());
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(upload.Send(std::string(1 << 20, '\0')));
    // The session's first arena chunk holds the upload: the pool lends it.
    ASSERT_TRUE(Eventually([&] { return Pool().rented_bytes() > pool_before.rented_bytes(); }))
        << "the server never allocated the upload";
    EXPECT_EQ(upload.Cancel().error_code(), StatusCode::CANCELLED);
  }
  // The session's statistics are published once the upload has let the session go.
  EXPECT_TRUE(Eventually([&] { return session.Stats().session().requests() > before.requests(); }));
  EXPECT_EQ(session.Stats().session().arena().used_bytes(), before.arena().used_bytes());
  EXPECT_EQ(session.Stats().session().handles(), 1) << "the upload made no handle";
  ExpectUsable(probe);
}

TEST_F(FaultsTest, AClientThatDisconnectsMidRunLeavesTheSessionConsistent) {
  const v1::PoolStats before = Pool();
  {
    Probe probe = NewProbe();
    const TensorHandle a = probe.session.Put<float>(RandomFloats(kN * kN, 7), {kN, kN});
    grpc::ClientContext context;
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      context.TryCancel();
    });
    const grpc::Status status = RawRun(client(), LongRun(probe.session, a), context);
    canceller.join();
    EXPECT_EQ(status.error_code(), StatusCode::CANCELLED) << status.error_message();
    ExpectUsable(probe);  // queued behind the cancelled run: it stopped between operations
    const v1::SessionStats session = probe.session.Stats().session();
    EXPECT_LT(session.arena().allocations(), kLongRunOperations / 2) << "the run went on";
    EXPECT_EQ(session.handles(), 3) << "x, a and Neg(x); the cancelled run made none";
    probe.session.ResetArena();
    ExpectUsable(probe);
    EXPECT_EQ(probe.session.Close().released_buffers(), 2);  // x and a
  }
  const v1::PoolStats after = Pool();
  EXPECT_EQ(after.rented_bytes(), before.rented_bytes());
  EXPECT_EQ(after.rented_buffers(), before.rented_buffers());
}

TEST_F(FaultsTest, ADeadlineThatExpiresDuringARunStopsIt) {
  Probe probe = NewProbe();
  const TensorHandle a = probe.session.Put<float>(RandomFloats(kN * kN, 8), {kN, kN});
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  const grpc::Status status = RawRun(client(), LongRun(probe.session, a), context);
  EXPECT_EQ(status.error_code(), StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  ExpectUsable(probe);
  const v1::SessionStats session = probe.session.Stats().session();
  EXPECT_LT(session.arena().allocations(), kLongRunOperations / 2) << "the run went on";
  EXPECT_EQ(session.handles(), 3);
}

TEST_F(FaultsTest, AnIdleSessionExpiresWhileAnotherIsBusy) {
  const v1::Stats before = client().Stats();
  Session idle = client().CreateSession({.idle_timeout_ms = 1000});
  idle.Put<float>(std::vector<float>(1000, 1.0f), {1000});  // left for the expiry to reclaim
  const int64_t held = Pool().rented_bytes() - before.pool().rented_bytes();

  std::atomic<bool> expired{false};
  std::atomic<int> runs{0};
  std::thread busy([&] {
    try {
      Session session = NewSession();
      const TensorHandle ones = session.Put<float>(std::vector<float>(256 * 256, 1.0f), {256, 256});
      while (!expired.load()) {
        RunBuilder run;
        RunOutput product = run.Op("MatMul", {ones, ones});
        for (int i = 0; i < 9; ++i) product = run.Op("MatMul", {ones, ones});
        const std::vector<float> values =
            session.Get<float>(session.Run(run.ResetArena())[product]);
        ASSERT_EQ(values.size(), 256u * 256u);
        for (float v : values) ASSERT_EQ(v, 256.0f);
        runs.fetch_add(1);
      }
      session.Release({ones});
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the busy session failed: " << e.what();
    }
  });
  const bool done = Eventually(
      [&] { return client().Stats().sessions().expired() > before.sessions().expired(); });
  expired.store(true);
  busy.join();
  ASSERT_TRUE(done) << "the idle session never expired";
  EXPECT_GT(runs.load(), 0);
  const v1::Stats after = client().Stats();
  EXPECT_EQ(after.sessions().expired() - before.sessions().expired(), 1);
  EXPECT_EQ(
      after.sessions().leaked_buffers_reclaimed() - before.sessions().leaked_buffers_reclaimed(),
      1);
  EXPECT_GT(held, 0);
  EXPECT_EQ(after.pool().rented_bytes(), before.pool().rented_bytes()) << "all came back";
  EXPECT_TRUE(FailsWith([&] { idle.KeepAlive(); }, StatusCode::NOT_FOUND, {"not found"}));
}

TEST_F(FaultsTest, AFailingOperationInOneSessionLeavesEightOthersAlone) {
  constexpr int kWorkers = 8;
  constexpr int kRounds = 10;
  constexpr int kM = 16;
  std::latch started(kWorkers + 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWorkers; ++t) {
    threads.emplace_back([&, t] {
      try {
        Session session = NewSession(t % 2 ? v1::KERNEL_CHOICE_FAST : v1::KERNEL_CHOICE_EXACT);
        started.arrive_and_wait();
        for (int round = 0; round < kRounds; ++round) {
          const std::vector<float> a = RandomFloats(kM * kM, t * 100 + round);
          const std::vector<float> b = RandomFloats(kM * kM, t * 100 + round + 50);
          RunBuilder run;
          run.Op("MatMul", {session.Put<float>(a, {kM, kM}), session.Put<float>(b, {kM, kM})});
          const std::vector<float> c = session.Get<float>(session.Run(run.ResetArena()).back());
          for (int i = 0; i < kM; ++i) {
            for (int j = 0; j < kM; ++j) {
              float expected = 0;
              for (int k = 0; k < kM; ++k) expected += a[i * kM + k] * b[k * kM + j];
              ASSERT_NEAR(c[i * kM + j], expected, 1e-4f * std::max(1.0f, std::fabs(expected)))
                  << "thread " << t << " round " << round;
            }
          }
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
      }
    });
  }
  Session failing =
      client().CreateSession({.arena_chunk_bytes = 64 << 10, .memory_limit_bytes = 1 << 20});
  const TensorHandle x = failing.Put<float>(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  started.arrive_and_wait();
  for (int round = 0; round < kRounds; ++round) {
    RunBuilder mismatch;
    mismatch.Op("MatMul", {x, x});
    EXPECT_TRUE(FailsWith([&] { failing.Run(mismatch); }, StatusCode::INVALID_ARGUMENT,
                          {"operation 0 (MatMul)", "inner dimensions differ"}));
    RunBuilder quota;  // the first operation fits, the second passes the 1 MiB limit
    const RunOutput wide = quota.Op("Expand", {x}, {{"shape", Ints{512, 2, 3}}});
    quota.Op("Exp",
             {quota.Op("Expand", {quota.Op("Exp", {wide})}, {{"shape", Ints{256, 512, 2, 3}}})});
    EXPECT_TRUE(FailsWith([&] { failing.Run(quota); }, StatusCode::RESOURCE_EXHAUSTED,
                          {"operation 3 (Exp)", "session memory limit of 1 MiB"}));
  }
  for (std::thread& thread : threads) thread.join();
  RunBuilder fine;
  fine.Op("Neg", {x});
  EXPECT_EQ(failing.Get<float>(failing.Run(fine.ResetArena()).back()),
            (std::vector<float>{-1, -2, -3, -4, -5, -6}));
}

TEST(ShutdownFaultsTest, SigtermWithCallsInFlightEndsEachCallCleanlyAndExitsZero) {
  constexpr int kThreads = 6;
  ServerProcess server({"--drain-seconds", "20"});
  client::Client client(server.grpc_address());
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::multiset<std::string> failures;  // "CODE: message" of each call that ended the loop
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string failure;
      try {
        Session session = client.CreateSession({.kernels = v1::KERNEL_CHOICE_EXACT});
        session.Detach();  // the server closes it when it stops
        const client::TensorData values =
            client::TensorData::From<float>(RandomFloats(256 * 256, t), {256, 256});
        for (;;) {  // odd threads: PutTensor and Run; even threads: UploadTensor
          const TensorHandle a = t % 2 ? session.Put(values) : session.Upload(values);
          if (t % 2) {
            RunBuilder run;
            run.Op("Sum", {run.Op("MatMul", {a, a})});
            session.Run(run.ResetArena());
          }
          session.Release({a});
          calls.fetch_add(1);
        }
      } catch (const client::Error& e) {
        failure = std::string(client::StatusCodeName(e.code())) + ": " + e.what();
      } catch (const std::exception& e) {
        failure = std::string("exception: ") + e.what();
      }
      std::lock_guard guard(mutex);
      failures.insert(failure);
    });
  }
  // The server stops and the threads end whether or not the calls got going.
  const bool busy = Eventually([&] { return calls.load() >= 3 * kThreads; });
  const auto start = Clock::now();
  const ExitStatus exit = server.Stop(SIGTERM);
  const auto took = Clock::now() - start;
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(busy) << "only " << calls.load() << " calls completed in 60 s";
  ::testing::Test::RecordProperty(
      "sigterm_in_flight_exit_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_TRUE(exit.ok()) << exit.Describe();
  EXPECT_LT(took, std::chrono::seconds(20)) << "the drain ran to its limit";
  ASSERT_EQ(failures.size(), static_cast<size_t>(kThreads));
  for (const std::string& failure : failures) {
    EXPECT_TRUE(failure.starts_with("UNAVAILABLE") || failure.starts_with("CANCELLED")) << failure;
  }
}

}  // namespace
}  // namespace onemodel::testing
