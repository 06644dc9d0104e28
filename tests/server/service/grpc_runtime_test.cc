// QuietAbseilMutexes (proto/grpc_runtime.h) as the server and the client apply it: abseil's
// lock-order tracking, on in Debian's libabsl, is off once either has started. Each test runs
// in a child process of its own (the setting is process-wide and cannot be undone).
#include "proto/grpc_runtime.h"

#include <absl/synchronization/mutex.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "client/lib/client.h"
#include "server/server.h"

namespace onemodel {
namespace {

// Locks two mutexes in one order, then in the other. With lock-order tracking on, abseil sees
// a potential deadlock at the second order and aborts the process.
void LockInBothOrders() {
  absl::Mutex a, b;
  {
    absl::MutexLock first(&a);
    absl::MutexLock second(&b);
  }
  {
    absl::MutexLock first(&b);
    absl::MutexLock second(&a);
  }
}

class GrpcRuntimeDeathTest : public ::testing::Test {
 protected:
  // A fresh process per child: the parent has threads (gRPC's), and a setting made in one
  // child must not reach the next.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// The premise of the tests below: without QuietAbseilMutexes the inversion aborts, so they
// would fail if the server or the client did not call it.
TEST_F(GrpcRuntimeDeathTest, DebiansAbseilTracksLockOrder) {
  EXPECT_DEATH(LockInBothOrders(), "potential deadlock");
}

TEST_F(GrpcRuntimeDeathTest, QuietAbseilMutexesStopsTheTracking) {
  EXPECT_EXIT(
      {
        QuietAbseilMutexes();
        LockInBothOrders();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GrpcRuntimeDeathTest, AServerStopsIt) {
  EXPECT_EXIT(
      {
        server::ServerConfig config;
        config.listen = "127.0.0.1:0";
        config.metrics_listen = "";
        config.workers = 1;
        server::Server server(config);
        LockInBothOrders();
        std::_Exit(0);  // without gRPC's teardown: the exit code is the test
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GrpcRuntimeDeathTest, AClientStopsIt) {
  EXPECT_EXIT(
      {
        client::Client client("127.0.0.1:1");  // never called: it connects lazily
        LockInBothOrders();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace onemodel
