#include "server/sessions/recent_ids.h"

#include <algorithm>
#include <charconv>

namespace onemodel::server {
namespace {

// The 128 bits of a 32-hex-digit id.
std::pair<uint64_t, uint64_t> KeyOf(std::string_view id) {
  std::pair<uint64_t, uint64_t> key{0, 0};
  const char* mid = id.data() + std::min<size_t>(16, id.size());
  std::from_chars(id.data(), mid, key.first, 16);
  std::from_chars(mid, id.data() + id.size(), key.second, 16);
  return key;
}

}  // namespace

RecentIds::RecentIds(size_t capacity, Clock::duration lifetime)
    : capacity_(std::max<size_t>(1, capacity)), lifetime_(lifetime) {}

void RecentIds::Expire(Clock::time_point now) {
  while (!order_.empty() && order_.front().second <= now) {
    ids_.erase(ids_.find(order_.front().first));
    order_.pop_front();
  }
}

void RecentIds::Add(std::string_view id, Clock::time_point now) {
  Expire(now);
  if (order_.size() == capacity_) {
    unknown_until_ = std::max(unknown_until_, order_.front().second);
    ids_.erase(ids_.find(order_.front().first));
    order_.pop_front();
  }
  const Key key = KeyOf(id);
  order_.emplace_back(key, now + lifetime_);
  ids_.insert(key);
}

RecentIds::Verdict RecentIds::Check(std::string_view id, Clock::time_point now) {
  Expire(now);
  if (ids_.count(KeyOf(id))) return kRecent;
  return now < unknown_until_ ? kUnknown : kFree;
}

}  // namespace onemodel::server
