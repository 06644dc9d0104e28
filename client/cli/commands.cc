#include "client/cli/commands.h"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iostream>

namespace onemodel::cli {

client::Client Connect(const GlobalOptions& global) {
  client::ClientOptions options;
  if (!global.token_file.empty()) {
    std::ifstream in(global.token_file);
    if (!in || !std::getline(in, options.bearer_token)) {
      throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                          "cannot read a token from '" + global.token_file + "'");
    }
    while (!options.bearer_token.empty() && std::isspace(options.bearer_token.back())) {
      options.bearer_token.pop_back();
    }
  }
  return client::Client(global.server, std::move(options));
}

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
