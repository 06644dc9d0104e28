// The subcommands of the `onemodel` CLI, added to the app one group at a time, and what they
// share: the global options and how a command gets its client and session.
//
//   CLI::App app("onemodel");
//   GlobalOptions global;
//   AddServerCommands(app, global);   // health, stats
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>

#include "client/cli/connection_flags.h"
#include "client/lib/client.h"

namespace onemodel::cli {

// Exit statuses (`onemodel --help` documents them).
inline constexpr int kExitFailure = 1;  // an RPC failed, the server is unreachable, a file is bad
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

// A command line that parses but cannot work (put without a session to put into); main prints
// it with a pointer to --help and exits kExitUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GlobalOptions {
  ConnectionFlags connection;
  bool progress = false;  // draw progress bars even when stderr is not a terminal
  int exit_code = 0;      // what main returns after a command succeeded
};

// Whether transfers draw a progress bar (--progress, or stderr is a terminal).
bool ProgressEnabled(const GlobalOptions& global);
// The session `session_id` names, else a new one; a new session with `keep` stays open after
// the command and its id is printed on its own line first.
client::Session OpenSession(client::Client& client, const std::string& session_id, bool keep);

// health, stats
void AddServerCommands(CLI::App& app, GlobalOptions& global);
// ops
void AddOpsCommand(CLI::App& app, GlobalOptions& global);
// session create, session close
void AddSessionCommands(CLI::App& app, GlobalOptions& global);
// put, run, get, describe
void AddTensorCommands(CLI::App& app, GlobalOptions& global);
// backward, release, reset-arena
void AddSessionStateCommands(CLI::App& app, GlobalOptions& global);

}  // namespace onemodel::cli
