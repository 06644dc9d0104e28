// RunCommand: runs a program to completion and captures its exit code, stdout and stderr
// (for tests of the `onemodel` CLI).
//
//   CommandResult r = RunCommand({ONEMODEL_CLI_PATH, "health"}, {"ONEMODEL_SERVER=..."});
//   EXPECT_EQ(r.exit_code, 0) << r.err;
#pragma once

#include <string>
#include <vector>

namespace onemodel::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

// `a` followed by `b` (arguments and flags put together).
inline std::vector<std::string> Join(std::vector<std::string> a,
                                     const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs `args` (args[0] is the program's path) with `env` ("NAME=value") added to this
// process's environment.
CommandResult RunCommand(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {});

}  // namespace onemodel::testing
