// TestCertificates: a throwaway public-key infrastructure for TLS tests, made with the
// `openssl` command in a temporary directory when the object is built and removed with it.
//
// It holds a CA, a server certificate it signed (SAN 127.0.0.1 and localhost), a client
// certificate it signed, and an unrelated second CA with a client certificate of its own, all
// EC P-256 and valid for one day. Files are named "<name>.pem" and "<name>.key".
//
//   const TestCertificates& pki = TestCertificates::Shared();
//   ServerProcess server(pki.ServerFlags(/*mutual=*/false));
//   client::Client client(server.grpc_address(), {.credentials = pki.ClientCredentials("ca")});
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>
#include <vector>

namespace onemodel::testing {

class TestCertificates {
 public:
  // Generates every file; throws std::runtime_error with openssl's output when a step fails.
  TestCertificates();
  // Removes the directory and everything in it.
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  // One set per test process, generated on first use.
  static const TestCertificates& Shared();

  // The path of `file` ("ca.pem", "server.key", ...) in the directory.
  std::string Path(const std::string& file) const;
  // The contents of `file`.
  std::string Read(const std::string& file) const;
  // The onemodeld flags of a TLS server with "server.pem"; with `mutual`, clients must also
  // present a certificate signed by "ca.pem".
  std::vector<std::string> ServerFlags(bool mutual) const;
  // TLS channel credentials trusting `<ca>.pem`, presenting `<client>.pem` and `<client>.key`
  // when `client` is not empty.
  std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const std::string& ca,
                                                              const std::string& client = "") const;

 private:
  // A key and a certificate `<name>` for `subject`, signed by `<issuer>` (self-signed when
  // `issuer` is empty), with the extensions in `extensions` (openssl config lines).
  void Issue(const std::string& name, const std::string& subject, const std::string& issuer,
             const std::string& extensions) const;

  std::string dir_;
};

}  // namespace onemodel::testing
