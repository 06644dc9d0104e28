#include "client/cli/commands.h"

#include <unistd.h>

#include <iostream>

namespace onemodel::cli {

bool ProgressEnabled(const GlobalOptions& global) {
  return global.progress || isatty(STDERR_FILENO) == 1;
}

client::Session OpenSession(client::Client& client, const std::string& session_id, bool keep) {
  if (!session_id.empty()) return client.AttachSession(session_id);
  client::Session session = client.CreateSession({.client_name = "onemodel-cli"});
  if (keep) std::cout << session.Detach() << "\n";
  return session;
}

}  // namespace onemodel::cli
