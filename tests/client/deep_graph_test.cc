// A session that builds an autograd chain hundreds of thousands of records deep (Runs of
// 4096 Neg operations, each continuing from the previous Run's last result) and then drops
// it (ReleaseTensors, ResetArena, CloseSession, idle expiry, or SIGTERM with the session
// open) does not crash the server (issue 19, finding 1: the chain was freed recursively and
// overflowed the worker's stack from about 200k records on).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::RunBuilder;
using client::RunOutput;
using client::Session;
using client::TensorHandle;

constexpr int kOperationsPerRun = 4096;  // the server's default --max-run-operations
// Set by tests/client/CMakeLists.txt: 52 (212,992 records, past the old crash at ~200k), fewer
// under sanitizers.
constexpr int kRuns = ONEMODEL_DEEP_GRAPH_RUNS;
constexpr int64_t kMiB = int64_t{1} << 20;

// The default flags: sessions may ask for up to 4 GiB. Two suites (two servers) so that each
// stays short: dropping a chain while the session lives, and with the session's end.
class DeepGraphTest : public ServerTest {
 protected:
  // Room for a chain: each operation costs its session about 0.6 KiB (handle, record, arena).
  Session NewDeepSession(int64_t idle_timeout_ms = 0) {
    return client().CreateSession(
        {.memory_limit_bytes = 512 * kMiB, .idle_timeout_ms = idle_timeout_ms});
  }
  // x = [3] requiring gradients, in `session`'s pool.
  static TensorHandle NewLeaf(Session& session) {
    return session.Put<float>(std::vector<float>{3}, {1}, {.requires_grad = true});
  }
  // kRuns x kOperationsPerRun negations starting from `x`, each on the previous result; every
  // handle the runs made, last one last.
  static std::vector<TensorHandle> NegChain(Session& session, const TensorHandle& x) {
    std::vector<TensorHandle> handles;
    TensorHandle last = x;
    for (int r = 0; r < kRuns; ++r) {
      RunBuilder run;
      RunOutput y = run.Op("Neg", {last});
      for (int i = 1; i < kOperationsPerRun; ++i) y = run.Op("Neg", {y});
      const client::RunResult result = session.Run(run);
      for (size_t i = 0; i < result.size(); ++i) handles.push_back(result[i]);
      last = result.back();
    }
    return handles;
  }
  // The server answers, and a new session computes.
  void ExpectAlive() {
    EXPECT_FALSE(client().Ping().empty());
    Session other = NewSession();
    RunBuilder run;
    run.Op("Neg", {other.Put<float>(std::vector<float>{4}, {1})});
    EXPECT_EQ(other.Get<float>(other.Run(run).back()), std::vector<float>{-4});
  }
};

TEST_F(DeepGraphTest, ADeepChainIsDifferentiatedAndFreedByReleasingItsHandles) {
  Session session = NewDeepSession();
  const TensorHandle x = NewLeaf(session);
  const std::vector<TensorHandle> chain = NegChain(session, x);
  const std::vector<TensorHandle> g = session.Backward(chain.back(), {x});
  EXPECT_EQ(session.Get<float>(g[0]), std::vector<float>{1}) << "(-1)^(an even count)";
  for (size_t i = 0; i < chain.size(); i += kOperationsPerRun) {
    session.Release({chain.begin() + static_cast<std::ptrdiff_t>(i),
                     chain.begin() + static_cast<std::ptrdiff_t>(i + kOperationsPerRun)});
  }
  EXPECT_EQ(session.Stats().session().handles(), 2) << "x and its gradient";
  EXPECT_EQ(session.Get<float>(x), std::vector<float>{3});
  ExpectAlive();
}

TEST_F(DeepGraphTest, ResettingTheArenaFreesADeepChain) {
  Session session = NewDeepSession();
  const TensorHandle x = NewLeaf(session);
  NegChain(session, x);
  EXPECT_EQ(session.ResetArena().stale_handles(), kRuns * kOperationsPerRun);
  EXPECT_EQ(session.Get<float>(x), std::vector<float>{3});
  ExpectAlive();
}

class DeepGraphEndTest : public DeepGraphTest {};

TEST_F(DeepGraphEndTest, ClosingTheSessionFreesADeepChain) {
  Session session = NewDeepSession();
  NegChain(session, NewLeaf(session));
  session.Close();
  ExpectAlive();
}

TEST_F(DeepGraphEndTest, AnExpiringSessionFreesADeepChain) {
  const int64_t expired = client().Stats().sessions().expired();
  {
    // 10 s: the gaps between the chain's requests must never expire it, and on a TSan build
    // of a 2-core machine under load 1 s and 3 s both did, mid-chain; Eventually waits 60 s.
    Session session = NewDeepSession(/*idle_timeout_ms=*/10000);
    NegChain(session, NewLeaf(session));
    session.Detach();  // no request at all from here on
  }
  EXPECT_TRUE(Eventually([&] { return client().Stats().sessions().expired() > expired; }));
  ExpectAlive();
}

TEST_F(DeepGraphEndTest, ADeepChainLeftOpenIsFreedAtShutdown) {
  // The suite's teardown sends SIGTERM and checks that the server exits 0.
  Session session = NewDeepSession();
  NegChain(session, NewLeaf(session));
  session.Detach();
}

}  // namespace
}  // namespace onemodel::testing
