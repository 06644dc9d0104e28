// Where a request's time goes on the server (Phase in rpc_stats.h): the work of a request
// installs its RequestPhases on the thread it runs on, and the codec's call sites time their
// decoding and encoding into it; CallObserver splits the rest into queue and execute.
//
//   RequestPhases phases;
//   const PhaseScope scope(&phases);  // while the request's work runs on this thread
//   ...
//   const PhaseTimer timer(Phase::kDecode);  // adds until the end of its scope
//   Tensor t = DecodeTensor(proto, allocator);
#pragma once

#include <chrono>

#include "server/observability/rpc_stats.h"

namespace onemodel::server {

// Makes `phases` the current thread's request phases until destroyed (then the previous).
class PhaseScope {
 public:
  explicit PhaseScope(RequestPhases* phases);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  RequestPhases* previous_;
};

// Adds the time from its construction to its destruction to `phase` of the thread's current
// request phases (nothing when no PhaseScope is active).
class PhaseTimer {
 public:
  explicit PhaseTimer(Phase phase);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  RequestPhases* phases_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace onemodel::server
