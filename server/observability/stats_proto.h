// The wire form of the server's statistics: onemodel.v1.Stats filled from the same
// ServerSnapshot and RpcStats that /metrics shows (server/observability/metrics.h), so the two
// agree.
//
//   v1::Stats stats;
//   FillStats(sessions.Snapshot(), rpc_stats, &stats);
//   stats.set_server_instance_id(instance_id);
//   if (session) FillArenaStats(session->arena().Stats(),
//   stats.mutable_session()->mutable_arena());
#pragma once

#include "core/kernels/conv_cache.h"
#include "core/memory/arena.h"
#include "onemodel/v1/onemodel.pb.h"
#include "server/observability/rpc_stats.h"
#include "server/observability/server_snapshot.h"

namespace onemodel::server {

// Sets stats->pool, stats->sessions and stats->rpcs (replacing what they held) from
// `snapshot` and `rpc_stats`; server_instance_id and session are the caller's.
void FillStats(const ServerSnapshot& snapshot, const RpcStats& rpc_stats, v1::Stats* stats);

// Copies every field of `arena` into `out`.
void FillArenaStats(const ArenaStats& arena, v1::ArenaStats* out);

// Copies every field of `cache` into `out`.
void FillConvCacheStats(const ConvPrimitiveCacheStats& cache, v1::ConvCacheStats* out);

}  // namespace onemodel::server
