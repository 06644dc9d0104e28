// Checks the PEM files of the TLS flags with OpenSSL and reads the bearer token file.
#include "server/security_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <stdexcept>

#include "proto/bearer_token.h"
#include "proto/credential_file.h"

namespace onemodel::server {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Certificate = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

// A memory BIO over `pem` (which must outlive it).
Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The first certificate in `pem`, or null.
Certificate FirstCertificate(const std::string& pem) {
  Bio bio = MemoryBio(pem);
  Certificate cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return cert;
}

// "<flag> file '<path>'" for messages.
std::string Named(const std::string& flag, const std::string& path) {
  return flag + " file '" + path + "'";
}

// Empty, or why the TLS files are not usable.
std::string CheckTlsFiles(const ServerConfig& c) {
  const std::string chain = ReadSecurityFile("--tls-cert", c.tls_cert);
  const Certificate cert = FirstCertificate(chain);
  if (!cert) return Named("--tls-cert", c.tls_cert) + " holds no PEM certificate";
  const std::string key_pem = ReadSecurityFile("--tls-key", c.tls_key);
  Bio bio = MemoryBio(key_pem);
  const Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!key) return Named("--tls-key", c.tls_key) + " holds no PEM private key (or it is encrypted)";
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return Named("--tls-key", c.tls_key) + " does not match the certificate in " +
           Named("--tls-cert", c.tls_cert);
  }
  if (!c.tls_client_ca.empty() &&
      !FirstCertificate(ReadSecurityFile("--tls-client-ca", c.tls_client_ca))) {
    return Named("--tls-client-ca", c.tls_client_ca) + " holds no PEM certificate";
  }
  return {};
}

}  // namespace

std::string ReadSecurityFile(const std::string& flag, const std::string& path) {
  try {
    return ReadCredentialFile(path);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("the " + Named(flag, path) + " " + e.what());
  }
}

std::string ReadAuthToken(const std::string& path) {
  if (path.empty()) return {};
  std::string token;
  try {
    token = TokenInFile(ReadSecurityFile("--auth-token-file", path));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("the " + Named("--auth-token-file", path) + " " + e.what());
  }
  if (token.empty()) {
    throw std::runtime_error("the " + Named("--auth-token-file", path) +
                             " is empty; put the token in it");
  }
  return token;
}

std::string CheckSecurityFiles(const ServerConfig& c) {
  try {
    ReadAuthToken(c.auth_token_file);
    return c.tls_cert.empty() ? std::string() : CheckTlsFiles(c);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

}  // namespace onemodel::server
