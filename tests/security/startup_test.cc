// onemodeld refuses to start on a wrong security flag: exit code 2 and a message naming the
// flag and the file, before it listens.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/client/command.h"
#include "tests/security/certificates.h"

namespace onemodel::testing {
namespace {

using ::testing::HasSubstr;

struct BadStart {
  std::string description;
  std::vector<std::string> flags;       // names: "@<file>" is a file of the test PKI
  std::vector<std::string> in_message;  // parts of stderr ("@<file>" as in flags)
};

// Names a row by its description in test output.
void PrintTo(const BadStart& row, std::ostream* out) { *out << row.description; }

class StartupTest : public ::testing::TestWithParam<BadStart> {
 protected:
  static void SetUpTestSuite() {
    const TestCertificates& pki = TestCertificates::Shared();
    std::ofstream(pki.Path("garbage.pem")) << "-----BEGIN CERTIFICATE-----\nnot base64 at all\n"
                                              "-----END CERTIFICATE-----\n";
    std::ofstream(pki.Path("empty-token")) << " \n\t\n";
    std::ofstream(pki.Path("two-line-token")) << "first\nsecond\n";
    std::ofstream(pki.Path("non-ascii-token")) << "t\xc3\xb6ken\n";
    std::filesystem::create_directories(pki.Path("a-directory"));
    std::filesystem::remove(pki.Path("a-fifo"));
    ::mkfifo(pki.Path("a-fifo").c_str(), 0600);
    std::ofstream(pki.Path("huge.pem")) << std::string((1 << 20) + 1, 'x');
  }

  // `text` with "@<file>" replaced by the file's path in the test PKI.
  static std::string Resolve(const std::string& text) {
    return text.starts_with("@") ? TestCertificates::Shared().Path(text.substr(1)) : text;
  }
};

TEST_P(StartupTest, ExitsWithCodeTwoNamingTheFlag) {
  // `timeout` turns a server that starts after all into a failure rather than a hang.
  std::vector<std::string> args = {
      "/usr/bin/timeout", "20", ONEMODELD_PATH, "--listen", "127.0.0.1:0",
      "--metrics-listen", "off"};
  for (const std::string& flag : GetParam().flags) args.push_back(Resolve(flag));
  const CommandResult result = RunCommand(args);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  for (const std::string& part : GetParam().in_message) {
    EXPECT_THAT(result.err, HasSubstr(Resolve(part)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadSecurityFlags, StartupTest,
    ::testing::Values(
        BadStart{"CertWithoutKey", {"--tls-cert", "@server.pem"}, {"--tls-cert", "--tls-key"}},
        BadStart{"KeyWithoutCert", {"--tls-key", "@server.key"}, {"--tls-cert", "--tls-key"}},
        BadStart{"ClientCaWithoutCert", {"--tls-client-ca", "@ca.pem"}, {"--tls-client-ca"}},
        BadStart{"MissingCert",
                 {"--tls-cert", "@missing.pem", "--tls-key", "@server.key"},
                 {"--tls-cert", "@missing.pem"}},
        BadStart{"MissingKey",
                 {"--tls-cert", "@server.pem", "--tls-key", "@missing.key"},
                 {"--tls-key", "@missing.key"}},
        BadStart{"GarbageCert",
                 {"--tls-cert", "@garbage.pem", "--tls-key", "@server.key"},
                 {"--tls-cert", "@garbage.pem", "no PEM certificate"}},
        BadStart{"KeyFileAsCert",
                 {"--tls-cert", "@server.key", "--tls-key", "@server.key"},
                 {"--tls-cert", "@server.key", "no PEM certificate"}},
        BadStart{"GarbageKey",
                 {"--tls-cert", "@server.pem", "--tls-key", "@garbage.pem"},
                 {"--tls-key", "@garbage.pem", "no PEM private key"}},
        BadStart{"KeyOfAnotherCert",
                 {"--tls-cert", "@server.pem", "--tls-key", "@client.key"},
                 {"--tls-key", "@client.key", "does not match", "@server.pem"}},
        BadStart{"MissingClientCa",
                 {"--tls-cert", "@server.pem", "--tls-key", "@server.key", "--tls-client-ca",
                  "@missing-ca.pem"},
                 {"--tls-client-ca", "@missing-ca.pem"}},
        BadStart{"GarbageClientCa",
                 {"--tls-cert", "@server.pem", "--tls-key", "@server.key", "--tls-client-ca",
                  "@garbage.pem"},
                 {"--tls-client-ca", "@garbage.pem", "no PEM certificate"}},
        BadStart{"MissingTokenFile",
                 {"--auth-token-file", "@missing-token"},
                 {"--auth-token-file", "@missing-token"}},
        BadStart{"EmptyTokenFile",
                 {"--auth-token-file", "@empty-token"},
                 {"--auth-token-file", "@empty-token", "empty"}},
        BadStart{"TwoLineTokenFile",
                 {"--auth-token-file", "@two-line-token"},
                 {"--auth-token-file", "@two-line-token", "holds more than one line"}},
        BadStart{"NonAsciiTokenFile",
                 {"--auth-token-file", "@non-ascii-token"},
                 {"--auth-token-file", "@non-ascii-token", "other than printable ASCII"}},
        BadStart{"DirectoryAsTokenFile",
                 {"--auth-token-file", "@a-directory"},
                 {"--auth-token-file", "@a-directory"}},
        // Read without end before (15.7 GB, then std::bad_alloc) or waited for a writer for
        // good, with SIGTERM and SIGINT blocked: refused at once now.
        BadStart{"DevZeroAsTokenFile",
                 {"--auth-token-file", "/dev/zero"},
                 {"--auth-token-file file '/dev/zero' is not a regular file"}},
        BadStart{"FifoAsTokenFile",
                 {"--auth-token-file", "@a-fifo"},
                 {"--auth-token-file", "@a-fifo", "is not a regular file"}},
        BadStart{"DevZeroAsCert",
                 {"--tls-cert", "/dev/zero", "--tls-key", "@server.key"},
                 {"--tls-cert file '/dev/zero' is not a regular file"}},
        BadStart{"HugeClientCa",
                 {"--tls-cert", "@server.pem", "--tls-key", "@server.key", "--tls-client-ca",
                  "@huge.pem"},
                 {"--tls-client-ca", "@huge.pem", "holds more than 1024 KiB"}}),
    [](const ::testing::TestParamInfo<BadStart>& info) { return info.param.description; });

}  // namespace
}  // namespace onemodel::testing
