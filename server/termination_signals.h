// The signals that stop onemodeld (SIGTERM, SIGINT). They are blocked in every thread from
// before the first library initializer runs (main.cc), so only the daemon's sigwait() and
// sigtimedwait() ever see them and a second one can never kill the process.
#pragma once

#include <signal.h>

namespace onemodel::server {

// {SIGTERM, SIGINT}.
inline sigset_t TerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

}  // namespace onemodel::server
