// The onemodeld process: ready file, signals, exit status, instances.
#include <gtest/gtest.h>

#include <thread>

#include "client/lib/client.h"
#include "tests/client/server_test.h"

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

TEST(ProcessTest, ShutdownLetsAnInFlightTransferFinish) {
#ifdef __SANITIZE_THREAD__
  // 64 MiB through gRPC takes over ten minutes under TSan: every chunk gRPC copies raises a
  // race report that tests/tsan.supp then suppresses (gdb shows the time in TSan's report
  // code). The other presets run it (2.4 s).
  GTEST_SKIP() << "64 MiB through uninstrumented gRPC is too slow under ThreadSanitizer";
#endif
  ServerProcess server;
  client::Client client(server.grpc_address());
  Session session = client.CreateSession();
  const int64_t count = int64_t{16} << 20;  // 64 MiB of floats
  const client::TensorHandle big =
      session.Upload(client::TensorData::From<float>(std::vector<float>(count, 2.0f), {count}));
  session.Detach();  // the server is gone when the test ends
  std::thread stopper;
  const auto stop_a_quarter_through = [&](int64_t done, int64_t total) {
    if (!stopper.joinable() && done * 4 >= total) {
      stopper = std::thread([&] { EXPECT_TRUE(server.Stop().ok()); });
    }
  };
  std::string error;
  int64_t received = 0;
  try {
    received = static_cast<int64_t>(session.Download(big, stop_a_quarter_through).bytes.size());
  } catch (const client::Error& e) {
    error = e.what();
  }
  ASSERT_TRUE(stopper.joinable());
  stopper.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(received, count * 4);
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
