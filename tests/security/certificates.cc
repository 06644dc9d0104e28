// Generates the test PKI of certificates.h with the openssl command line tool.
#include "tests/security/certificates.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tests/client/command.h"

namespace onemodel::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";

// Runs openssl with `args`; throws with its output unless it exits 0.
void Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), kOpenssl);
  const CommandResult result = RunCommand(args);
  if (result.exit_code != 0) {
    throw std::runtime_error("openssl " + args[1] + " failed (exit " +
                             std::to_string(result.exit_code) + "): " + result.err);
  }
}

}  // namespace

TestCertificates::TestCertificates() {
  std::string dir = (std::filesystem::temp_directory_path() / "onemodel-pki-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  }
  dir_ = dir;
  constexpr char kLeaf[] = "basicConstraints=critical,CA:FALSE\n";
  Issue("ca", "/CN=onemodel test CA", "", "");
  Issue("server", "/CN=localhost", "ca",
        std::string(kLeaf) +
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
            "extendedKeyUsage=serverAuth\n");
  Issue("client", "/CN=onemodel test client", "ca",
        std::string(kLeaf) + "extendedKeyUsage=clientAuth\n");
  Issue("other-ca", "/CN=unrelated CA", "", "");
  Issue("other-client", "/CN=client of the unrelated CA", "other-ca",
        std::string(kLeaf) + "extendedKeyUsage=clientAuth\n");
}

TestCertificates::~TestCertificates() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

const TestCertificates& TestCertificates::Shared() {
  static const TestCertificates certificates;
  return certificates;
}

std::string TestCertificates::Path(const std::string& file) const { return dir_ + "/" + file; }

std::string TestCertificates::Read(const std::string& file) const {
  std::ifstream in(Path(file), std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + Path(file));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> TestCertificates::ServerFlags(bool mutual) const {
  std::vector<std::string> flags = {"--tls-cert", Path("server.pem"), "--tls-key",
                                    Path("server.key")};
  if (mutual) flags.insert(flags.end(), {"--tls-client-ca", Path("ca.pem")});
  return flags;
}

std::shared_ptr<grpc::ChannelCredentials> TestCertificates::ClientCredentials(
    const std::string& ca, const std::string& client) const {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = Read(ca + ".pem");
  if (!client.empty()) {
    options.pem_cert_chain = Read(client + ".pem");
    options.pem_private_key = Read(client + ".key");
  }
  return grpc::SslCredentials(options);
}

void TestCertificates::Issue(const std::string& name, const std::string& subject,
                             const std::string& issuer, const std::string& extensions) const {
  const std::string key = Path(name + ".key");
  const std::string cert = Path(name + ".pem");
  const std::vector<std::string> new_key = {
      "-newkey", "ec",    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
      key,       "-subj", subject};
  if (issuer.empty()) {  // a self-signed CA with the default v3_ca extensions
    std::vector<std::string> args = {"req", "-x509", "-days", "1", "-out", cert};
    args.insert(args.end(), new_key.begin(), new_key.end());
    Openssl(args);
    return;
  }
  const std::string request = Path(name + ".csr");
  const std::string extension_file = Path(name + ".ext");
  std::ofstream(extension_file) << extensions;
  std::vector<std::string> args = {"req", "-new", "-out", request};
  args.insert(args.end(), new_key.begin(), new_key.end());
  Openssl(args);
  Openssl({"x509", "-req", "-in", request, "-CA", Path(issuer + ".pem"), "-CAkey",
           Path(issuer + ".key"), "-days", "1", "-extfile", extension_file, "-out", cert});
}

}  // namespace onemodel::testing
