// The table and JSON reports of a known LoadResult, and the progress line.
#include "client/load/load_report.h"

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "client/load/load_progress.h"
#include "tests/load/sample_result.h"

namespace onemodel::load {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using ::testing::HasSubstr;
using ::testing::Not;

// The JSON report of `result`, parsed; fails the test when it is not valid JSON.
Struct ParsedJson(const LoadResult& result) {
  Struct json;
  const auto status = google::protobuf::util::JsonStringToMessage(FormatJson(result), &json);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << FormatJson(result);
  return json;
}

// The member `key` of the object `value`.
const Value& At(const Value& value, const std::string& key) {
  return value.struct_value().fields().at(key);
}

TEST(LoadReportTest, JsonCarriesTheMeasuredNumbers) {
  Value root;
  *root.mutable_struct_value() = ParsedJson(SampleResult());
  EXPECT_EQ(At(root, "tool").string_value(), "onemodel-load");
  EXPECT_EQ(At(root, "requests").number_value(), 100);
  EXPECT_EQ(At(root, "requests_per_s").number_value(), 20);
  EXPECT_EQ(At(root, "steps").number_value(), 49);
  EXPECT_NEAR(At(root, "steps_per_s").number_value(), 9.8, 1e-9);
  EXPECT_EQ(At(root, "seconds").number_value(), 5);
  const Value& latency = At(root, "latency_us");
  EXPECT_NEAR(At(latency, "p50").number_value(), 500, 500 / 64.0);
  EXPECT_NEAR(At(latency, "p99").number_value(), 990, 990 / 64.0);
  EXPECT_EQ(At(latency, "p99_9").number_value(), 1000);
  EXPECT_EQ(At(latency, "max").number_value(), 1000);
  EXPECT_EQ(At(latency, "min").number_value(), 10);
  EXPECT_EQ(At(latency, "mean").number_value(), 505);
  EXPECT_EQ(At(At(root, "errors"), "total").number_value(), 1);
  EXPECT_EQ(At(At(At(root, "errors"), "by_code"), "UNAVAILABLE").number_value(), 1);
  EXPECT_EQ(At(At(root, "warmup"), "requests").number_value(), 20);
  EXPECT_EQ(At(At(root, "warmup"), "errors").number_value(), 0);
}

TEST(LoadReportTest, JsonDescribesTheConfiguration) {
  Value root;
  *root.mutable_struct_value() = ParsedJson(SampleResult());
  const Value& config = At(root, "config");
  EXPECT_EQ(At(config, "sessions").number_value(), 2);
  EXPECT_EQ(At(config, "step").string_value(), "mlp");
  EXPECT_EQ(At(config, "batch").number_value(), 32);
  EXPECT_EQ(At(config, "width").number_value(), 128);
  EXPECT_EQ(At(config, "requests_per_step").number_value(), 2);
  EXPECT_TRUE(At(config, "requests").has_null_value());
  EXPECT_EQ(At(config, "duration_s").number_value(), 5);
  EXPECT_EQ(At(config, "kernels").string_value(), "default");

  LoadResult chain = SampleResult();
  chain.options.step = StepKind::kChain;
  chain.options.requests = 500;
  *root.mutable_struct_value() = ParsedJson(chain);
  EXPECT_EQ(At(At(root, "config"), "chain_length").number_value(), 8);
  EXPECT_EQ(At(At(root, "config"), "requests").number_value(), 500);
  EXPECT_TRUE(At(At(root, "config"), "duration_s").has_null_value());
  EXPECT_FALSE(At(root, "config").struct_value().fields().contains("batch"));
}

TEST(LoadReportTest, JsonCarriesServerSamplesFlatnessAndCheck) {
  LoadResult result = SampleResult();
  result.end.sessions[1].arena_growth_events += 2;
  result.after_close = UnreadableSample("Stats failed: \"UNAVAILABLE\"");
  Value root;
  *root.mutable_struct_value() = ParsedJson(result);
  const Value& server = At(root, "server");
  EXPECT_EQ(At(At(At(server, "after_warmup"), "pool"), "rented_bytes").number_value(), 2 << 20);
  const auto& sessions = At(At(server, "end"), "sessions").list_value().values();
  ASSERT_EQ(sessions.size(), 2);
  EXPECT_EQ(At(sessions[1], "arena_growth_events").number_value(), 22);
  EXPECT_EQ(At(sessions[0], "handles").number_value(), 13);
  EXPECT_FALSE(At(At(server, "after_close"), "ok").bool_value());
  EXPECT_EQ(At(At(server, "after_close"), "error").string_value(), "Stats failed: \"UNAVAILABLE\"");
  const Value& flatness = At(root, "flatness");
  EXPECT_TRUE(At(flatness, "known").bool_value());
  EXPECT_EQ(At(flatness, "rented_bytes_delta").number_value(), 0);
  EXPECT_EQ(At(flatness, "arena_growth_events").number_value(), 2);
  EXPECT_EQ(At(flatness, "arena_allocations").number_value(), 750);
  const Value& check = At(root, "check");
  EXPECT_TRUE(At(check, "enabled").bool_value());
  EXPECT_FALSE(At(check, "passed").bool_value());
  EXPECT_EQ(At(check, "failures").list_value().values_size(), 2);  // the error, the growth
}

TEST(LoadReportTest, TableSummarizesThroughputLatencyMemoryAndCheck) {
  const std::string table = FormatTable(SampleResult());
  EXPECT_THAT(table, HasSubstr("2 sessions, step mlp (batch 32, width 128; Run + Backward"));
  EXPECT_THAT(table, HasSubstr("measured 5.0 s after a 1.0 s warm-up (20 requests, 0 errors)"));
  EXPECT_THAT(table, HasSubstr("requests                    100           20.0"));
  EXPECT_THAT(table, HasSubstr("steps                        49            9.8"));
  EXPECT_THAT(table, HasSubstr("errors                        1  UNAVAILABLE 1"));
  EXPECT_THAT(table, HasSubstr("p99.9 1.000  max 1.000  mean 0.505"));
  EXPECT_THAT(
      table,
      HasSubstr("rented bytes                    0        2097152        2097152              0"));
  EXPECT_THAT(table, HasSubstr("growth events                  40             40             +0"));
  EXPECT_THAT(table, HasSubstr("allocations                   150            900           +750"));
  EXPECT_THAT(table, HasSubstr("after warm-up: rented bytes +0, arena growth events 0"));
  EXPECT_THAT(table, HasSubstr("check: FAILED\n  - 1 requests failed (UNAVAILABLE 1;"));
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
