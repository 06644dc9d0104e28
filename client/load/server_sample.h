// ServerSample: the server's statistics at one moment of a load run, as onemodel.v1 sends them:
// the server-wide Stats (pool, session counters) and each load session's SessionStats.
//
//   ServerSample sample = SampleServer(client, sessions);   // never throws
//   if (sample.ok) sample.server.pool().rented_bytes();  sample.sessions[0].arena().chunks();
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/lib/client.h"

namespace onemodel::load {

struct ServerSample {
  bool ok = false;
  std::string error;                       // why the statistics could not be read
  v1::Stats server;                        // Stats without a session: pool, session counters
  std::vector<v1::SessionStats> sessions;  // one per load session, in order; empty when none open
};

// The server-wide statistics and, for each of `sessions`, its own, read now; never throws (a
// failed read gives ok = false and the error).
ServerSample SampleServer(client::Client& client, const std::vector<client::Session>& sessions);

// The bytes the arenas of `sample`'s sessions reserve, together.
int64_t ArenaReservedBytes(const ServerSample& sample);

}  // namespace onemodel::load
