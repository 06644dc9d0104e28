// FlatnessOf and CheckFailures: what --check passes and fails, and the reasons it gives.
#include "client/load/load_result.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/load/sample_result.h"

namespace onemodel::load {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// SampleResult without its one failed request.
LoadResult CleanResult() {
  LoadResult result = SampleResult();
  result.measured.by_code[grpc::StatusCode::UNAVAILABLE] = 0;
  return result;
}

TEST(LoadResultTest, FlatnessComparesTheEndWithTheEndOfWarmup) {
  LoadResult result = SampleResult();
  AddRentedBytes(result.end, 128);
  result.end.server.mutable_pool()->set_misses(result.end.server.pool().misses() + 2);
  AddGrowthEvents(result.end.sessions[1], 3);
  const Flatness flat = FlatnessOf(result);
  EXPECT_TRUE(flat.known);
  EXPECT_EQ(flat.rented_bytes_delta, 128);
  EXPECT_EQ(flat.pool_misses, 2);
  EXPECT_EQ(flat.arena_growth_events, 3);
  EXPECT_EQ(flat.arena_allocations, 750);
}

TEST(LoadResultTest, FlatnessIsUnknownWithoutBothSamples) {
  LoadResult result = SampleResult();
  result.end = UnreadableSample("UNAVAILABLE");
  EXPECT_FALSE(FlatnessOf(result).known);
}

TEST(LoadResultTest, ACleanFlatRunPasses) { EXPECT_THAT(CheckFailures(CleanResult()), IsEmpty()); }

TEST(LoadResultTest, FailedRequestsFailWithTheirCodes) {
  LoadResult result = SampleResult();
  result.warmup.by_code[grpc::StatusCode::INTERNAL] = 2;
  EXPECT_THAT(CheckFailures(result),
              ElementsAre(HasSubstr("3 requests failed (INTERNAL 2, UNAVAILABLE 1; 2 of them "
                                    "during warm-up)")));
}

TEST(LoadResultTest, RentedBytesGrowthFails) {
  LoadResult result = CleanResult();
  AddRentedBytes(result.end, 4096);
  EXPECT_THAT(CheckFailures(result),
              ElementsAre(HasSubstr("rented bytes grew by 4096 after warm-up (from 2097152 to "
                                    "2101248)")));
  AddRentedBytes(result.end, -8192);  // shrinking is fine
  EXPECT_THAT(CheckFailures(result), IsEmpty());
}

TEST(LoadResultTest, ArenaGrowthAfterWarmupFails) {
  LoadResult result = CleanResult();
  AddGrowthEvents(result.end.sessions[0], 1);
  EXPECT_THAT(CheckFailures(result),
              ElementsAre(HasSubstr("arenas grew 1 times after warm-up (expected 0)")));
}

TEST(LoadResultTest, UnreadableStatisticsFail) {
  LoadResult result = CleanResult();
  result.after_warmup = UnreadableSample("Stats failed: UNAVAILABLE");
  EXPECT_THAT(
      CheckFailures(result),
      ElementsAre(HasSubstr("could not be read after warm-up (Stats failed: UNAVAILABLE)")));
}

TEST(LoadResultTest, NoMeasuredRequestsFails) {
  LoadResult result = CleanResult();
  result.measured = {};
  EXPECT_THAT(CheckFailures(result), ElementsAre(HasSubstr("no request ran after warm-up")));
}

TEST(LoadResultTest, KneeJudgesTheRatesByTheirStepP99) {
  LoadResult result = CleanResult();
  result.options.p99_bound_ms = 2;
  for (const auto& [rate, step_ms] : {std::pair{100.0, 1}, {1000.0, 1}, {10000.0, 5}}) {
    RatePhase phase;
    phase.rate_per_s = rate;
    phase.log.step_latency.Record(std::chrono::milliseconds(step_ms));
    phase.log.by_code[grpc::StatusCode::OK] = 1;
    result.rates.push_back(std::move(phase));
  }
  const Knee knee = KneeOf(result);
  EXPECT_TRUE(knee.found);
  EXPECT_TRUE(knee.limited);
  EXPECT_EQ(knee.rate_per_s, 1000);
  result.rates[1].log.by_code[grpc::StatusCode::DEADLINE_EXCEEDED] = 1;  // errors break a rate
  EXPECT_EQ(KneeOf(result).rate_per_s, 100);
}

}  // namespace
}  // namespace onemodel::load
