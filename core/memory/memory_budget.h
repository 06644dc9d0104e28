// MemoryBudget: a limit on the bytes a holder may take from the pool (a session's quota, the
// server's ceiling on rented memory). Budgets chain: charging a session's budget charges its
// parent too, so one check enforces both limits.
//
// A BufferLedger charges each buffer it rents and an Arena each chunk it rents; both refund
// when the memory goes back. A charge that would pass a limit throws MemoryLimitException
// before anything is rented, naming the limit and its value.
//
//   MemoryBudget server("server memory ceiling", 8 << 30);
//   MemoryBudget session("session memory limit", 256 << 20, &server);
//   BufferLedger ledger(pool, &session);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace onemodel {

class MemoryBudget {
 public:
  // `name` is how messages call the limit ("session memory limit"); `limit` in bytes.
  MemoryBudget(std::string name, int64_t limit, MemoryBudget* parent = nullptr)
      : name_(std::move(name)), limit_(limit), parent_(parent) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Takes `bytes` from this budget and its ancestors, or throws MemoryLimitException and
  // takes nothing. When a limit refuses and a reclaimer is set, it runs and the charge is
  // tried once more.
  void Charge(int64_t bytes);
  // `reclaim` gives back memory this budget's holder keeps but does not need (free arena
  // chunks) and says whether it gave any; it runs on the charging thread, so set one only
  // where every charge comes from the holder's own thread (a session's strand).
  void SetReclaimer(std::function<bool()> reclaim) { reclaim_ = std::move(reclaim); }
  // As Charge, but never runs this budget's reclaimer: for a charge from a thread other than
  // the holder's (a request queued from a gRPC thread while the strand uses the arena).
  void ChargeWithoutReclaim(int64_t bytes);
  // Gives back what Charge took.
  void Refund(int64_t bytes);

  int64_t used() const { return used_.load(std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }
  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  const int64_t limit_;
  MemoryBudget* const parent_;
  std::atomic<int64_t> used_{0};
  std::function<bool()> reclaim_;
};

// The bytes glibc's malloc takes for a request of `bytes`: an 8-byte header, rounded up to
// 16, at least 32. Used to charge the heap structures a client's requests make grow.
constexpr int64_t HeapBlockBytes(int64_t bytes) {
  const int64_t block = (bytes + 8 + 15) / 16 * 16;
  return block < 32 ? 32 : block;
}

// "1.5 GiB", "64 MiB", "512 B": sizes in messages.
std::string FormatBytes(int64_t bytes);

}  // namespace onemodel
