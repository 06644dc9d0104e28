// RunLoad: the load run itself. Creates the sessions and uploads their tensors, then runs one
// thread per session: warm-up steps (closed loop), a pause while the server's statistics are
// read (every session idle), then the measured phases: one closed loop (each session sends its
// next step when the last one answered) until the duration or the request count is reached, or
// one open-loop phase per arrival rate (--rate, --sweep; see open_loop.h), with every session
// pausing between phases. While a phase runs, the server's statistics are read once a second
// for the time series; a last reading comes before the sessions close.
//
//   LoadResult result = RunLoad(client, options, [](const LoadProgress& p) { Draw(p); });
#pragma once

#include <cstdint>
#include <functional>

#include "client/lib/client.h"
#include "client/load/load_result.h"

namespace onemodel::load {

// Where a run stands, for a progress bar.
struct LoadProgress {
  bool warming_up = true;
  double seconds = 0;          // in this phase so far (the measured phases together)
  double total_seconds = 0;    // the phase's planned length (0 for a --requests phase)
  int64_t requests = 0;        // finished in this phase so far
  int64_t total_requests = 0;  // --requests of the measured phase (0 when timed)
  int64_t errors = 0;          // in both phases so far
};

// Called about five times a second from the calling thread while the sessions run.
using ProgressCallback = std::function<void(const LoadProgress&)>;

// Runs the load `options` describe against `client`; throws client::Error, naming the session,
// when a session cannot be created or its tensors uploaded. Failed requests do not throw: the
// result counts them.
LoadResult RunLoad(client::Client& client, const LoadOptions& options,
                   const ProgressCallback& on_progress);

}  // namespace onemodel::load
