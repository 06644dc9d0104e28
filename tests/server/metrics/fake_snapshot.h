// FakeSnapshot: a ServerSnapshot whose every statistic is set, each to a different value
// (base + 1, base + 2, ... in declaration order), for the metrics and stats tests.
//
//   ServerSnapshot s = FakeSnapshot(100);   // s.pool.rented_buffers == 101, ...
#pragma once

#include <cstdint>

#include "server/observability/server_snapshot.h"

namespace onemodel::server {

inline ServerSnapshot FakeSnapshot(int64_t base) {
  int64_t v = base;
  ServerSnapshot s;
  for (int64_t* field :
       {&s.pool.rented_buffers, &s.pool.rented_requested_bytes, &s.pool.rented_bytes,
        &s.pool.peak_rented_bytes, &s.pool.idle_bytes, &s.pool.max_idle_bytes, &s.pool.hits,
        &s.pool.misses, &s.pool.frees_over_cap, &s.sessions.open, &s.sessions.created,
        &s.sessions.closed, &s.sessions.expired, &s.sessions.leaked_buffers_reclaimed}) {
    *field = ++v;
  }
  for (int64_t size : {64, 4096}) {
    PoolClassStats& c = s.pool.classes.emplace_back();
    c.size_bytes = size;
    c.rented_buffers = ++v;
    c.idle_buffers = ++v;
  }
  for (int64_t serial : {7, 9}) {
    SessionSnapshot& session = s.per_session.emplace_back();
    session.serial = serial;
    session.kernel_variant = serial == 7 ? "reference" : "fast-avx2";
    ArenaStats& a = session.arena;
    for (int64_t* field :
         {&a.chunks, &a.reserved_bytes, &a.used_bytes, &a.peak_used_bytes, &a.resets,
          &a.allocations, &a.growth_events, &session.handles, &session.pool_buffers,
          &session.pool_bytes, &session.memory_limit_bytes, &session.requests}) {
      *field = ++v;
    }
  }
  s.sessions.buffers_released_by_close = ++v;  // added later: last, so earlier values stay
  for (SessionSnapshot& session : s.per_session) session.charged_bytes = ++v;
  return s;
}

}  // namespace onemodel::server
