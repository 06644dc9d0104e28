// The onemodeld process: builds the pool, sessions, service, health, reflection and metrics
// from a ServerConfig, serves until SIGTERM or SIGINT, then drains and exits.
//
// Shutdown: health turns NOT_SERVING, in-flight requests get up to --drain-seconds to finish
// (then they are cancelled), every session is closed (its memory returned to the pool, leaks
// counted), and the process exits 0.
//
//   ServerConfig config;  ...
//   return RunDaemon(config);
#pragma once

#include "server/config.h"

namespace onemodel::server {

// Serves until a termination signal; returns the process exit code.
int RunDaemon(const ServerConfig& config);

}  // namespace onemodel::server
