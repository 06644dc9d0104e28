// RunLoad against a real onemodeld: both steps run without errors, --requests stops after
// whole steps, the timed phases last as asked, memory stays flat, progress is reported, and a
// session that cannot be set up is named in the error.
#include "client/load/load_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using load::LoadOptions;
using load::LoadResult;
using load::StepKind;
using ::testing::HasSubstr;

class LoadRunnerTest : public ServerTest {
 protected:
  LoadOptions Options(StepKind step, int sessions) {
    LoadOptions options;
    options.connection.server = server().grpc_address();
    options.step = step;
    options.sessions = sessions;
    options.warmup_s = 0.2;
    options.batch = 4;
    options.width = 16;
    options.size = 256;
    options.check = true;
    return options;
  }
};

TEST_F(LoadRunnerTest, RequestCountStopsAfterWholeMlpSteps) {
  LoadOptions options = Options(StepKind::kMlp, 2);
  options.requests = 11;
  const LoadResult result = load::RunLoad(client(), options, {});
  EXPECT_EQ(result.measured.requests(), 12);  // 6 steps of Run + Backward
  EXPECT_EQ(result.measured.steps, 6);
  EXPECT_EQ(result.measured.latency.count(), 12);
  EXPECT_EQ(result.measured.errors(), 0);
  EXPECT_GT(result.warmup.steps, 0);
}

TEST_F(LoadRunnerTest, ChainStepIsOneRequestAndLeavesMemoryFlat) {
  LoadOptions options = Options(StepKind::kChain, 3);
  options.requests = 60;
  const LoadResult result = load::RunLoad(client(), options, {});
  EXPECT_EQ(result.measured.requests(), 60);
  EXPECT_EQ(result.measured.steps, 60);
  ASSERT_TRUE(result.after_warmup.ok) << result.after_warmup.error;
  ASSERT_TRUE(result.end.ok) << result.end.error;
  ASSERT_EQ(result.after_warmup.sessions.size(), 3);
  ASSERT_EQ(result.end.sessions.size(), 3);
  int64_t resets = 0;
  for (size_t i = 0; i < 3; ++i) {
    resets +=
        result.end.sessions[i].arena().resets() - result.after_warmup.sessions[i].arena().resets();
    EXPECT_EQ(result.end.sessions[i].handles(), result.after_warmup.sessions[i].handles());
  }
  EXPECT_EQ(resets, 60);  // every step reset its arena
  const load::Flatness flat = load::FlatnessOf(result);
  EXPECT_EQ(flat.rented_bytes_delta, 0);
  EXPECT_EQ(flat.arena_growth_events, 0);
  EXPECT_EQ(flat.arena_allocations, 60 * options.chain_length);
  EXPECT_THAT(load::CheckFailures(result), ::testing::IsEmpty());
}

TEST_F(LoadRunnerTest, SessionsAreOpenDuringTheRunAndClosedAfter) {
  LoadOptions options = Options(StepKind::kChain, 2);
  options.requests = 4;
  const LoadResult result = load::RunLoad(client(), options, {});
  EXPECT_EQ(result.end.server.sessions().open(), result.before.server.sessions().open() + 2);
  EXPECT_EQ(result.after_close.server.sessions().open(), result.before.server.sessions().open());
  EXPECT_TRUE(result.after_close.sessions.empty());
}

TEST_F(LoadRunnerTest, TimedMlpRunLastsItsDurationAndReportsProgress) {
  LoadOptions options = Options(StepKind::kMlp, 2);
  options.duration_s = 1;
  std::vector<load::LoadProgress> ticks;
  const LoadResult result =
      load::RunLoad(client(), options, [&](const load::LoadProgress& p) { ticks.push_back(p); });
  EXPECT_GE(result.warmup_seconds, 0.2);
  EXPECT_GE(result.seconds, 1.0);
  EXPECT_LT(result.seconds, 3.0);
  EXPECT_GT(result.measured.steps, 0);
  EXPECT_EQ(result.measured.errors(), 0);
  EXPECT_THAT(load::CheckFailures(result), ::testing::IsEmpty());
  ASSERT_GE(ticks.size(), 3);
  EXPECT_FALSE(ticks.back().warming_up);
  EXPECT_EQ(ticks.back().total_seconds, 1);
  EXPECT_EQ(ticks.back().requests, result.measured.requests());
}

TEST_F(LoadRunnerTest, OpenLoopTransferRunsAtItsRateWithPutAndGetTimed) {
  LoadOptions options = Options(StepKind::kTransfer, 2);
  options.transfer_bytes = 4096;
  options.rate = 200;  // 100 steps/s of Put + Get
  options.duration_s = 1;
  const LoadResult result = load::RunLoad(client(), options, {});
  ASSERT_EQ(result.rates.size(), 1);
  const load::RatePhase& phase = result.rates[0];
  EXPECT_EQ(phase.rate_per_s, 200);
  EXPECT_EQ(phase.due, 100);
  EXPECT_EQ(phase.log.steps + phase.unsent, 100);
  EXPECT_GE(phase.log.steps, 50);
  EXPECT_EQ(phase.log.errors(), 0);
  EXPECT_EQ(phase.log.step_latency.count(), phase.log.steps);
  const auto& by_rpc = result.measured.by_rpc;
  EXPECT_EQ(by_rpc[load::RpcIndex(load::Rpc::kPut)].count(), phase.log.steps);
  EXPECT_EQ(by_rpc[load::RpcIndex(load::Rpc::kGet)].count(), phase.log.steps);
  EXPECT_EQ(by_rpc[load::RpcIndex(load::Rpc::kRun)].count(), 0);
  EXPECT_EQ(result.measured.steps, phase.log.steps);
  EXPECT_THAT(load::CheckFailures(result), ::testing::IsEmpty());  // Put into its target: flat
}

TEST_F(LoadRunnerTest, TimeSeriesCountsEveryMeasuredStepAndReadsTheServer) {
  LoadOptions options = Options(StepKind::kChain, 2);
  options.duration_s = 1.5;
  const LoadResult result = load::RunLoad(client(), options, {});
  ASSERT_EQ(result.series.size(), 2);  // 1 s and the last 0.5 s
  EXPECT_TRUE(result.rates.empty());   // closed loop
  int64_t steps = 0;
  for (const load::SeriesPoint& point : result.series) {
    steps += point.steps;
    EXPECT_EQ(point.rate_per_s, 0);
  }
  EXPECT_EQ(steps, result.measured.steps + result.measured.errors());
  EXPECT_TRUE(result.series[0].server_read);
  EXPECT_GT(result.series[0].pool_rented_bytes, 0);           // the sessions' x tensors
  EXPECT_EQ(result.series[0].arena_reserved_bytes, 2 << 20);  // a 1 MiB chunk each
}

TEST_F(LoadRunnerTest, UnreachableServerNamesTheSessionThatFailed) {
  LoadOptions options = Options(StepKind::kMlp, 2);
  options.connection.server = "127.0.0.1:1";
  client::Client unreachable(options.connection.server);
  try {
    load::RunLoad(unreachable, options, {});
    FAIL() << "RunLoad succeeded without a server";
  } catch (const client::Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(e.what(), HasSubstr("setting up session 1 of 2: CreateSession failed"));
  }
}

}  // namespace
}  // namespace onemodel::testing
