// A request's time split (request_phases.h, request_context.h): decode and encode as timed
// while its work runs, queue until its work began, execute the rest.
#include "server/observability/request_phases.h"

#include <gtest/gtest.h>

#include <thread>

#include "server/rpc/request_context.h"

namespace onemodel::server {
namespace {

using namespace std::chrono_literals;

TEST(RequestPhases, TimersAddToTheThreadsCurrentRequest) {
  RequestPhases phases;
  {
    const PhaseScope scope(&phases);
    {
      const PhaseTimer timer(Phase::kDecode);
      std::this_thread::sleep_for(2ms);
    }
    const PhaseTimer timer(Phase::kEncode);
  }
  EXPECT_GE(phases[Phase::kDecode], 2ms);
  EXPECT_LT(phases[Phase::kEncode], phases[Phase::kDecode]);
  EXPECT_EQ(phases[Phase::kQueue], 0ns);
  {
    const PhaseTimer outside(Phase::kDecode);  // no scope: nothing to add to
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_LT(phases[Phase::kDecode], 3ms + 100ms);
}

TEST(RequestPhases, AScopeEndsWhereItWasOpenedAndRestoresTheOuterOne) {
  RequestPhases outer, inner;
  const PhaseScope a(&outer);
  {
    const PhaseScope b(&inner);
    const PhaseTimer timer(Phase::kEncode);
    std::this_thread::sleep_for(1ms);
  }
  { const PhaseTimer timer(Phase::kDecode); }
  EXPECT_GE(inner[Phase::kEncode], 1ms);
  EXPECT_EQ(inner[Phase::kDecode], 0ns);
  EXPECT_EQ(outer[Phase::kEncode], 0ns);
}

TEST(RequestPhases, SplitGivesQueueUntilTheWorkBeganAndExecuteTheRest) {
  const auto start = std::chrono::steady_clock::now();
  FinishedCall call{.start = start, .work_start = start + 30ms};
  call.phases[Phase::kDecode] = 5ms;
  call.phases[Phase::kEncode] = 15ms;
  const RequestPhases split = Split(call, 100ms);
  EXPECT_EQ(split[Phase::kQueue], 30ms);
  EXPECT_EQ(split[Phase::kDecode], 5ms);
  EXPECT_EQ(split[Phase::kEncode], 15ms);
  EXPECT_EQ(split[Phase::kExecute], 50ms) << "the four add up to the call's time";
}

TEST(RequestPhases, ACallThatWaitsForNoSessionIsAllExecute) {
  const RequestPhases split = Split(FinishedCall{.start = std::chrono::steady_clock::now()}, 7ms);
  EXPECT_EQ(split[Phase::kQueue], 0ns);
  EXPECT_EQ(split[Phase::kExecute], 7ms);
}

}  // namespace
}  // namespace onemodel::server
