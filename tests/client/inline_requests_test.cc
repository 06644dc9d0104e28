// Where a request's server time goes (decode, queue, execute, encode in GetStats) and which
// session requests run inline on gRPC's thread (small work on an idle session) or on a worker.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::RunBuilder;
using client::RunOutput;
using client::Session;
using client::TensorHandle;

constexpr int64_t kLarge = int64_t{1} << 20;  // floats: 4 MiB, far above --inline-max-bytes

// Rpc statistics of one method, and how they moved between two readings.
struct RpcDelta {
  double latency, decode, queue, execute, encode;
  int64_t requests, inlined;
};

class InlineRequestsTest : public ServerTest {
 protected:
  // The counters of the RPC `name` (zero when never called).
  v1::RpcStats Rpc(const std::string& name) {
    const v1::Stats stats = client().Stats();
    for (const v1::RpcStats& rpc : stats.rpcs()) {
      if (rpc.method() == name) return rpc;
    }
    return {};
  }
  static RpcDelta Delta(const v1::RpcStats& a, const v1::RpcStats& b) {
    return {b.latency_sum_seconds() - a.latency_sum_seconds(),
            b.decode_seconds() - a.decode_seconds(),
            b.queue_seconds() - a.queue_seconds(),
            b.execute_seconds() - a.execute_seconds(),
            b.encode_seconds() - a.encode_seconds(),
            b.requests() - a.requests(),
            b.inline_requests() - a.inline_requests()};
  }
  // A Run of `count` chained Adds of x (each reads 2 and writes 1 of x's size).
  static RunBuilder Chain(const TensorHandle& x, int count) {
    RunBuilder run;
    RunOutput y = run.Op("Add", {x, x});
    for (int i = 1; i < count; ++i) y = run.Op("Add", {y, x});
    return run.ResetArena();
  }
};

TEST_F(InlineRequestsTest, SmallRequestsRunInlineAndLargeOnesOnAWorker) {
  Session session = NewSession();
  const TensorHandle small = session.Put<float>(std::vector<float>(16, 1.0f), {16});
  const TensorHandle large = session.Put<float>(std::vector<float>(kLarge, 1.0f), {kLarge});

  v1::RpcStats before = Rpc("Run");
  session.Run(Chain(small, 1));
  RpcDelta d = Delta(before, Rpc("Run"));
  EXPECT_EQ(d.requests, 1);
  EXPECT_EQ(d.inlined, 1) << "an Add of 16 floats on an idle session";

  before = Rpc("Run");
  session.Run(Chain(large, 1));
  d = Delta(before, Rpc("Run"));
  EXPECT_EQ(d.requests, 1);
  EXPECT_EQ(d.inlined, 0) << "an Add of 4 MiB goes to a worker";

  before = Rpc("DescribeTensor");
  session.Describe(small);
  EXPECT_EQ(Delta(before, Rpc("DescribeTensor")).inlined, 1) << "touches no values";
  before = Rpc("GetTensor");
  EXPECT_EQ(session.Get<float>(small), std::vector<float>(16, 1.0f));
  EXPECT_EQ(Delta(before, Rpc("GetTensor")).inlined, 1);
}

TEST_F(InlineRequestsTest, SlowWorkShowsInExecuteAndTensorValuesInDecodeAndEncode) {
  Session session = NewSession();
  v1::RpcStats before = Rpc("PutTensor");
  const TensorHandle x = session.Put<float>(std::vector<float>(kLarge, 1.0f), {kLarge});
  RpcDelta put = Delta(before, Rpc("PutTensor"));
  EXPECT_GT(put.decode, 0) << "4 MiB of raw_data into a tensor";

  before = Rpc("Run");
  session.Run(Chain(x, 20));  // 20 x 12 MiB touched
  const RpcDelta run = Delta(before, Rpc("Run"));
  EXPECT_GT(run.execute, 0.5 * run.latency);
  EXPECT_GT(run.execute, 10 * run.queue) << "nothing ran before it";
  EXPECT_EQ(run.decode, 0) << "no inline tensors";
  EXPECT_EQ(run.encode, 0);
  EXPECT_NEAR(run.decode + run.queue + run.execute + run.encode, run.latency, 1e-6);

  before = Rpc("GetTensor");
  session.Get<float>(x);
  EXPECT_GT(Delta(before, Rpc("GetTensor")).encode, 0) << "4 MiB into raw_data";
}

TEST_F(InlineRequestsTest, ARequestWaitingBehindItsSessionShowsInQueue) {
  Session session = NewSession();
  const TensorHandle x = session.Put<float>(std::vector<float>(kLarge, 1.0f), {kLarge});
  const int64_t rented = client().Stats().pool().rented_bytes();
  // A client Session is one thread's: the other thread attaches its own to the same session.
  std::thread slow([&, id = session.id()] {
    client().AttachSession(id).Run(Chain(x, 100));  // 0.1-0.2 s released, seconds in debug
  });
  // The run has started once its arena rents memory from the pool.
  ASSERT_TRUE(Eventually([&] { return client().Stats().pool().rented_bytes() > rented; }));
  const v1::RpcStats before = Rpc("DescribeTensor");
  session.Describe(x);  // waits for the run
  const RpcDelta describe = Delta(before, Rpc("DescribeTensor"));
  slow.join();
  EXPECT_EQ(describe.requests, 1);
  EXPECT_EQ(describe.inlined, 0) << "the session was busy: it waited on the strand";
  EXPECT_GT(describe.queue, 0.5 * describe.latency);
  EXPECT_GT(describe.queue, 10 * describe.execute);
}

TEST_F(InlineRequestsTest, ConcurrentSmallAndLargeRequestsOfOneSessionEachSeeTheirOwnResults) {
  Session session = NewSession();
  const TensorHandle large = session.Put<float>(std::vector<float>(kLarge, 1.0f), {kLarge});
  const int64_t requests_before = session.Stats().session().requests();
  constexpr int kThreads = 4;
  constexpr int kRounds = 25;
  std::atomic<int> requests{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Session mine = client().AttachSession(session.id());  // a client Session per thread
      for (int r = 0; r < kRounds; ++r) {
        const float v = static_cast<float>(t * 1000 + r);
        const TensorHandle s = mine.Put<float>(std::vector<float>(16, v), {16});
        RunBuilder run;
        const RunOutput doubled = run.Op("Add", {s, s});
        const client::RunResult result = mine.Run(run);
        EXPECT_EQ(mine.Get<float>(result[doubled]), std::vector<float>(16, 2 * v));
        mine.Release({s, result[doubled]});
        requests += 4;
        if (t == 0 && r % 5 == 0) {  // a large one among them, on a worker
          RunBuilder big;
          const RunOutput sum = big.Op("Sum", {big.Op("Add", {large, large})});
          EXPECT_EQ(mine.Get<float>(mine.Run(big)[sum]),
                    std::vector<float>{2.0f * static_cast<float>(kLarge)});
          requests += 2;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(session.Stats().session().requests() - requests_before, requests.load())
      << "every request ran once, one at a time, and was counted";
}

class InlineOffTest : public InlineRequestsTest {
 protected:
  static void SetUpTestSuite() { StartServer({"--inline-max-bytes", "0"}); }
};

TEST_F(InlineOffTest, EveryRequestGoesToAWorker) {
  Session session = NewSession();
  const TensorHandle small = session.Put<float>(std::vector<float>(16, 1.0f), {16});
  const v1::RpcStats before = Rpc("Run");
  session.Run(Chain(small, 1));
  const RpcDelta d = Delta(before, Rpc("Run"));
  EXPECT_EQ(d.requests, 1);
  EXPECT_EQ(d.inlined, 0);
}

}  // namespace
}  // namespace onemodel::testing
