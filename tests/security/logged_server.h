// LoggedServer: a real onemodeld whose stderr goes to a file, at log level trace in the given
// format, so a test can read back every line it logged.
//
//   LoggedServer logged({"--auth-token-file", path}, "json");
//   ... calls to logged.server().grpc_address() ...
//   const std::string log = logged.StopAndReadLog();
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/server_process.h"
#include "tests/security/certificates.h"

namespace onemodel::testing {

class LoggedServer {
 public:
  // Starts onemodeld with `flags` through a wrapper script that replaces the harness's log
  // level with trace and sets --log-format `format` (text | json).
  LoggedServer(std::vector<std::string> flags, const std::string& format) {
    const TestCertificates& pki = TestCertificates::Shared();
    log_ = pki.Path("onemodeld-" + format + ".log");
    const std::string wrapper = pki.Path("onemodeld-logged-" + format);
    std::ofstream(wrapper) << "#!/bin/sh\n"
                              "skip=0\n"
                              "for a in \"$@\"; do\n"
                              "  shift\n"
                              "  if [ $skip = 1 ]; then skip=0; continue; fi\n"
                              "  if [ \"$a\" = --log-level ]; then skip=1; continue; fi\n"
                              "  set -- \"$@\" \"$a\"\n"
                              "done\n"
                              "exec '" ONEMODELD_PATH "' \"$@\" --log-level trace --log-format "
                           << format << " 2>'" << log_ << "'\n";
    chmod(wrapper.c_str(), 0700);
    server_ = std::make_unique<ServerProcess>(std::move(flags), wrapper);
  }
  ServerProcess& server() { return *server_; }
  // Stops the server and returns everything it logged.
  std::string StopAndReadLog() {
    EXPECT_TRUE(server_->Stop().ok());
    std::ifstream in(log_);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string log_;
  std::unique_ptr<ServerProcess> server_;
};

}  // namespace onemodel::testing
