// onemodeld: the OneModel tensor service. `onemodeld --help` lists every setting.
#include "server/config.h"
#include "server/daemon.h"
#include "server/observability/logging.h"
#include "server/termination_signals.h"

namespace {

// Blocks the termination signals before any shared library's initializer runs: OpenBLAS starts
// its threads there, and a thread that does not block them would die of a second SIGTERM.
// Ignores SIGPIPE (termination_signals.h). The executable's .preinit_array runs before every
// library's constructors.
void BlockTerminationSignals(int, char**, char**) {
  const sigset_t signals = onemodel::server::TerminationSignals();
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

[[gnu::section(".preinit_array"),
  gnu::used]] void (*const kBlockTerminationSignals)(int, char**,
                                                     char**) = &BlockTerminationSignals;

}  // namespace

int main(int argc, char** argv) {
  onemodel::server::ServerConfig config;
  if (const int exit_code = onemodel::server::ParseConfig(argc, argv, &config); exit_code >= 0) {
    return exit_code;
  }
  onemodel::server::ConfigureLogging(config.log_level, config.log_format);
  return onemodel::server::RunDaemon(config);
}
