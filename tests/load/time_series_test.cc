// The time series of a run: steps land in their second of their phase, server readings once a
// second, shorter last parts, and the CSV.
#include "client/load/time_series.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace onemodel::load {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

const LoadClock::TimePoint kStart{std::chrono::seconds(100)};

ServerSample Readings(int64_t rented, int64_t idle, std::vector<int64_t> arenas) {
  ServerSample sample;
  sample.ok = true;
  sample.server.mutable_pool()->set_rented_bytes(rented);
  sample.server.mutable_pool()->set_idle_bytes(idle);
  for (const int64_t bytes : arenas) {
    sample.sessions.emplace_back().mutable_arena()->set_reserved_bytes(bytes);
  }
  return sample;
}

TEST(TimeSeriesTest, StepsLandInTheSecondOfTheirPhaseTheyEndedIn) {
  TimeSeries series;
  series.RecordStep(kStart, milliseconds(1), 2, 0);  // before any phase (warm-up): dropped
  series.StartPhase(0, kStart);
  series.RecordStep(kStart + milliseconds(100), milliseconds(2), 2, 0);
  series.RecordStep(kStart + milliseconds(900), milliseconds(4), 2, 1);
  series.RecordStep(kStart + milliseconds(1200), milliseconds(8), 2, 0);
  series.EndPhase(kStart + milliseconds(1500));
  series.StartPhase(500, kStart + milliseconds(1600));
  series.RecordStep(kStart + milliseconds(1700), milliseconds(3), 2, 0);
  series.EndPhase(kStart + milliseconds(2100));
  series.RecordStep(kStart + milliseconds(2200), milliseconds(3), 2, 0);  // after: dropped

  const std::vector<SeriesPoint> points = series.points();
  ASSERT_EQ(points.size(), 3);
  EXPECT_EQ(points[0].steps, 1);  // the step with a failed request is not counted, as in the report
  EXPECT_EQ(points[0].step_latency.count(), 1);  // nor is its latency
  EXPECT_EQ(points[0].requests, 4);
  EXPECT_EQ(points[0].errors, 1);
  EXPECT_EQ(points[0].seconds, 1);
  EXPECT_EQ(points[0].step_latency.MaxMicros(), 2000);
  EXPECT_EQ(points[1].steps, 1);
  EXPECT_NEAR(points[1].seconds, 0.5, 1e-9);  // the phase's last half second
  EXPECT_NEAR(points[1].t_s, 1, 1e-9);
  EXPECT_EQ(points[2].phase, 1);
  EXPECT_EQ(points[2].rate_per_s, 500);
  EXPECT_NEAR(points[2].t_s, 1.6, 1e-9);
  EXPECT_NEAR(points[2].seconds, 0.5, 1e-9);
}

TEST(TimeSeriesTest, AShortTailJoinsTheSecondBeforeIt) {
  TimeSeries series;
  series.StartPhase(100, kStart);
  series.RecordStep(kStart + milliseconds(500), milliseconds(2), 1, 0);
  series.RecordStep(kStart + milliseconds(1500), milliseconds(2), 1, 0);
  series.RecordStep(kStart + milliseconds(2030), milliseconds(900), 1, 0);  // answered late
  series.EndPhase(kStart + milliseconds(2050));
  const std::vector<SeriesPoint> points = series.points();
  ASSERT_EQ(points.size(), 2);
  EXPECT_NEAR(points[1].seconds, 1.05, 1e-9);
  EXPECT_EQ(points[1].steps, 2);
  EXPECT_EQ(points[1].step_latency.MaxMicros(), 900000);
}

TEST(TimeSeriesTest, SecondsWithoutStepsStillCountSoThePartsAddUpToThePhase) {
  TimeSeries series;
  series.StartPhase(1, kStart);
  series.RecordStep(kStart + milliseconds(200), milliseconds(2), 1, 0);  // then nothing
  series.EndPhase(kStart + milliseconds(3020));
  const std::vector<SeriesPoint> points = series.points();
  ASSERT_EQ(points.size(), 3) << "seconds 1 and 2 (with the 20 ms tail) have no step";
  EXPECT_EQ(points[1].steps, 0);
  EXPECT_NEAR(points[0].seconds + points[1].seconds + points[2].seconds, 3.02, 1e-9);
}

TEST(TimeSeriesTest, TheServerIsReadOnceASecond) {
  TimeSeries series;
  EXPECT_FALSE(series.NeedsServer(kStart));  // no phase
  series.StartPhase(0, kStart);
  EXPECT_TRUE(series.NeedsServer(kStart + milliseconds(10)));
  series.RecordServer(kStart + milliseconds(10), Readings(4096, 1024, {100, 200}));
  EXPECT_FALSE(series.NeedsServer(kStart + milliseconds(990)));
  EXPECT_TRUE(series.NeedsServer(kStart + milliseconds(1010)));
  ServerSample unreadable;
  unreadable.error = "Stats failed";
  series.RecordServer(kStart + milliseconds(1010), unreadable);
  EXPECT_TRUE(series.NeedsServer(kStart + milliseconds(1020)));
  const std::vector<SeriesPoint> points = series.points();
  ASSERT_EQ(points.size(), 2);
  EXPECT_TRUE(points[0].server_read);
  EXPECT_EQ(points[0].pool_rented_bytes, 4096);
  EXPECT_EQ(points[0].pool_idle_bytes, 1024);
  EXPECT_EQ(points[0].arena_reserved_bytes, 300);
  EXPECT_FALSE(points[1].server_read);
}

TEST(TimeSeriesTest, CsvHasAHeaderAndOneLinePerSecond) {
  TimeSeries series;
  series.StartPhase(250, kStart);
  for (int i = 1; i <= 100; ++i) {
    series.RecordStep(kStart + milliseconds(5 * i), std::chrono::microseconds(100 * i), 2, 0);
  }
  series.RecordServer(kStart, Readings(8192, 0, {1 << 20}));
  series.RecordStep(kStart + milliseconds(1100), milliseconds(1), 1, 1);
  series.EndPhase(kStart + milliseconds(1250));
  EXPECT_EQ(FormatCsv(series.points()),
            "phase,rate_per_s,t_s,seconds,requests_per_s,steps_per_s,errors,p50_ms,p99_ms,"
            "pool_rented_bytes,pool_idle_bytes,arena_reserved_bytes\n"
            "0,250,0.000,1.000,200,100,0,5.04627,9.96147,8192,0,1048576\n"
            "0,250,1.000,0.250,4,0,1,,,,,\n");  // a failed step: no steps_per_s
}

}  // namespace
}  // namespace onemodel::load
