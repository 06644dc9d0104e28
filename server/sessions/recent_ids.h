// RecentIds: the ids of sessions that ended recently (tombstones), so that a proposed id (the
// 'onemodel-session' header of CreateSession) cannot give a new session the id of one a
// client may still be using.
//
// Each id is remembered for `lifetime` after its session ended, and at most `capacity` ids
// are (about 90 bytes each). Past the capacity the oldest is forgotten, and until it would
// have expired no proposed id can be vouched for: Check says kUnknown, and proposals are
// refused rather than risk a reuse. Not thread-safe (SessionManager holds its lock).
//
//   RecentIds recent(65536, std::chrono::hours(1));
//   recent.Add(id, now);
//   if (recent.Check(proposed, now) != RecentIds::kFree) ... refuse ...
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <string_view>
#include <utility>

namespace onemodel::server {

class RecentIds {
 public:
  using Clock = std::chrono::steady_clock;
  enum Verdict { kFree, kRecent, kUnknown };

  RecentIds(size_t capacity, Clock::duration lifetime);
  // Remembers `id` (32 lowercase hex characters) as ended at `now`.
  void Add(std::string_view id, Clock::time_point now);
  // kRecent when `id` ended less than the lifetime ago, kUnknown when it may have but was
  // forgotten to stay within the capacity, else kFree.
  Verdict Check(std::string_view id, Clock::time_point now);
  size_t size() const { return order_.size(); }

 private:
  using Key = std::pair<uint64_t, uint64_t>;
  // Forgets ids whose lifetime is over.
  void Expire(Clock::time_point now);

  const size_t capacity_;
  const Clock::duration lifetime_;
  std::deque<std::pair<Key, Clock::time_point>> order_;  // oldest first, with its expiry
  std::multiset<Key> ids_;                               // ordered: no hash to flood
  Clock::time_point unknown_until_{};  // an id forgotten early would have expired by then
};

}  // namespace onemodel::server
