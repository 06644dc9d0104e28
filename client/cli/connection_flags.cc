#include "client/cli/connection_flags.h"

#include <grpcpp/security/credentials.h>

#include <stdexcept>
#include <string_view>

#include "proto/bearer_token.h"
#include "proto/credential_file.h"
#include "proto/host_port.h"

namespace onemodel::cli {
namespace {

// The whole of `path` (ReadCredentialFile's rule); throws naming `what` the file was for and
// why when it cannot be read.
std::string ReadFile(const std::string& path, const std::string& what) {
  try {
    return ReadCredentialFile(path);
  } catch (const std::runtime_error& e) {
    throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                        "the " + what + " file '" + path + "' " + e.what());
  }
}

// The token in the token file, by the server's rule (TokenInFile); throws when there is none.
std::string ReadToken(const std::string& path) {
  std::string token;
  try {
    token = TokenInFile(ReadFile(path, "--token-file"));
  } catch (const std::invalid_argument& e) {
    throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                        "the --token-file '" + path + "' " + e.what());
  }
  if (token.empty()) {
    throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                        "the --token-file '" + path + "' is empty; put the server's token in it");
  }
  return token;
}

// Empty when `target` is a gRPC target a client can dial: host:port with a port from 1 to
// 65535 (HostPortProblem's rule) or one of gRPC's own URI forms (unix:/path, dns:///host:port,
// ...); else why not.
std::string CheckServerTarget(const std::string& target) {
  for (const std::string_view scheme :
       {"unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:", "vsock:"}) {
    if (target.starts_with(scheme) && target.size() > scheme.size()) return "";
  }
  const std::string problem = HostPortProblem(target, 1);
  if (problem.empty()) return "";
  return "must be host:port with a port from 1 to 65535 (for example 127.0.0.1:50051; or a "
         "gRPC target such as unix:/path), and " +
         problem + "; got '" + target + "'";
}

}  // namespace

void AddConnectionFlags(CLI::App& app, ConnectionFlags& flags) {
  app.add_option("--server", flags.server, "server address host:port")
      ->envname("ONEMODEL_SERVER")
      ->capture_default_str()
      ->check(CLI::Validator(CheckServerTarget, "host:port"));
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

std::string ConnectionAdvice(const std::exception& error, const ConnectionFlags& flags) {
  const auto* rpc = dynamic_cast<const client::Error*>(&error);
  if (rpc && rpc->code() == grpc::StatusCode::UNAUTHENTICATED) {
    return flags.token_file.empty()
               ? "\nhint: the server wants its token: pass --token-file FILE (or set "
                 "ONEMODEL_TOKEN_FILE) naming a file that holds what its --auth-token-file holds"
               : "\nhint: the token in '" + flags.token_file +
                     "' is not the server's: use the file its --auth-token-file names";
  }
  // The server's own UNAVAILABLE says it is shutting down; any other came from connecting.
  if (rpc && rpc->code() == grpc::StatusCode::UNAVAILABLE &&
      !rpc->message().starts_with("the server is shutting down")) {
    return "\nhint: could not reach onemodeld at '" + flags.server +
           "': is it running there, and with TLS exactly when --tls is given? Start it with "
           "scripts/start, or pass --server host:port (or set ONEMODEL_SERVER)";
  }
  return {};
}

}  // namespace onemodel::cli
