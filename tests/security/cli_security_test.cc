// The `onemodel` CLI's connection flags (--tls-ca, --tls-cert, --tls-key, --token-file)
// against servers that require TLS, mutual TLS and a bearer token.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/client/command.h"
#include "tests/client/server_test.h"
#include "tests/security/certificates.h"

namespace onemodel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "cli-token-1f2e3d4c5b6a";

class CliSecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ofstream(pki().Path("cli-token")) << kToken << "\n";
    std::ofstream(pki().Path("cli-wrong-token")) << "not-the-token\n";
    std::ofstream(pki().Path("cli-spaced-token")) << " \t" << kToken << " \r\n\n";
    std::ofstream(pki().Path("cli-empty-token"));
    std::ofstream(pki().Path("cli-two-line-token")) << kToken << "\nsecond line\n";
    std::vector<std::string> flags = pki().ServerFlags(/*mutual=*/true);
    flags.insert(flags.end(), {"--auth-token-file", pki().Path("cli-token")});
    server_ = new ServerProcess(flags);
  }
  static void TearDownTestSuite() {
    EXPECT_TRUE(server_->Stop().ok());
    delete server_;
  }
  static const TestCertificates& pki() { return TestCertificates::Shared(); }

  // The CLI with --server and then `args`.
  static CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {ONEMODEL_CLI_PATH, "--server", server_->grpc_address()});
    return RunCommand(args);
  }
  // The connection flags of a client with the CA, the client certificate and `token_file`.
  static std::vector<std::string> Trusted(const std::string& token_file = "cli-token") {
    return {"--tls-ca",  pki().Path("ca.pem"),     "--tls-cert",   pki().Path("client.pem"),
            "--tls-key", pki().Path("client.key"), "--token-file", pki().Path(token_file)};
  }
  static ServerProcess* server_;
};

ServerProcess* CliSecurityTest::server_ = nullptr;

TEST_F(CliSecurityTest, HealthAndSessionCreateWorkWithEveryFlag) {
  const CommandResult health = Cli(Join(Trusted(), {"health"}));
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(health.out, "SERVING\n");
  const CommandResult created = Cli(Join(Trusted(), {"session", "create"}));
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string id = created.out.substr(0, created.out.find('\n'));
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;
  const CommandResult closed = Cli(Join(Trusted(), {"session", "close", id}));
  EXPECT_EQ(closed.exit_code, 0) << closed.err;
}

TEST_F(CliSecurityTest, TheFlagsComeFromTheEnvironmentToo) {
  const CommandResult created = RunCommand({ONEMODEL_CLI_PATH, "session", "create"},
                                           {"ONEMODEL_SERVER=" + server_->grpc_address(),
                                            "ONEMODEL_CLIENT_TLS_CA=" + pki().Path("ca.pem"),
                                            "ONEMODEL_CLIENT_TLS_CERT=" + pki().Path("client.pem"),
                                            "ONEMODEL_CLIENT_TLS_KEY=" + pki().Path("client.key"),
                                            "ONEMODEL_TOKEN_FILE=" + pki().Path("cli-token")});
  EXPECT_EQ(created.exit_code, 0) << created.err;
}

TEST_F(CliSecurityTest, AMissingOrWrongTokenIsUnauthenticatedWithoutEchoingIt) {
  const std::vector<std::string> tls = {"--tls-ca",   pki().Path("ca.pem"),
                                        "--tls-cert", pki().Path("client.pem"),
                                        "--tls-key",  pki().Path("client.key")};
  const CommandResult anonymous = Cli(Join(tls, {"session", "create"}));
  EXPECT_EQ(anonymous.exit_code, 1);
  EXPECT_THAT(anonymous.err, HasSubstr("UNAUTHENTICATED"));
  const CommandResult wrong = Cli(Join(Trusted("cli-wrong-token"), {"session", "create"}));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_THAT(wrong.err, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(wrong.err, Not(HasSubstr("not-the-token")));
  EXPECT_THAT(wrong.err, Not(HasSubstr(kToken)));
  // Health checks need no token.
  EXPECT_EQ(Cli(Join(tls, {"health"})).exit_code, 0);
}

// The server's rule (TokenInFile): surrounding whitespace is not the token, an empty file or
// one of two lines is refused naming the file.
TEST_F(CliSecurityTest, ATokenFileIsReadAsTheServerReadsIt) {
  const CommandResult spaced = Cli(Join(Trusted("cli-spaced-token"), {"session", "create"}));
  EXPECT_EQ(spaced.exit_code, 0) << spaced.err;
  const CommandResult empty = Cli(Join(Trusted("cli-empty-token"), {"session", "create"}));
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("--token-file '" + pki().Path("cli-empty-token") +
                                   "' is empty; put the server's token in it"));
  const CommandResult two = Cli(Join(Trusted("cli-two-line-token"), {"session", "create"}));
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_THAT(two.err, HasSubstr("holds more than one line"));
  EXPECT_THAT(two.err, Not(HasSubstr(kToken)));
}

// A credential is read only from a regular file of at most 1 MiB (ReadCredentialFile): /dev/zero
// and a FIFO that nobody writes are refused at once rather than read without end.
TEST_F(CliSecurityTest, ACredentialFileThatIsNotARegularFileIsRefusedAtOnce) {
  const std::string fifo = pki().Path("cli-fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& file : {std::string("/dev/zero"), fifo}) {
    for (const std::string flag : {"--token-file", "--tls-ca"}) {
      const CommandResult result =
          RunCommand({"/usr/bin/timeout", "20", ONEMODEL_CLI_PATH, "--server",
                      server_->grpc_address(), flag, file, "session", "create"});
      EXPECT_EQ(result.exit_code, 1) << flag << " " << file << ": " << result.err;
      EXPECT_THAT(result.err,
                  HasSubstr("the " + flag + " file '" + file + "' is not a regular file"));
    }
  }
  std::ofstream(pki().Path("cli-huge-token")) << std::string((1 << 20) + 1, 'x');
  const CommandResult huge = Cli(Join(Trusted("cli-huge-token"), {"session", "create"}));
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_THAT(huge.err, HasSubstr("holds more than 1024 KiB"));
}

TEST_F(CliSecurityTest, ARefusedTokenGetsAHintNamingTheFlag) {
  const std::vector<std::string> tls = {"--tls-ca",   pki().Path("ca.pem"),
                                        "--tls-cert", pki().Path("client.pem"),
                                        "--tls-key",  pki().Path("client.key")};
  EXPECT_THAT(Cli(Join(tls, {"session", "create"})).err,
              HasSubstr("hint: the server wants its token: pass --token-file FILE (or set "
                        "ONEMODEL_TOKEN_FILE)"));
  EXPECT_THAT(
      Cli(Join(Trusted("cli-wrong-token"), {"session", "create"})).err,
      HasSubstr("hint: the token in '" + pki().Path("cli-wrong-token") + "' is not the server's"));
}

TEST_F(CliSecurityTest, WithoutTheClientCertificateTheConnectionIsRefused) {
  const CommandResult result = Cli({"--tls-ca", pki().Path("ca.pem"), "--token-file",
                                    pki().Path("cli-token"), "session", "create"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
}

TEST_F(CliSecurityTest, WithoutTlsTheConnectionIsRefused) {
  const CommandResult result =
      Cli({"--token-file", pki().Path("cli-token"), "health", "--timeout-ms", "2000"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(result.err,
              HasSubstr("hint: could not reach onemodeld at '" + server_->grpc_address() + "'"));
}

}  // namespace
}  // namespace onemodel::testing
