// Reading a credential file (a bearer token, a PEM certificate, key or CA bundle), the one way
// the server's security flags and the clients' connection flags do: only a regular file, and
// only up to a bound, so that a flag naming /dev/zero, a FIFO nobody writes or a huge file
// stops with a message at once instead of reading without end.
//
//   std::string pem = ReadCredentialFile(path);  // throws std::runtime_error saying why
#pragma once

#include <cstdint>
#include <string>

namespace onemodel {

// The most a credential file may hold: far above any token or PEM bundle (Debian's whole CA
// bundle is about 200 KiB).
inline constexpr int64_t kMaxCredentialFileBytes = int64_t{1} << 20;

// The whole of the regular file at `path` (following links). Throws std::runtime_error whose
// message completes "the file '<path>' ..." (for example "is not a regular file (a FIFO, a
// device or a directory)") when it cannot be opened, is not a regular file, or holds more
// than kMaxCredentialFileBytes.
std::string ReadCredentialFile(const std::string& path);

}  // namespace onemodel
