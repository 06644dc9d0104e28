// HandleTable: a session's names for the tensors it keeps on the server.
//
// A handle is "<p|a><serial>.<tag>": p for a tensor in the pool, a for one in the arena, a
// serial unique within the session, and a 64-bit tag: SipHash-2-4 of the serial and placement
// under a random per-session key, so a handle cannot be guessed or derived from other handles,
// and one session's handles mean nothing in another. Arena handles are dropped at each arena
// reset; because serials only grow, a dropped arena handle is still recognised afterwards and
// reported as stale rather than unknown.
//
//   HandleTable table(max_handles);
//   std::string h = table.Add(tensor, Placement::kArena, /*owns_buffer=*/true);
//   const HandleEntry& e = table.Find(h);   // throws RpcError: NOT_FOUND or FAILED_PRECONDITION
//   table.ResetArena();                     // h is now stale
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/tensor/tensor.h"
#include "server/siphash.h"

namespace onemodel::server {

enum class Placement { kPool, kArena };

struct HandleEntry {
  Tensor tensor;
  Placement placement;
  bool owns_buffer;  // releasing this handle returns the buffer (not a view of another's)
};

class HandleTable {
 public:
  explicit HandleTable(int64_t max_handles);

  // Throws RpcError (RESOURCE_EXHAUSTED) unless `count` more handles fit.
  void Reserve(int64_t count) const;
  // Names `tensor`; throws RpcError (RESOURCE_EXHAUSTED) when the table is full.
  std::string Add(const Tensor& tensor, Placement placement, bool owns_buffer);
  // The live entry of `handle`. Throws RpcError: NOT_FOUND for a handle that is malformed,
  // of another session, released or never made; FAILED_PRECONDITION for an arena handle
  // from before the last reset, or a view whose buffer was released through another handle.
  const HandleEntry& Find(std::string_view handle) const;
  // Throws Find's errors except for a stale view: the handle exists and can be removed.
  void CheckExists(std::string_view handle) const { Locate(handle); }
  // Forgets `handle` (CheckExists's errors apply) and returns its entry.
  HandleEntry Remove(std::string_view handle);
  // Forgets every arena handle; returns how many there were.
  int64_t ResetArena();
  // Forgets everything (session close).
  void Clear();

  int64_t size() const { return static_cast<int64_t>(entries_.size()); }

 private:
  struct Parsed {
    bool ok;
    Placement placement;
    uint64_t serial;
  };
  Parsed Parse(std::string_view handle) const;
  uint64_t Tag(Placement placement, uint64_t serial) const;
  // The entry of a well-formed handle, or the error for it.
  std::unordered_map<uint64_t, HandleEntry>::const_iterator Locate(std::string_view handle) const;

  const int64_t max_handles_;
  const SipKey key_;  // per session, from the kernel CSPRNG
  uint64_t next_serial_ = 1;
  uint64_t arena_epoch_ = 1;  // arena handles with a smaller serial were reset away
  std::unordered_map<uint64_t, HandleEntry> entries_;
  std::vector<uint64_t> arena_serials_;  // serials of live arena handles
};

}  // namespace onemodel::server
