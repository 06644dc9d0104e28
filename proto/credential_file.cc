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
  explicit Descriptor(int f) : fd(f) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
  const int fd;
};

// Whether `st` is a regular file's; throws the refusal for anything else.
void RequireRegular(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    throw std::runtime_error(
        "is not a regular file (a FIFO, a device or a directory); name the file that holds "
        "the credential");
  }
}

std::runtime_error SystemError(const char* what) {
  return std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

std::string ReadCredentialFile(const std::string& path) {
  // Looked at before it is opened (opening some devices acts), then again through the
  // descriptor in case the path changed in between. O_NONBLOCK: a FIFO put there meanwhile
  // must not make the open wait for a writer.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw SystemError("cannot be opened");
  RequireRegular(st);
  const Descriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (file.fd < 0) throw SystemError("cannot be opened");
  if (::fstat(file.fd, &st) != 0) throw SystemError("cannot be examined");
  RequireRegular(st);
  const auto too_large = [] {
    return std::runtime_error(
        "holds more than " + std::to_string(kMaxCredentialFileBytes >> 10) +
        " KiB, more than any token or PEM bundle; name the credential file itself");
  };
  if (st.st_size > kMaxCredentialFileBytes) throw too_large();
  std::string text(static_cast<size_t>(kMaxCredentialFileBytes) + 1, '\0');
  size_t have = 0;
  while (have < text.size()) {  // one byte past the bound tells a file that grew since fstat
    const ssize_t n = ::read(file.fd, text.data() + have, text.size() - have);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SystemError("cannot be read");
    have += static_cast<size_t>(n);
  }
  if (have > static_cast<size_t>(kMaxCredentialFileBytes)) throw too_large();
  text.resize(have);
  return text;
}

}  // namespace onemodel
