// The onemodeld process: ready file, signals, exit status, instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/lib/client.h"
#include "tests/client/command.h"
#include "tests/client/server_test.h"
#include "tests/common/heap_bytes.h"

namespace onemodel::testing {
namespace {

using client::Session;

TEST(ProcessTest, ReadyFileNamesWorkingAddresses) {
  ServerProcess server;
  EXPECT_EQ(client::Client(server.grpc_address()).Ping(), server.instance_id());
  ASSERT_FALSE(server.metrics_address().empty());
  EXPECT_NE(HttpGet(server.metrics_address(), "/metrics").find("200"), std::string::npos);
  EXPECT_TRUE(server.Stop().ok());
}

TEST(ProcessTest, SigtermWithOpenSessionsExitsZero) {
  ServerProcess server;
  {
    client::Client client(server.grpc_address());
    Session session = client.CreateSession();
    const std::vector<float> values(4096, 1.0f);
    client::RunBuilder run;
    run.Op("Exp", {session.Put<float>(values, {64, 64})});
    session.Run(run);
    session.Detach();  // left open on purpose: shutdown must close it
  }
  const ExitStatus exit = server.Stop(SIGTERM);
  EXPECT_TRUE(exit.ok()) << exit.Describe();
}

TEST(ProcessTest, SigintExitsZero) {
  ServerProcess server;
  client::Client(server.grpc_address()).Ping();
  const ExitStatus exit = server.Stop(SIGINT);
  EXPECT_TRUE(exit.ok()) << exit.Describe();
}

// Each call counts as in flight until gRPC is done with it (its reactor's OnDone), not when
// the handler finishes: a download's last chunks and status may still be on their way then, and
// a shutdown that cancelled the remaining calls at that moment cut them off (UNAVAILABLE
// "Cancelling all calls"; 5 runs in 32 before the fix). Several downloads that end together
// make that window likely. The process then exits at once: gRPC's own teardown could wait
// 10 s more in its TCP backup poller after large transfers (about 1 run in 10 before).
TEST(ProcessTest, ShutdownLetsInFlightTransfersFinish) {
  constexpr int kDownloads = 4;
  const int64_t count = int64_t{4} << 20;  // 16 MiB of floats each, 64 MiB in all
  ServerProcess server;
  client::Client client(server.grpc_address());
  std::vector<Session> sessions;
  std::vector<client::TensorHandle> tensors;
  for (int i = 0; i < kDownloads; ++i) {
    sessions.push_back(client.CreateSession());
    tensors.push_back(sessions.back().Upload(
        client::TensorData::From<float>(std::vector<float>(count, float(i)), {count})));
    sessions.back().Detach();  // the server is gone when the test ends
  }
  std::mutex mutex;
  std::thread stopper;
  std::chrono::steady_clock::duration stop_time{};
  const auto stop_a_quarter_through = [&](int64_t done, int64_t total) {
    std::lock_guard guard(mutex);
    if (!stopper.joinable() && done * 4 >= total) {
      stopper = std::thread([&] {
        const auto start = std::chrono::steady_clock::now();
        EXPECT_TRUE(server.Stop().ok());
        stop_time = std::chrono::steady_clock::now() - start;
      });
    }
  };
  std::vector<std::string> errors(kDownloads);
  std::vector<int64_t> received(kDownloads, 0);
  std::vector<std::thread> downloads;
  for (int i = 0; i < kDownloads; ++i) {
    downloads.emplace_back([&, i] {
      try {
        received[i] = static_cast<int64_t>(
            sessions[i].Download(tensors[i], stop_a_quarter_through).bytes.size());
      } catch (const client::Error& e) {
        errors[i] = e.what();
      }
    });
  }
  for (std::thread& t : downloads) t.join();
  ASSERT_TRUE(stopper.joinable());
  stopper.join();
  for (int i = 0; i < kDownloads; ++i) {
    EXPECT_EQ(errors[i], "") << "download " << i;
    EXPECT_EQ(received[i], count * 4) << "download " << i;
  }
  // The drain ends with the downloads (about 0.1 s); well under the 10 s of gRPC's poller.
  EXPECT_LT(stop_time, std::chrono::seconds(6));
}

TEST(ProcessTest, ASessionOfAnotherInstanceIsNotFound) {
  ServerProcess first;
  ServerProcess second;
  EXPECT_NE(first.instance_id(), second.instance_id());
  client::Client client_first(first.grpc_address());
  Session session = client_first.CreateSession();
  client::Client client_second(second.grpc_address());
  EXPECT_TRUE(FailsWith([&] { client_second.AttachSession(session.id()).KeepAlive(); },
                        grpc::StatusCode::NOT_FOUND, {"session", "not found"}));
}

TEST(ProcessTest, MetricsCanBeTurnedOff) {
  ServerProcess server({"--metrics-listen", "off"});
  EXPECT_EQ(server.metrics_address(), "");
  EXPECT_EQ(client::Client(server.grpc_address()).Ping(), server.instance_id());
  EXPECT_TRUE(server.Stop().ok());
}

// glibc keeps what a burst of large transfers freed; the server gives it back once no call has
// begun for a second (server/sessions/heap_trim.h). The pool keeps nothing idle here, so what stays
// is the C heap's: measured 164-224 MiB above the start without the trim, 2-30 MiB with it.
TEST(ProcessTest, ResidentMemoryFallsBackOnceQuietAfterABurst) {
  if (HeapBytesInUse() < 0) GTEST_SKIP() << "a sanitizer's server does not use glibc's heap";
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr int kClients = 4;
  ServerProcess server({"--pool-max-idle-bytes", "0", "--metrics-listen", "off"});
  const int64_t base = ResidentBytes(server.pid());
  const std::vector<float> values(15 * kMiB, 1.0f);  // 60 MiB: one PutTensor, one GetTensor
  int64_t peak = base;
  std::atomic<int> running{kClients};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      client::Client client(server.grpc_address());
      Session session = client.CreateSession();
      const client::TensorHandle t = session.Put<float>(values, {15 * kMiB});
      EXPECT_EQ(session.Get(t).ToVector<float>().size(), values.size());
      session.Release({t});
      --running;
    });
  }
  while (running > 0) {  // a trim may come during the burst, while a long call runs alone
    peak = std::max(peak, ResidentBytes(server.pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (std::thread& t : threads) t.join();
  int64_t quiet = ResidentBytes(server.pid());
  for (int i = 0; i < 100 && quiet > base + 64 * kMiB; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    quiet = ResidentBytes(server.pid());
  }
  EXPECT_GT(peak, base + 96 * kMiB) << "the burst took no memory: nothing tested";
  EXPECT_LE(quiet, base + 64 * kMiB)
      << "RSS " << (base >> 20) << " MiB before the burst, " << (peak >> 20) << " MiB at its peak, "
      << (quiet >> 20) << " MiB once quiet";
  EXPECT_TRUE(server.Stop().ok());
}

// gRPC would share a busy port (SO_REUSEPORT) and the kernel would split new connections
// between the two servers, so a session made on one would be NOT_FOUND on the other.
TEST(ProcessTest, AGrpcPortInUseStopsTheStartWithExitCodeOne) {
  ServerProcess first({"--metrics-listen", "off"});
  const CommandResult second = RunCommand({"/usr/bin/timeout", "10", ONEMODELD_PATH, "--listen",
                                           first.grpc_address(), "--metrics-listen", "off"});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find("cannot listen on '" + first.grpc_address() + "'"), std::string::npos)
      << second.err;
  EXPECT_EQ(client::Client(first.grpc_address()).Ping(), first.instance_id());
  EXPECT_TRUE(first.Stop().ok());
}

TEST(ProcessTest, UsageErrorsExitWithCodeTwo) {
  try {
    ServerProcess server({"--no-such-flag"});
    FAIL() << "onemodeld accepted an unknown flag";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exit code 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onemodel::testing
