// The status page on the metrics port: one HTML page (kStatusPageHtml, served at / and /status)
// whose inline script polls /status.json (StatusJson) every two seconds and draws the server's
// identity and uptime, the pool's size classes (rented and idle bytes, inline SVG), the sessions
// and the request rates and latency percentiles per RPC. Nothing is fetched from elsewhere.
// Sessions appear by their public serial ("s17"), as in the logs: never their ids or tokens.
//
//   documents["/status"] = {"text/html; charset=utf-8", [] { return std::string(kStatusPageHtml);
//   }}; documents["/status.json"] = {"application/json", [&] { return StatusJson(ReadInputs()); }};
#pragma once

#include <string>
#include <vector>

#include "server/observability/build_info.h"
#include "server/observability/process_stats.h"
#include "server/observability/rpc_stats.h"
#include "server/observability/server_snapshot.h"

namespace onemodel::server {

// The sessions /status.json lists (those holding the most memory); the rest are counted.
inline constexpr size_t kStatusSessionRows = 100;

// Everything the status page shows, read at one moment.
struct StatusInputs {
  std::string instance_id;
  std::string grpc_address;
  BuildInfo build;
  ProcessStats process;
  ServerSnapshot server;
  std::vector<RpcMethodStats> rpcs;
};

// The JSON document /status.json serves (its fields are listed in docs/operations.md#status-page).
std::string StatusJson(const StatusInputs& in);

// The page: HTML, CSS and the script that renders /status.json.
extern const char kStatusPageHtml[];

}  // namespace onemodel::server
