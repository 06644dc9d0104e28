#include "server/sessions/session.h"

#include <exception>

#include "core/common/exceptions.h"

namespace onemodel::server {

Session::Session(const SessionOptions& options, BufferPool& pool, MemoryBudget* server_budget,
                 WorkerPool& workers)
    : options_(options),
      budget_("session memory limit", options.memory_limit_bytes, server_budget),
      ledger_(pool, &budget_),
      arena_(pool, options.arena_chunk_bytes, &budget_),
      conv_cache_(ConvPrimitiveCache::kDefaultCapacity, &budget_),
      handles_(options.max_handles, &budget_),
      strand_(workers),
      last_used_(Clock::now().time_since_epoch().count()) {
  published_.serial = options.serial;
  published_.kernel_variant = std::string(options.kernels->name());
  published_.memory_limit_bytes = options.memory_limit_bytes;
  // A refusal's advice ("reset the arena") holds: chunks a reset left free go back first.
  budget_.SetReclaimer([this] { return arena_.Trim(0) > 0; });
}

int64_t Session::ResetArena(bool trim, int64_t keep_bytes) {
  const int64_t stale = handles_.ResetArena();
  arena_.Reset();
  if (trim) arena_.Trim(keep_bytes);
  return stale;
}

int64_t Session::Close() {
  closed_.store(true, std::memory_order_release);
  handles_.Clear();  // drops the tensors and the backward graphs they hold
  const int64_t leaked_before = ledger_.leaked();
  std::exception_ptr overrun;
  try {
    ledger_.ReclaimAll();
  } catch (const BufferOverrunException&) {
    overrun = std::current_exception();
  }
  try {
    arena_.Clear();
  } catch (const BufferOverrunException&) {
    if (!overrun) overrun = std::current_exception();
  }
  conv_cache_.Clear();
  Publish();
  if (overrun) std::rethrow_exception(overrun);
  return ledger_.leaked() - leaked_before;
}

void Session::Publish() {
  SessionSnapshot s;
  s.arena = arena_.Stats();
  s.conv_cache = conv_cache_.Stats();
  s.handles = handles_.size();
  s.pool_buffers = ledger_.rented_buffers();
  s.pool_bytes = ledger_.rented_bytes();
  s.charged_bytes = budget_.used();
  s.requests = requests_;
  {
    std::lock_guard guard(published_mutex_);
    s.serial = published_.serial;
    s.kernel_variant = std::move(published_.kernel_variant);
    s.memory_limit_bytes = published_.memory_limit_bytes;
    published_ = std::move(s);
  }
  Touch();
}

SessionSnapshot Session::Snapshot() const {
  const Clock::time_point last{Clock::duration(last_used_.load())};
  std::lock_guard guard(published_mutex_);
  SessionSnapshot s = published_;
  s.idle_seconds = std::chrono::duration<double>(Clock::now() - last).count();
  return s;
}

bool Session::Expired(Clock::time_point now) const {
  const Clock::time_point last{Clock::duration(last_used_.load())};
  return now - last >= options_.idle_timeout && !strand_.busy();
}

}  // namespace onemodel::server
