// ConnectionFlags: how a command-line tool reaches onemodeld (address, bearer token, TLS), the
// flags that set them and the Client they make. Shared by `onemodel` and `onemodel-load`, so
// both accept the same connection flags and environment variables.
//
//   CLI::App app("tool");
//   ConnectionFlags flags;
//   AddConnectionFlags(app, flags);   // --server, --token-file, --tls, --tls-ca, --tls-cert,
//   --tls-key app.parse(argc, argv); client::Client client = Connect(flags);
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/lib/client.h"

namespace onemodel::cli {

struct ConnectionFlags {
  std::string server = "127.0.0.1:50051";
  std::string token_file;  // holds a bearer token; empty: none
  bool tls = false;        // TLS with the system's root certificates (implied by tls_ca)
  std::string tls_ca;      // PEM file of the CA that signed the server's certificate
  std::string tls_cert;    // PEM client certificate for mutual TLS (with tls_key)
  std::string tls_key;     // PEM private key of tls_cert
};

// Adds the connection flags to `app`, each with an environment variable: ONEMODEL_SERVER,
// ONEMODEL_TOKEN_FILE, and ONEMODEL_CLIENT_TLS* for TLS (the server's own ONEMODEL_TLS_* name its
// certificate, so a client in the same container must not read them).
void AddConnectionFlags(CLI::App& app, ConnectionFlags& flags);
// The client options the flags describe; reads the token and PEM files, throws client::Error
// (INVALID_ARGUMENT) naming the file or flag that is wrong.
client::ClientOptions ClientOptionsFrom(const ConnectionFlags& flags);
// A client of the server the flags name.
client::Client Connect(const ConnectionFlags& flags);
// What to try when `error` came from reaching the server the flags name, as a line starting
// with "\nhint: ": a connection that failed (is the server there?) or a missing or refused
// token (which flag sends it). Empty for every other error.
std::string ConnectionAdvice(const std::exception& error, const ConnectionFlags& flags);

}  // namespace onemodel::cli
