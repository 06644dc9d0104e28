// The onemodeld process: builds the pool, sessions, service, health, reflection and metrics
// from a ServerConfig, serves until SIGTERM, SIGINT or SIGHUP, then drains and exits.
//
// Shutdown: health turns NOT_SERVING, in-flight requests get up to --drain-seconds to finish,
// then they are stopped (long kernels stop between blocks; the calls end UNAVAILABLE), every
// session is closed (its memory returned to the pool, leaks counted), and the process exits
// 0 at once, without gRPC's own teardown (gRPC refuses calls with UNAVAILABLE until then). A second
// signal during the drain stops the calls at once and exits 3. Whatever runs, the process is gone
// kExitMargin after the drain time: past it, it logs and _exits 4.
//
//   ServerConfig config;  ...
//   return RunDaemon(config);
#pragma once

#include <chrono>

#include "server/config.h"

namespace onemodel::server {

// Exit codes after a termination signal (1 and 2 are start and usage errors).
inline constexpr int kExitDrained = 0;       // every call finished or was stopped in time
inline constexpr int kExitSecondSignal = 3;  // a second signal cut the drain short, cleanly
inline constexpr int kExitDrainOverrun = 4;  // not stopped kExitMargin after the drain time
// How long after the drain time (or after a second signal) the process may still take.
inline constexpr std::chrono::seconds kExitMargin{5};

// Serves until a termination signal, drains, and ends the process with the exit code above
// (never returns then); returns 1 when the server cannot start.
int RunDaemon(const ServerConfig& config);

}  // namespace onemodel::server
