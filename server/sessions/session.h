// Session: one client's state on the server (DESIGN.md section 4).
//
// Each session has its own kernels (exact or fast), memory budget, ledger of pool buffers,
// arena, handle table and strand. Everything but the identity and the published statistics
// is touched only by tasks on the session's strand, one at a time, so a session needs no
// locks of its own; different sessions run in parallel on the worker pool.
//
//   auto s = std::make_shared<Session>(options, pool, &server_budget, workers);
//   s->strand().Post([s] { Tensor t = ...; s->handles().Add(t, Placement::kPool, true); });
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/autograd/op_context.h"
#include "core/kernels/conv_cache.h"
#include "core/kernels/kernels.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_ledger.h"
#include "core/memory/memory_budget.h"
#include "server/observability/server_snapshot.h"
#include "server/sessions/handle_table.h"
#include "server/sessions/strand.h"

namespace onemodel::server {

struct SessionOptions {
  std::string id;      // 32 hex characters of 128 random bits
  int64_t serial = 0;  // public number for logs and metrics
  const TensorKernels* kernels = nullptr;
  int64_t arena_chunk_bytes = Arena::kDefaultChunkBytes;
  int64_t memory_limit_bytes = 0;
  std::chrono::milliseconds idle_timeout{0};
  int64_t max_handles = 0;
  std::string client_name;
};

class Session {
 public:
  using Clock = std::chrono::steady_clock;

  Session(const SessionOptions& options, BufferPool& pool, MemoryBudget* server_budget,
          WorkerPool& workers);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionOptions& options() const { return options_; }
  const std::string& id() const { return options_.id; }
  int64_t serial() const { return options_.serial; }
  Strand& strand() { return strand_; }

  // Strand-only state.
  HandleTable& handles() { return handles_; }
  BufferLedger& ledger() { return ledger_; }
  Arena& arena() { return arena_; }
  // The oneDNN convolution primitives this session's requests use (the strand's task makes it
  // current: ConvCacheScope); freed by Close().
  ConvPrimitiveCache& conv_cache() { return conv_cache_; }
  // Outputs in the arena or the pool, computed with this session's kernels.
  OpContext ArenaContext() { return {arena_, *options_.kernels}; }
  OpContext PoolContext() { return {ledger_, *options_.kernels}; }
  // Resets the arena and drops its handles; returns how many handles became stale. With
  // `trim`, then gives the arena's chunks beyond `keep_bytes` back to the pool.
  int64_t ResetArena(bool trim = false, int64_t keep_bytes = 0);
  // Returns everything to the pool (handles, graph, arena chunks, pool buffers) and the
  // number of pool buffers the client never released. The session is unusable afterwards.
  // In CHECKED builds throws BufferOverrunException after all of it if a canary broke.
  int64_t Close();
  // True once Close() ran: requests still queued behind the close must fail (any thread).
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  // Counts a finished request, then Publish().
  void FinishRequest() {
    ++requests_;
    Publish();
  }
  // Copies the statistics others may read (Snapshot) and marks the session used now.
  void Publish();

  // The statistics last published, with idle_seconds measured now. Any thread.
  SessionSnapshot Snapshot() const;
  // True when no request is running or queued and the idle timeout has passed.
  bool Expired(Clock::time_point now) const;
  void Touch() { last_used_.store(Clock::now().time_since_epoch().count()); }
  const MemoryBudget& budget() const { return budget_; }
  // Charged with the session's buffers, arena chunks, handles, backward records and requests
  // (RequestCharge). Charge on the strand only (a refusal first trims the arena), or
  // ChargeWithoutReclaim; Refund from any thread.
  MemoryBudget& budget() { return budget_; }

 private:
  const SessionOptions options_;
  MemoryBudget budget_;
  // Declared before the handles: the tensors and graphs in handles_ give their memory back
  // to these when destroyed.
  BufferLedger ledger_;
  Arena arena_;
  ConvPrimitiveCache conv_cache_;
  HandleTable handles_;
  Strand strand_;
  std::atomic<Clock::rep> last_used_;
  int64_t requests_ = 0;             // strand-only
  std::atomic<bool> closed_{false};  // written on the strand, read anywhere
  mutable std::mutex published_mutex_;
  SessionSnapshot published_;
};

}  // namespace onemodel::server
