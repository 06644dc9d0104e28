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
//
// Each entry is charged to the session's memory budget (kEntryBytes) while it lives, so the
// table is bounded by the session's memory limit as well as by --max-handles.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/memory/memory_budget.h"
#include "core/tensor/tensor.h"
#include "server/sessions/siphash.h"

namespace onemodel::server {

enum class Placement { kPool, kArena };

struct HandleEntry {
  Tensor tensor;
  Placement placement;
  bool owns_buffer;  // releasing this handle returns the buffer (not a view of another's)
};

class HandleTable {
 public:
  // What one handle costs its session's budget: the map node holding the entry (as glibc
  // allocates it), its share of the buckets and of the arena list (both up to twice the
  // entries after growth), and a leaf node for a tensor that requires gradients.
  static constexpr int64_t kEntryBytes =
      HeapBlockBytes(static_cast<int64_t>(2 * sizeof(void*) + sizeof(HandleEntry))) +
      static_cast<int64_t>(2 * sizeof(void*) + 2 * sizeof(uint64_t)) +
      HeapBlockBytes(static_cast<int64_t>(3 * sizeof(void*)));

  // Room for handles taken by Reserve() and held until Add() uses it or this ends.
  class Reservation {
   public:
    ~Reservation();
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;

   private:
    friend class HandleTable;
    Reservation(HandleTable& table, int64_t count) : table_(table), count_(count) {}
    HandleTable& table_;
    int64_t count_;
  };

  // Charges kEntryBytes per live entry to `budget` (the session's), when given.
  explicit HandleTable(int64_t max_handles, MemoryBudget* budget = nullptr);
  ~HandleTable() { Clear(); }
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // Takes room for `count` more handles, in number and in the budget, for the next Add()s.
  // Throws RpcError (RESOURCE_EXHAUSTED) naming --max-handles or the memory limit, taking
  // nothing, unless they fit.
  [[nodiscard]] Reservation Reserve(int64_t count);
  // Names `tensor`, using reserved room if any; throws Reserve(1)'s errors.
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

  // Gives back up to `count` reserved handles that Add() did not use.
  void Unreserve(int64_t count);
  // Gives back the charge of `entries` forgotten entries.
  void Refund(int64_t entries);

  const int64_t max_handles_;
  MemoryBudget* const budget_;
  int64_t reserved_ = 0;  // handles charged by a Reservation and not yet added
  const SipKey key_;      // per session, from the kernel CSPRNG
  uint64_t next_serial_ = 1;
  uint64_t arena_epoch_ = 1;  // arena handles with a smaller serial were reset away
  std::unordered_map<uint64_t, HandleEntry> entries_;
  std::vector<uint64_t> arena_serials_;  // serials of live arena handles
};

}  // namespace onemodel::server
