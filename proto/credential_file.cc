#include "proto/credential_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace onemodel {
namespace {

// Closes a descriptor when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string ReadCredentialFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) throw std::runtime_error(std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw std::runtime_error("is not a regular file (a FIFO, a device or a directory); name the file that "
                  "holds the credential");
  }
  const auto too_large = [] {
    return std::runtime_error("holds more than " + std::to_string(kMaxCredentialFileBytes >> 10) +
                   " KiB, more than any token or PEM bundle; name the credential file itself");
  };
  if (st.st_size > kMaxCredentialFileBytes) throw too_large();
  std::string text(static_cast<size_t>(kMaxCredentialFileBytes) + 1, '\0');
  size_t have = 0;
  while (have < text.size()) {  // one byte past the bound tells a file that grew since fstat
    const ssize_t n = ::read(file.fd, text.data() + have, text.size() - have);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("cannot be read: ") + std::strerror(errno));
    have += static_cast<size_t>(n);
  }
  if (have > static_cast<size_t>(kMaxCredentialFileBytes)) throw too_large();
  text.resize(have);
  return text;
}

}  // namespace onemodel
