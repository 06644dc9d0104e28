// ServerSnapshot: one consistent reading of everything onemodeld reports about its memory and
// sessions, taken on demand (a GetStats call, a WatchStats tick, a Prometheus scrape).
//
// The session manager fills it; the gRPC Stats message and the Prometheus metrics are both
// made from it, so the two always agree.
//
//   ServerSnapshot s = sessions.Snapshot();
//   s.pool.rented_bytes;  s.sessions.open;  s.per_session[0].arena.resets;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/conv_cache.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"

namespace onemodel::server {

struct SessionCounters {
  int64_t open = 0;
  int64_t created = 0;
  int64_t closed = 0;                     // by CloseSession or at shutdown
  int64_t expired = 0;                    // after their idle timeout
  int64_t leaked_buffers_reclaimed = 0;   // held by sessions that expired (handles lost)
  int64_t buffers_released_by_close = 0;  // held by sessions when closed (normal)
};

// One session, as metrics may show it: `serial` is a public number (the session id is a
// secret and never appears in metrics or logs).
struct SessionSnapshot {
  int64_t serial = 0;
  std::string kernel_variant;
  ArenaStats arena;
  ConvPrimitiveCacheStats conv_cache;
  int64_t handles = 0;
  int64_t pool_buffers = 0;  // pool buffers the session holds
  int64_t pool_bytes = 0;
  int64_t memory_limit_bytes = 0;
  // What the memory limit counts: buffers by their size class, arena chunks, handles, backward
  // records and queued requests (at least pool_bytes + arena reserved bytes).
  int64_t charged_bytes = 0;
  int64_t requests = 0;
  double idle_seconds = 0;  // since its last request started or ended
};

// The memory a session holds: its pool buffers and its arena's chunks.
inline int64_t MemoryBytes(const SessionSnapshot& s) {
  return s.pool_bytes + s.arena.reserved_bytes;
}

struct ServerSnapshot {
  PoolStats pool;
  SessionCounters sessions;
  std::vector<SessionSnapshot> per_session;
};

}  // namespace onemodel::server
