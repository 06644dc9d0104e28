// onemodel: the command-line client of onemodeld. `onemodel --help` lists the commands.
//
//   onemodel health                                   # exit 0 when SERVING (Docker HEALTHCHECK)
//   S=$(onemodel session create)
//   X=$(onemodel put x.npy --session $S)
//   Y=$(onemodel run Softmax --session $S --input $X --attr axis=-1)
//   onemodel get $Y --session $S --out y.npy
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
  AddServerCommands(app, global);
  AddSessionCommands(app, global);
  AddTensorCommands(app, global);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "onemodel: " << e.what() << "\n";
    return 1;
  }
  return global.exit_code;
}
