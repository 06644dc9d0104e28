#include "client/cli/connection_flags.h"

#include <grpcpp/security/credentials.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace onemodel::cli {
namespace {

// The whole of `path`; throws naming `what` the file was for when it cannot be read.
std::string ReadFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                        "cannot read the " + what + " file '" + path + "'");
  }
  return text.str();
}

// The first line of the token file, without trailing whitespace; throws when it is empty.
std::string ReadToken(const std::string& path) {
  std::istringstream text(ReadFile(path, "--token-file"));
  std::string token;
  std::getline(text, token);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
  if (token.empty()) {
    throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                        "the --token-file '" + path + "' holds no token on its first line");
  }
  return token;
}

}  // namespace

void AddConnectionFlags(CLI::App& app, ConnectionFlags& flags) {
  app.add_option("--server", flags.server, "server address host:port")
      ->envname("ONEMODEL_SERVER")
      ->capture_default_str();
  app.add_option("--token-file", flags.token_file, "file holding a bearer token")
      ->envname("ONEMODEL_TOKEN_FILE")
      ->check(CLI::ExistingFile);
  app.add_flag("--tls", flags.tls, "connect with TLS, trusting the system's root certificates")
      ->envname("ONEMODEL_CLIENT_TLS");
  app.add_option("--tls-ca", flags.tls_ca,
                 "PEM file of the CA that signed the server (implies --tls)")
      ->envname("ONEMODEL_CLIENT_TLS_CA")
      ->check(CLI::ExistingFile);
  auto* cert = app.add_option("--tls-cert", flags.tls_cert,
                              "PEM client certificate for mutual TLS (with --tls-key)")
                   ->envname("ONEMODEL_CLIENT_TLS_CERT")
                   ->check(CLI::ExistingFile);
  auto* key = app.add_option("--tls-key", flags.tls_key, "PEM private key of --tls-cert")
                  ->envname("ONEMODEL_CLIENT_TLS_KEY")
                  ->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
}

client::ClientOptions ClientOptionsFrom(const ConnectionFlags& flags) {
  client::ClientOptions options;
  if (!flags.token_file.empty()) options.bearer_token = ReadToken(flags.token_file);
  if (flags.tls || !flags.tls_ca.empty() || !flags.tls_cert.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!flags.tls_ca.empty()) ssl.pem_root_certs = ReadFile(flags.tls_ca, "--tls-ca");
    if (!flags.tls_cert.empty()) {
      ssl.pem_cert_chain = ReadFile(flags.tls_cert, "--tls-cert");
      ssl.pem_private_key = ReadFile(flags.tls_key, "--tls-key");
    }
    options.credentials = grpc::SslCredentials(ssl);
  }
  return options;
}

client::Client Connect(const ConnectionFlags& flags) {
  return client::Client(flags.server, ClientOptionsFrom(flags));
}

}  // namespace onemodel::cli
