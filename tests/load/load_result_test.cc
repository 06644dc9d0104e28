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
  result.end.pool.rented_bytes += 128;
  result.end.pool.misses += 2;
  result.end.sessions[1].arena_growth_events += 3;
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
  result.end.pool.rented_bytes += 4096;
  EXPECT_THAT(CheckFailures(result),
              ElementsAre(HasSubstr("rented bytes grew by 4096 after warm-up (from 2097152 to "
                                    "2101248)")));
  result.end.pool.rented_bytes -= 8192;  // shrinking is fine
  EXPECT_THAT(CheckFailures(result), IsEmpty());
}

TEST(LoadResultTest, ArenaGrowthAfterWarmupFails) {
  LoadResult result = CleanResult();
  result.end.sessions[0].arena_growth_events += 1;
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

}  // namespace
}  // namespace onemodel::load
