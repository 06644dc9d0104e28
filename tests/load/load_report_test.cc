// The table and JSON reports of a known LoadResult, and the progress line.
#include "client/load/load_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include "client/load/load_progress.h"
#include "tests/common/parse_json.h"
#include "tests/load/sample_result.h"

namespace onemodel::load {
namespace {

using nlohmann::json;
using onemodel::testing::ParseJson;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(LoadReportTest, JsonCarriesTheMeasuredNumbers) {
  const json root = ParseJson(FormatJson(SampleResult()));
  EXPECT_EQ(root.at("tool").get<std::string>(), "onemodel-load");
  EXPECT_EQ(root.at("requests").get<double>(), 100);
  EXPECT_EQ(root.at("requests_per_s").get<double>(), 20);
  EXPECT_EQ(root.at("steps").get<double>(), 49);
  EXPECT_NEAR(root.at("steps_per_s").get<double>(), 9.8, 1e-9);
  EXPECT_EQ(root.at("seconds").get<double>(), 5);
  const json& latency = root.at("latency_us");
  EXPECT_NEAR(latency.at("p50").get<double>(), 500, 500 / 64.0);
  EXPECT_NEAR(latency.at("p99").get<double>(), 990, 990 / 64.0);
  EXPECT_EQ(latency.at("p99_9").get<double>(), 1000);
  EXPECT_EQ(latency.at("max").get<double>(), 1000);
  EXPECT_EQ(latency.at("min").get<double>(), 10);
  EXPECT_EQ(latency.at("mean").get<double>(), 505);
  EXPECT_EQ(root.at("errors").at("total").get<double>(), 1);
  EXPECT_EQ(root.at("errors").at("by_code").at("UNAVAILABLE").get<double>(), 1);
  EXPECT_EQ(root.at("warmup").at("requests").get<double>(), 20);
  EXPECT_EQ(root.at("warmup").at("errors").get<double>(), 0);
}

TEST(LoadReportTest, JsonIsVersionedAndSplitsLatencyByRpcAndStep) {
  const json root = ParseJson(FormatJson(SampleResult()));
  EXPECT_EQ(root.at("schema_version").get<int>(), kLoadReportSchemaVersion);
  const json& rpcs = root.at("rpc_latency_us");
  EXPECT_EQ(rpcs.size(), 2);  // the RPCs the mlp step made
  EXPECT_EQ(rpcs.at("Run").at("count").get<double>(), 50);
  EXPECT_NEAR(rpcs.at("Run").at("max").get<double>(), 990, 1e-9);
  EXPECT_EQ(rpcs.at("Backward").at("max").get<double>(), 1000);
  EXPECT_EQ(root.at("step_latency_us").at("max").get<double>(), 2000);
  EXPECT_EQ(root.at("rates"), json::array());  // closed loop
  EXPECT_TRUE(root.at("knee").is_null());
  EXPECT_TRUE(root.at("config").at("rate_per_s").is_null());
  EXPECT_TRUE(root.at("config").at("sweep_rates_per_s").is_null());
}

// SampleResult as if it were a sweep of three rates, the third above the 2 ms bound.
LoadResult SweepResult() {
  LoadResult result = SampleResult();
  result.options.sweep = {100, 1000, 10000};
  result.options.p99_bound_ms = 2;
  for (const auto& [rate, step_ms, unsent] :
       {std::tuple{100.0, 1, 0}, {1000.0, 1, 0}, {10000.0, 40, 7000}}) {
    RatePhase phase;
    phase.rate_per_s = rate;
    phase.seconds = 2;
    phase.due = static_cast<int64_t>(rate) * 2;
    phase.unsent = unsent;
    for (int i = 0; i < 10; ++i) {
      phase.log.step_latency.Record(std::chrono::milliseconds(step_ms));
      phase.log.latency.Record(std::chrono::milliseconds(step_ms));
    }
    phase.log.by_code[grpc::StatusCode::OK] = 10;
    phase.log.steps = 10;
    result.rates.push_back(std::move(phase));
  }
  return result;
}

TEST(LoadReportTest, JsonCarriesEachRateAndTheKnee) {
  const json root = ParseJson(FormatJson(SweepResult()));
  const json& rates = root.at("rates");
  ASSERT_EQ(rates.size(), 3);
  EXPECT_EQ(rates[2].at("rate_per_s").get<double>(), 10000);
  EXPECT_EQ(rates[2].at("due_steps").get<double>(), 20000);
  EXPECT_EQ(rates[2].at("unsent_steps").get<double>(), 7000);
  EXPECT_EQ(rates[2].at("requests_per_s").get<double>(), 5);
  EXPECT_NEAR(rates[2].at("step_latency_us").at("p99").get<double>(), 40000, 40000 / 64.0);
  const json& knee = root.at("knee");
  EXPECT_TRUE(knee.at("found").get<bool>());
  EXPECT_TRUE(knee.at("limited").get<bool>());
  EXPECT_EQ(knee.at("rate_per_s").get<double>(), 1000);
  EXPECT_EQ(knee.at("p99_bound_ms").get<double>(), 2);
  EXPECT_EQ(root.at("config").at("sweep_rates_per_s").size(), 3);
}

TEST(LoadReportTest, TableListsTheRatesAndTheKnee) {
  LoadResult result = SweepResult();
  std::string table = FormatTable(result);
  EXPECT_THAT(table, HasSubstr("open-loop sweep of 3 rates from 100.0 to 10000.0 requests/s"));
  EXPECT_THAT(table, HasSubstr("     10000.0          5.0        10      7000         0"));
  EXPECT_THAT(table, HasSubstr("at most 2 steps outstanding (one per session)"));
  EXPECT_THAT(table, HasSubstr("knee: 1000.0 requests/s (the highest rate held with p99 <= 2 ms"));
  result.rates.pop_back();
  EXPECT_THAT(FormatTable(result), HasSubstr("knee: above the sweep"));
  result.options.p99_bound_ms = 0.5;
  EXPECT_THAT(FormatTable(result), HasSubstr("knee: not found: the lowest rate broke"));
}

TEST(LoadReportTest, LowRatesKeepTheirDigits) {
  LoadResult result = SampleResult();
  result.options.rate = 0.001;
  result.seconds = 3;
  result.measured = RequestLog();
  result.measured.by_code[grpc::StatusCode::OK] = 2;
  result.measured.steps = 1;
  RatePhase phase;
  phase.rate_per_s = 0.001;
  phase.seconds = 3;
  phase.log = result.measured;
  result.rates = {phase};
  const std::string table = FormatTable(result);
  EXPECT_THAT(table, HasSubstr("open loop at 0.001 requests/s"));
  EXPECT_THAT(table, HasSubstr("requests                      2          0.667\n"));
  EXPECT_THAT(table, HasSubstr("steps                         1          0.333\n"));
  EXPECT_THAT(table, HasSubstr("       0.001        0.667         1"));
  result.options.rate = 0;
  result.options.sweep = {0.01, 0.1};
  EXPECT_THAT(FormatTable(result), HasSubstr("sweep of 2 rates from 0.01 to 0.1 requests/s"));
}

TEST(LoadReportTest, JsonDescribesTheConfiguration) {
  const json root = ParseJson(FormatJson(SampleResult()));
  const json& config = root.at("config");
  EXPECT_EQ(config.at("sessions").get<double>(), 2);
  EXPECT_EQ(config.at("step").get<std::string>(), "mlp");
  EXPECT_EQ(config.at("batch").get<double>(), 32);
  EXPECT_EQ(config.at("width").get<double>(), 128);
  EXPECT_EQ(config.at("requests_per_step").get<double>(), 2);
  EXPECT_TRUE(config.at("requests").is_null());
  EXPECT_EQ(config.at("duration_s").get<double>(), 5);
  EXPECT_EQ(config.at("kernels").get<std::string>(), "default");

  LoadResult chain = SampleResult();
  chain.options.step = StepKind::kChain;
  chain.options.requests = 500;
  const json chain_config = ParseJson(FormatJson(chain)).at("config");
  EXPECT_EQ(chain_config.at("chain_length").get<double>(), 8);
  EXPECT_EQ(chain_config.at("requests").get<double>(), 500);
  EXPECT_TRUE(chain_config.at("duration_s").is_null());
  EXPECT_FALSE(chain_config.contains("batch"));
}

TEST(LoadReportTest, JsonCarriesServerSamplesFlatnessAndCheck) {
  LoadResult result = SampleResult();
  AddGrowthEvents(result.end.sessions[1], 2);
  result.after_close = UnreadableSample("Stats failed: \"UNAVAILABLE\"");
  const json root = ParseJson(FormatJson(result));
  const json& server = root.at("server");
  EXPECT_EQ(server.at("after_warmup").at("pool").at("rented_bytes").get<double>(), 2 << 20);
  const auto& sessions = server.at("end").at("sessions");
  ASSERT_EQ(sessions.size(), 2);
  EXPECT_EQ(sessions[1].at("arena_growth_events").get<double>(), 22);
  EXPECT_EQ(sessions[0].at("handles").get<double>(), 13);
  EXPECT_FALSE(server.at("after_close").at("ok").get<bool>());
  EXPECT_EQ(server.at("after_close").at("error").get<std::string>(),
            "Stats failed: \"UNAVAILABLE\"");
  const json& flatness = root.at("flatness");
  EXPECT_TRUE(flatness.at("known").get<bool>());
  EXPECT_EQ(flatness.at("rented_bytes_delta").get<double>(), 0);
  EXPECT_EQ(flatness.at("arena_growth_events").get<double>(), 2);
  EXPECT_EQ(flatness.at("arena_allocations").get<double>(), 750);
  const json& check = root.at("check");
  EXPECT_TRUE(check.at("enabled").get<bool>());
  EXPECT_FALSE(check.at("passed").get<bool>());
  EXPECT_EQ(check.at("failures").size(), 2);  // the error, the growth
}

TEST(LoadReportTest, TableSummarizesThroughputLatencyMemoryAndCheck) {
  const std::string table = FormatTable(SampleResult());
  EXPECT_THAT(table, HasSubstr("2 sessions, step mlp (batch 32, width 128; Run + Backward"));
  // The header counts the measured requests; the warm-up's are named as such.
  EXPECT_THAT(table, HasSubstr("closed loop (each session sends its next step when the last"));
  EXPECT_THAT(table,
              HasSubstr("measured 5.0 s (100 requests, 1 errors) after a 1.0 s warm-up of 20 "
                        "requests\n"));
  EXPECT_THAT(table, HasSubstr("requests                    100           20.0"));
  EXPECT_THAT(table, HasSubstr("steps                        49            9.8"));
  EXPECT_THAT(table, HasSubstr("errors                        1  UNAVAILABLE 1"));
  EXPECT_THAT(table, HasSubstr("latency ms           count       p50       p90       p99     "
                               "p99.9       max      mean\n"));
  // Percentiles are the upper edges of the histogram's buckets (within 1/64).
  EXPECT_THAT(table, HasSubstr("requests               100     0.504     0.901     0.991     "
                               "1.000     1.000     0.505\n"));
  EXPECT_THAT(table, HasSubstr("  Run                   50 "));
  EXPECT_THAT(table, HasSubstr("  Backward              50 "));
  EXPECT_THAT(table, Not(HasSubstr("  Put ")));  // no request of it
  EXPECT_THAT(table, HasSubstr("steps                   50     1.008 "));
  EXPECT_THAT(table, Not(HasSubstr("rate req/s")));  // closed loop: no rates
  EXPECT_THAT(
      table,
      HasSubstr("rented bytes                    0        2097152        2097152              0"));
  EXPECT_THAT(table, HasSubstr("growth events                  40             40             +0"));
  EXPECT_THAT(table, HasSubstr("allocations                   150            900           +750"));
  EXPECT_THAT(table, HasSubstr("after warm-up: rented bytes +0, arena growth events 0"));
  EXPECT_THAT(table, HasSubstr("check: FAILED\n  - 1 requests failed (UNAVAILABLE 1;"));
}

TEST(LoadReportTest, FailedStepsHaveTheirOwnLatencyRowAndField) {
  LoadResult result = SampleResult();
  EXPECT_THAT(FormatTable(result), Not(HasSubstr("failed steps")));  // none failed: no row
  EXPECT_EQ(ParseJson(FormatJson(result)).at("failed_step_latency_us").at("count").get<double>(),
            0);
  result.measured.failed_step_latency.Record(std::chrono::microseconds(20));
  EXPECT_THAT(FormatTable(result), HasSubstr("failed steps             1     0.020 "));
  const json root = ParseJson(FormatJson(result));
  EXPECT_EQ(root.at("failed_step_latency_us").at("max").get<double>(), 20);
  EXPECT_EQ(root.at("step_latency_us").at("max").get<double>(), 2000);  // apart
}

TEST(LoadReportTest, TableSaysWhenTheCheckPassedOrWasNotAsked) {
  LoadResult result = SampleResult();
  result.measured.by_code[grpc::StatusCode::UNAVAILABLE] = 0;
  EXPECT_THAT(FormatTable(result), HasSubstr("check: passed\n"));
  result.options.check = false;
  EXPECT_THAT(FormatTable(result), HasSubstr("check: not requested (--check)\n"));
}

TEST(LoadReportTest, TableMarksUnreadableStatistics) {
  LoadResult result = SampleResult();
  result.before = UnreadableSample("Stats failed: UNAVAILABLE: connection refused");
  const std::string table = FormatTable(result);
  EXPECT_THAT(table, HasSubstr("rented bytes                    ?"));
  EXPECT_THAT(table, HasSubstr("statistics unavailable: Stats failed: UNAVAILABLE"));
  EXPECT_THAT(FormatTable(SampleResult()), Not(HasSubstr("unavailable")));
}

TEST(LoadReportTest, ArenaTableMarksUnreadableStatisticsLikeThePoolTable) {
  LoadResult result = SampleResult();
  result.end = UnreadableSample("Stats failed: UNAVAILABLE: the server died");
  const std::string table = FormatTable(result);
  EXPECT_THAT(table,
              HasSubstr("growth events                  40              ?              ?\n"));
  EXPECT_THAT(table, Not(HasSubstr("-40")));
  result = SampleResult();
  result.after_warmup = UnreadableSample("Stats failed: DEADLINE_EXCEEDED");
  EXPECT_THAT(FormatTable(result),
              HasSubstr("growth events                   ?             40              ?\n"));
}

TEST(LoadProgressTest, TimedPhasesShowSecondsAndRate) {
  EXPECT_EQ(
      FormatLoadProgress(
          {.warming_up = true, .seconds = 4, .total_seconds = 10, .requests = 800, .errors = 0}),
      "warm-up [########............]  40%        4.0/10.0 s       200 req/s  0 errors");
  EXPECT_EQ(
      FormatLoadProgress(
          {.warming_up = false, .seconds = 6, .total_seconds = 60, .requests = 6000, .errors = 3}),
      "load    [##..................]  10%        6.0/60.0 s      1000 req/s  3 errors");
}

TEST(LoadProgressTest, CountedPhaseShowsRequestsAndStopsAtFull) {
  EXPECT_EQ(FormatLoadProgress(
                {.warming_up = false, .seconds = 2, .requests = 150, .total_requests = 1000}),
            "load    [###.................]  15%  150/1000 requests        75 req/s  0 errors");
  EXPECT_THAT(FormatLoadProgress(
                  {.warming_up = false, .seconds = 2, .requests = 1002, .total_requests = 1000}),
              HasSubstr("[####################] 100%"));
}

}  // namespace
}  // namespace onemodel::load
