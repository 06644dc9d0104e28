#include "server/observability/request_phases.h"

namespace onemodel::server {
namespace {

thread_local RequestPhases* current_phases = nullptr;

}  // namespace

PhaseScope::PhaseScope(RequestPhases* phases) : previous_(current_phases) {
  current_phases = phases;
}

PhaseScope::~PhaseScope() { current_phases = previous_; }

PhaseTimer::PhaseTimer(Phase phase)
    : phases_(current_phases),
      phase_(phase),
      start_(phases_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {
}

PhaseTimer::~PhaseTimer() {
  if (phases_) (*phases_)[phase_] += std::chrono::steady_clock::now() - start_;
}

}  // namespace onemodel::server
