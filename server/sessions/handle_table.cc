#include "server/sessions/handle_table.h"

#include <algorithm>
#include <charconv>

#include "core/common/exceptions.h"
#include "server/observability/logging.h"
#include "server/rpc/rpc_error.h"
#include "server/sessions/siphash.h"

namespace onemodel::server {
namespace {

// Handles come from clients: show a bounded, printable prefix only.
std::string Quote(std::string_view handle) { return "'" + Printable(handle, 48) + "'"; }

}  // namespace

HandleTable::HandleTable(int64_t max_handles, MemoryBudget* budget)
    : max_handles_(max_handles), budget_(budget), key_(RandomSipKey()) {}

uint64_t HandleTable::Tag(Placement placement, uint64_t serial) const {
  const uint64_t word = serial * 2 + (placement == Placement::kArena ? 1 : 0);
  uint8_t message[8];
  for (int i = 0; i < 8; ++i) message[i] = static_cast<uint8_t>(word >> (8 * i));
  return SipHash24(key_, message);
}

HandleTable::Reservation::~Reservation() { table_.Unreserve(count_); }

HandleTable::Reservation HandleTable::Reserve(int64_t count) {
  if (count > max_handles_ - size() - reserved_) {
    throw ResourceExhausted("the session holds " + std::to_string(size()) + " tensor handles and " +
                            std::to_string(count) + " more would pass the server's limit of " +
                            std::to_string(max_handles_) +
                            " (--max-handles); release handles you no longer need or reset the "
                            "arena");
  }
  if (budget_) {
    try {
      budget_->Charge(count * kEntryBytes);
    } catch (const MemoryLimitException& e) {
      throw ResourceExhausted(std::to_string(count) + " more tensor handles need " +
                              FormatBytes(count * kEntryBytes) + " of the session's memory (" +
                              std::to_string(kEntryBytes) + " B each): " + e.what());
    }
  }
  reserved_ += count;
  return Reservation(*this, count);
}

void HandleTable::Unreserve(int64_t count) {
  const int64_t unused = std::min(count, reserved_);
  reserved_ -= unused;
  if (budget_) budget_->Refund(unused * kEntryBytes);
}

std::string HandleTable::Add(const Tensor& tensor, Placement placement, bool owns_buffer) {
  if (reserved_ == 0) {
    const Reservation one = Reserve(1);
    return Add(tensor, placement, owns_buffer);  // uses it
  }
  const uint64_t serial = next_serial_++;
  entries_.emplace(serial, HandleEntry{tensor, placement, owns_buffer});
  --reserved_;  // the entry keeps the reserved charge until it is forgotten
  if (placement == Placement::kArena) arena_serials_.push_back(serial);
  char text[48];
  text[0] = placement == Placement::kArena ? 'a' : 'p';
  char* end = std::to_chars(text + 1, text + 24, serial).ptr;
  *end++ = '.';
  const uint64_t tag = Tag(placement, serial);
  for (int shift = 60; shift >= 0; shift -= 4) *end++ = "0123456789abcdef"[(tag >> shift) & 15];
  return std::string(text, end);
}

HandleTable::Parsed HandleTable::Parse(std::string_view h) const {
  Parsed p{false, Placement::kPool, 0};
  if (h.size() < 19 || (h[0] != 'a' && h[0] != 'p')) return p;
  p.placement = h[0] == 'a' ? Placement::kArena : Placement::kPool;
  const char* end = h.data() + h.size();
  // Exactly the spelling Add() makes: no leading zero, lowercase hex.
  if (h[1] == '0') return p;
  auto [dot, ec] = std::from_chars(h.data() + 1, end, p.serial);
  if (ec != std::errc() || dot == h.data() + 1 || end - dot != 17 || *dot != '.') return p;
  for (const char* c = dot + 1; c != end; ++c) {
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return p;
  }
  uint64_t tag = 0;
  std::from_chars(dot + 1, end, tag, 16);
  p.ok = tag == Tag(p.placement, p.serial);
  return p;
}

std::unordered_map<uint64_t, HandleEntry>::const_iterator HandleTable::Locate(
    std::string_view handle) const {
  const Parsed p = Parse(handle);
  if (!p.ok) {
    throw NotFound("tensor handle " + Quote(handle) +
                   " is not a handle of this session; handles are valid only in the session "
                   "that made them");
  }
  auto it = entries_.find(p.serial);
  if (it != entries_.end()) return it;
  if (p.placement == Placement::kArena && p.serial < arena_epoch_) {
    throw FailedPrecondition("tensor " + Quote(handle) +
                             " is stale: it lived in the session's arena, which was reset "
                             "since; run the operations again, or ask for PLACEMENT_POOL to "
                             "keep a result across resets");
  }
  throw NotFound("tensor handle " + Quote(handle) + " was released");
}

const HandleEntry& HandleTable::Find(std::string_view handle) const {
  const HandleEntry& entry = Locate(handle)->second;
  if (entry.tensor.IsStale()) {
    throw FailedPrecondition("tensor " + Quote(handle) +
                             " is stale: the buffer it views was released through another "
                             "handle");
  }
  return entry;
}

HandleEntry HandleTable::Remove(std::string_view handle) {
  // arena_serials_ may keep the serial; ResetArena skips serials no longer present.
  HandleEntry entry = std::move(entries_.extract(Locate(handle)).mapped());
  Refund(1);
  return entry;
}

int64_t HandleTable::ResetArena() {
  int64_t dropped = 0;
  for (uint64_t serial : arena_serials_) dropped += static_cast<int64_t>(entries_.erase(serial));
  arena_serials_.clear();
  arena_epoch_ = next_serial_;
  Refund(dropped);
  return dropped;
}

void HandleTable::Clear() {
  const int64_t dropped = size();
  entries_.clear();
  arena_serials_.clear();
  arena_epoch_ = next_serial_;
  Refund(dropped);
}

void HandleTable::Refund(int64_t entries) {
  if (budget_) budget_->Refund(entries * kEntryBytes);
}

}  // namespace onemodel::server
