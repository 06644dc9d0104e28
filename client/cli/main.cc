// onemodel: the command-line client of onemodeld. `onemodel --help` lists the commands.
//
//   onemodel health                                   # exit 0 when SERVING (Docker HEALTHCHECK)
//   S=$(onemodel session create)
//   X=$(onemodel put x.npy --session $S)
//   Y=$(onemodel run Softmax --session $S --input $X --attr axis=-1)
//   onemodel get $Y --session $S --out y.npy
//   onemodel ops Softmax                              # what an operation takes
//   onemodel session close $S
#include <iostream>

#include "client/cli/commands.h"

int main(int argc, char** argv) {
  using namespace onemodel::cli;
  CLI::App app("onemodel: command-line client of the onemodeld tensor service");
  GlobalOptions global;
  AddConnectionFlags(app, global.connection);
  app.add_flag("--progress", global.progress, "draw progress bars even when not on a terminal");
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand
  app.footer(
      "Exit status: 0 success; 1 the command failed (an RPC error, an unreachable server, an "
      "unreadable file; `health`: not SERVING); 2 usage error (unknown command or option, "
      "missing, malformed or conflicting arguments).");
  AddServerCommands(app, global);
  AddOpsCommand(app, global);
  AddSessionCommands(app, global);
  AddTensorCommands(app, global);
  AddSessionStateCommands(app, global);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);  // prints help, or the error with a pointer to --help
    return status == 0 ? 0 : kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "onemodel: " << e.what() << "\nRun with --help for more information.\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "onemodel: " << e.what() << ConnectionAdvice(e, global.connection) << "\n";
    return kExitFailure;
  }
  return global.exit_code;
}
