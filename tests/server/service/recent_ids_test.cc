// RecentIds: ended session ids stay refused for their lifetime, within a fixed capacity, and
// when a loop of sessions overflows it no id is vouched for until the forgotten ones expire.
#include "server/sessions/recent_ids.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace onemodel::server {
namespace {

using std::chrono::seconds;

// The 32-hex-digit id number `n`.
std::string Id(uint64_t n) {
  char text[40];
  std::snprintf(text, sizeof text, "%016llx%016llx", 0x5eedull, static_cast<unsigned long long>(n));
  return text;
}

TEST(RecentIds, AnEndedIdIsRecentForItsLifetimeOnly) {
  RecentIds recent(10, seconds(60));
  const auto t0 = RecentIds::Clock::time_point() + seconds(1000);
  EXPECT_EQ(recent.Check(Id(1), t0), RecentIds::kFree);
  recent.Add(Id(1), t0);
  EXPECT_EQ(recent.Check(Id(1), t0 + seconds(59)), RecentIds::kRecent);
  EXPECT_EQ(recent.Check(Id(2), t0 + seconds(59)), RecentIds::kFree);
  EXPECT_EQ(recent.Check(Id(1), t0 + seconds(60)), RecentIds::kFree);
  EXPECT_EQ(recent.size(), 0u) << "expired ids are forgotten";
}

TEST(RecentIds, IdsDifferingInEitherHalfAreTold) {
  RecentIds recent(10, seconds(60));
  const auto t0 = RecentIds::Clock::time_point();
  const std::string id = "0123456789abcdef0123456789abcdef";
  recent.Add(id, t0);
  EXPECT_EQ(recent.Check("1123456789abcdef0123456789abcdef", t0), RecentIds::kFree);
  EXPECT_EQ(recent.Check("0123456789abcdef0123456789abcdee", t0), RecentIds::kFree);
  EXPECT_EQ(recent.Check(id, t0), RecentIds::kRecent);
}

TEST(RecentIds, ALoopOfSessionsStaysWithinTheCapacityAndFailsClosed) {
  constexpr size_t kCapacity = 1000;
  RecentIds recent(kCapacity, seconds(60));
  auto now = RecentIds::Clock::time_point();
  recent.Add(Id(0), now);  // the victim's session ends
  // A client creates and closes 100000 sessions within the victim id's lifetime.
  for (uint64_t i = 1; i <= 100000; ++i) {
    recent.Add(Id(i), now);
    now += std::chrono::microseconds(50);
    ASSERT_LE(recent.size(), kCapacity);
  }
  EXPECT_EQ(recent.size(), kCapacity);
  // The victim's id was forgotten to stay within the capacity, but is still not free.
  EXPECT_EQ(recent.Check(Id(0), now), RecentIds::kUnknown);
  EXPECT_EQ(recent.Check(Id(99999), now), RecentIds::kRecent);
  // Once every forgotten id would have expired, proposals are judged again.
  now += seconds(61);
  EXPECT_EQ(recent.Check(Id(0), now), RecentIds::kFree);
  EXPECT_EQ(recent.size(), 0u);
}

}  // namespace
}  // namespace onemodel::server
