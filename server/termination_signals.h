// The signals that stop onemodeld (SIGTERM, SIGINT, and SIGHUP: the terminal that started it
// closed; not when it was started with SIGHUP ignored, as `nohup onemodeld` does, or a
// blocked SIGHUP would still reach sigwait()). They are blocked in every thread from before the
// first library initializer runs (main.cc), so only the daemon's sigwait() and sigtimedwait() ever
// see them and a second one can never kill the process. SIGPIPE is ignored from the same moment: a
// log reader that went away makes a write fail, not the process die.
#pragma once

#include <signal.h>

namespace onemodel::server {

// {SIGTERM, SIGINT, SIGHUP}, without SIGHUP while the process ignores it (nothing in onemodeld
// changes its disposition, so every call gives the same set).
inline sigset_t TerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  struct sigaction hangup {};
  if (sigaction(SIGHUP, nullptr, &hangup) != 0 || hangup.sa_handler != SIG_IGN) {
    sigaddset(&signals, SIGHUP);
  }
  return signals;
}

// "SIGTERM", "SIGINT" or "SIGHUP" for one of TerminationSignals().
inline const char* TerminationSignalName(int signal_number) {
  switch (signal_number) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "SIGHUP";
  }
}

}  // namespace onemodel::server
