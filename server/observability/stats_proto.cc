#include "server/observability/stats_proto.h"

namespace onemodel::server {
namespace {

void FillPoolStats(const PoolStats& pool, v1::PoolStats* out) {
  out->set_rented_buffers(pool.rented_buffers);
  out->set_rented_bytes(pool.rented_bytes);
  out->set_rented_requested_bytes(pool.rented_requested_bytes);
  out->set_peak_rented_bytes(pool.peak_rented_bytes);
  out->set_idle_bytes(pool.idle_bytes);
  out->set_max_idle_bytes(pool.max_idle_bytes);
  out->set_hits(pool.hits);
  out->set_misses(pool.misses);
  out->set_frees_over_cap(pool.frees_over_cap);
  for (const PoolClassStats& c : pool.classes) {
    v1::PoolClassStats* wire = out->add_classes();
    wire->set_size_bytes(c.size_bytes);
    wire->set_rented_buffers(c.rented_buffers);
    wire->set_idle_buffers(c.idle_buffers);
  }
}

void FillSessionCounters(const SessionCounters& sessions, v1::SessionCounters* out) {
  out->set_open(sessions.open);
  out->set_created(sessions.created);
  out->set_closed(sessions.closed);
  out->set_expired(sessions.expired);
  out->set_leaked_buffers_reclaimed(sessions.leaked_buffers_reclaimed);
  out->set_buffers_released_by_close(sessions.buffers_released_by_close);
}

}  // namespace

void FillStats(const ServerSnapshot& snapshot, const RpcStats& rpc_stats, v1::Stats* stats) {
  stats->clear_pool();
  FillPoolStats(snapshot.pool, stats->mutable_pool());
  FillSessionCounters(snapshot.sessions, stats->mutable_sessions());
  stats->clear_rpcs();
  for (const RpcMethodStats& m : rpc_stats.Snapshot()) {
    v1::RpcStats* rpc = stats->add_rpcs();
    rpc->set_method(m.method);
    rpc->set_requests(m.requests);
    rpc->set_errors(m.errors);
    rpc->set_latency_sum_seconds(m.latency_sum_seconds);
    rpc->set_decode_seconds(m.phase_seconds[static_cast<size_t>(Phase::kDecode)]);
    rpc->set_queue_seconds(m.phase_seconds[static_cast<size_t>(Phase::kQueue)]);
    rpc->set_execute_seconds(m.phase_seconds[static_cast<size_t>(Phase::kExecute)]);
    rpc->set_encode_seconds(m.phase_seconds[static_cast<size_t>(Phase::kEncode)]);
    rpc->set_inline_requests(m.inline_requests);
  }
}

void FillArenaStats(const ArenaStats& arena, v1::ArenaStats* out) {
  out->set_chunks(arena.chunks);
  out->set_reserved_bytes(arena.reserved_bytes);
  out->set_used_bytes(arena.used_bytes);
  out->set_peak_used_bytes(arena.peak_used_bytes);
  out->set_resets(arena.resets);
  out->set_allocations(arena.allocations);
  out->set_growth_events(arena.growth_events);
}

void FillConvCacheStats(const ConvPrimitiveCacheStats& cache, v1::ConvCacheStats* out) {
  out->set_capacity(cache.capacity);
  out->set_entries(cache.entries);
  out->set_hits(cache.hits);
  out->set_misses(cache.misses);
  out->set_evictions(cache.evictions);
}

}  // namespace onemodel::server
