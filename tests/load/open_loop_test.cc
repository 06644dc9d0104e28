// The open-loop scheduler on a fake clock: arrivals at the rate, latencies from the intended
// send time (a stalled answer makes the steps behind it count their wait: no coordinated
// omission), and the arrivals not sent when the phase ends.
#include "client/load/open_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "client/load/request_log.h"

namespace onemodel::load {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;

// Time moves only when a step takes time or the scheduler sleeps.
class FakeClock final : public LoadClock {
 public:
  TimePoint Now() const override { return now_; }
  void SleepUntil(TimePoint when) override {
    if (when > now_) now_ = when;
  }
  void Advance(std::chrono::nanoseconds by) { now_ += by; }

 private:
  TimePoint now_{std::chrono::seconds(1000)};
};

// The step latencies in milliseconds of one session running a 100 steps/s schedule for
// `phase`, the k-th step taking service[k] ms (1 ms once the list runs out); `sent` and
// `unsent` receive the counts.
std::vector<int64_t> StepLatencies(milliseconds phase, const std::vector<int>& service,
                                   RequestLog& log, int64_t& sent, int64_t& unsent) {
  FakeClock clock;
  log.clock = &clock;
  ArrivalSchedule schedule(clock.Now(), clock.Now() + phase, /*steps_per_s=*/100);
  std::vector<int64_t> latencies;
  size_t k = 0;
  sent = RunOpenLoop(schedule, clock, [&](LoadClock::TimePoint intended) {
    const auto latency = log.TimeStep(intended, [&] {
      log.Time(Rpc::kRun, [&] {
        clock.Advance(milliseconds(k < service.size() ? service[k] : 1));
        return 0;
      });
    });
    ++k;
    latencies.push_back(std::chrono::duration_cast<milliseconds>(latency).count());
  });
  unsent = schedule.Unsent(sent);
  return latencies;
}

TEST(OpenLoopTest, FastAnswersAreSentAtTheRateAndTimedFromTheirIntendedTimes) {
  RequestLog log;
  int64_t sent = 0;
  int64_t unsent = 0;
  const auto latencies = StepLatencies(milliseconds(50), {}, log, sent, unsent);
  EXPECT_THAT(latencies, ElementsAre(1, 1, 1, 1, 1));  // at 0, 10, 20, 30, 40 ms
  EXPECT_EQ(sent, 5);
  EXPECT_EQ(unsent, 0);
  EXPECT_EQ(log.steps, 5);
  EXPECT_EQ(log.by_rpc[RpcIndex(Rpc::kRun)].count(), 5);
}

TEST(OpenLoopTest, AStalledAnswerMakesTheLaterStepsCountTheirWait) {
  RequestLog log;
  int64_t sent = 0;
  int64_t unsent = 0;
  // The first answer takes 45 ms. The steps due at 10, 20, 30 and 40 ms are sent late, at 45,
  // 46, 47 and 48 ms, and count from their intended times; a closed loop would have timed
  // each of them at 1 ms and sent fewer.
  const auto latencies = StepLatencies(milliseconds(100), {45}, log, sent, unsent);
  EXPECT_THAT(latencies, ElementsAre(45, 36, 27, 18, 9, 1, 1, 1, 1, 1));
  EXPECT_EQ(sent, 10);
  EXPECT_EQ(unsent, 0);
  // The request is timed from the intended send time too (it is the step's first).
  EXPECT_EQ(log.by_rpc[RpcIndex(Rpc::kRun)].MaxMicros(), 45000);
  EXPECT_NEAR(log.by_rpc[RpcIndex(Rpc::kRun)].PercentileMicros(70), 18000, 18000 / 64.0);
}

TEST(OpenLoopTest, ArrivalsStillWaitingAtTheEndAreCountedAsUnsent) {
  RequestLog log;
  int64_t sent = 0;
  int64_t unsent = 0;
  // Every answer takes 25 ms against arrivals every 10 ms: the session falls behind, and at
  // the end of the 100 ms phase the arrivals it never reached are unsent.
  const auto latencies =
      StepLatencies(milliseconds(100), std::vector<int>(20, 25), log, sent, unsent);
  EXPECT_THAT(latencies, ElementsAre(25, 40, 55, 70));  // sent at 0, 25, 50 and 75 ms
  EXPECT_EQ(sent, 4);
  EXPECT_EQ(unsent, 6);
}

TEST(OpenLoopTest, ASessionReturnsOnlyAtTheEndOfThePhaseAtAnyRate) {
  for (const double steps_per_s : {100.0, 0.5, 0.0005}) {
    FakeClock clock;
    const LoadClock::TimePoint start = clock.Now();
    ArrivalSchedule schedule(start, start + std::chrono::seconds(3), steps_per_s);
    int64_t sends = 0;
    const int64_t sent = RunOpenLoop(schedule, clock, [&](LoadClock::TimePoint) {
      clock.Advance(milliseconds(1));
      ++sends;
    });
    EXPECT_EQ(sent, sends);
    EXPECT_EQ(sent, schedule.due()) << steps_per_s;
    // 0.5 steps/s: arrivals at 0 and 2 s, and the session still waits until 3 s.
    EXPECT_EQ(clock.Now() - start, std::chrono::seconds(3)) << steps_per_s << " steps/s";
  }
}

// A step that a failed request ends is timed apart: a server that refused every step at once
// made the steps' latency look excellent when they were counted together.
TEST(OpenLoopTest, AFailedStepIsTimedApartFromTheStepsThatSucceeded) {
  FakeClock clock;
  RequestLog log;
  log.clock = &clock;
  for (const bool fail : {false, true, true}) {
    log.TimeStep(clock.Now(), [&] {
      log.Time(Rpc::kRun, [&]() -> int {
        clock.Advance(milliseconds(fail ? 1 : 30));
        if (fail) throw client::Error(grpc::StatusCode::UNAVAILABLE, "refused");
        return 0;
      });
    });
  }
  EXPECT_EQ(log.steps, 1);
  EXPECT_EQ(log.step_latency.count(), 1);
  EXPECT_EQ(log.step_latency.MaxMicros(), 30000);
  EXPECT_EQ(log.failed_step_latency.count(), 2);
  EXPECT_EQ(log.failed_step_latency.MaxMicros(), 1000);
  EXPECT_EQ(log.errors(), 2);
}

TEST(OpenLoopTest, ScheduleHasEveryArrivalBeforeTheEndOnce) {
  const LoadClock::TimePoint start{std::chrono::seconds(5)};
  ArrivalSchedule schedule(start, start + milliseconds(25), /*steps_per_s=*/200);  // every 5 ms
  EXPECT_EQ(schedule.due(), 5);
  std::vector<int64_t> offsets;
  while (const auto arrival = schedule.Claim()) {
    offsets.push_back(std::chrono::duration_cast<milliseconds>(*arrival - start).count());
  }
  EXPECT_THAT(offsets, ElementsAre(0, 5, 10, 15, 20));
  EXPECT_FALSE(schedule.Claim());
}

}  // namespace
}  // namespace onemodel::load
