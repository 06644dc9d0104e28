// Many sessions at once: each thread owns a session, runs a mixed workload and checks its own
// results; handles never cross between sessions; the pool returns to where it started.
#include <gtest/gtest.h>

#include <cmath>
#include <latch>
#include <thread>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::RunBuilder;
using client::RunOutput;
using client::Session;
using client::TensorHandle;

constexpr int kThreads = 16;
constexpr int kRounds = 12;
constexpr int kN = 8;  // square matrices of kN x kN

void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected,
                 const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-4f * std::max(1.0f, std::fabs(expected[i])))
        << what << " element " << i;
  }
}

// One round: relu(x w) and its sum, the gradient of sum(x * w) by x, Softmax; with the arena
// reset by the run itself and the inputs released at the end.
void Round(Session& session, int thread, int round) {
  const std::string what = "thread " + std::to_string(thread) + " round " + std::to_string(round);
  const std::vector<float> x = RandomFloats(kN * kN, thread * 1000 + round);
  const std::vector<float> w = RandomFloats(kN * kN, thread * 1000 + round + 500);
  const TensorHandle hx = session.Put<float>(x, {kN, kN}, {.requires_grad = true});
  const TensorHandle hw = session.Put<float>(w, {kN, kN});
  RunBuilder run;
  const RunOutput relu = run.Op("Relu", {run.Op("MatMul", {hx, hw})});
  const RunOutput relu_sum = run.Op("Sum", {relu});
  const RunOutput dot = run.Op("Sum", {run.Op("Mul", {hx, hw})});
  const RunOutput soft = run.Op("Softmax", {hx}, {{"axis", -1}});
  const client::RunResult result = session.Run(run.ResetArena());

  std::vector<float> expected_relu(kN * kN, 0.0f);
  float expected_sum = 0;
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      float v = 0;
      for (int k = 0; k < kN; ++k) v += x[i * kN + k] * w[k * kN + j];
      expected_relu[i * kN + j] = std::max(v, 0.0f);
      expected_sum += expected_relu[i * kN + j];
    }
  }
  ExpectClose(session.Get<float>(result[relu]), expected_relu, what + " relu(x w)");
  ExpectClose(session.Get<float>(result[relu_sum]), {expected_sum}, what + " sum");
  const std::vector<float> soft_values = session.Get<float>(result[soft]);
  for (int i = 0; i < kN; ++i) {
    float row = 0;
    for (int j = 0; j < kN; ++j) row += soft_values[i * kN + j];
    ASSERT_NEAR(row, 1.0f, 1e-5f) << what << " softmax row " << i;
  }
  ExpectClose(session.Get<float>(session.Backward(result[dot], {hx})[0]), w, what + " grad");
  EXPECT_EQ(session.Release({hx, hw}), 2) << what;
}

class ConcurrencyTest : public ServerTest {};

TEST_F(ConcurrencyTest, SixteenSessionsRunInParallelWithoutInterference) {
  const v1::Stats before = client().Stats();
  std::vector<std::string> published(kThreads);  // one pool handle of each session
  std::latch all_published(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      bool arrived = false;
      try {
        Session session = NewSession(t % 2 == 0 ? v1::KERNEL_CHOICE_EXACT : v1::KERNEL_CHOICE_FAST);
        const TensorHandle mine = session.Put<float>(std::vector<float>{float(t)}, {1});
        published[t] = mine.id();
        arrived = true;
        all_published.arrive_and_wait();
        const TensorHandle neighbour(published[(t + 1) % kThreads]);
        EXPECT_TRUE(FailsWith([&] { session.Get(neighbour); }, grpc::StatusCode::NOT_FOUND,
                              {neighbour.id()}))
            << "thread " << t;
        for (int round = 0; round < kRounds; ++round) Round(session, t, round);
        EXPECT_EQ(session.Get<float>(mine), std::vector<float>{float(t)});
        session.Release({mine});
        EXPECT_EQ(session.Close().released_buffers(), 0) << "thread " << t;
      } catch (const std::exception& e) {
        if (!arrived) all_published.count_down();
        ADD_FAILURE() << "thread " << t << ": " << e.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  const v1::Stats after = client().Stats();
  EXPECT_EQ(after.sessions().created() - before.sessions().created(), kThreads);
  EXPECT_EQ(after.sessions().open(), before.sessions().open());
  EXPECT_EQ(after.pool().rented_bytes(), before.pool().rented_bytes());
  EXPECT_EQ(after.pool().rented_buffers(), before.pool().rented_buffers());
}

}  // namespace
}  // namespace onemodel::testing
