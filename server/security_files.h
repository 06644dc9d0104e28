// The files behind onemodeld's security flags (--tls-cert, --tls-key, --tls-client-ca,
// --auth-token-file), read and checked before anything starts, so that a wrong file stops
// the process with exit code 2 and a message naming the flag and the file instead of a vague
// failure to listen or a refused handshake later.
//
//   if (std::string error = CheckSecurityFiles(config); !error.empty()) { print; return 2; }
//   std::string token = ReadAuthToken(config.auth_token_file);
#pragma once

#include <string>

#include "server/config.h"

namespace onemodel::server {

// Empty when every security file the config names is usable: the certificate chain and the
// CA bundle hold PEM certificates, the key is a PEM private key of the certificate, the token
// file holds a token. Otherwise the first problem, naming its flag and file.
std::string CheckSecurityFiles(const ServerConfig& config);

// The token in the --auth-token-file `path` (TokenInFile's rule, proto/bearer_token.h); empty
// when `path` is empty. Throws std::runtime_error naming the flag and file when it is
// unreadable, empty or not one line.
std::string ReadAuthToken(const std::string& path);

// The whole of `path` (ReadCredentialFile's rule: a regular file of at most 1 MiB); throws
// std::runtime_error naming `flag`, the file and why when it is not.
std::string ReadSecurityFile(const std::string& flag, const std::string& path);

}  // namespace onemodel::server
