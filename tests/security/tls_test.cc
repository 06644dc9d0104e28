// TLS and mutual TLS between onemodeld and the C++ client: who is served and who is refused.
#include <gtest/gtest.h>

#include "tests/client/server_test.h"
#include "tests/security/certificates.h"

namespace onemodel::testing {
namespace {

using grpc::StatusCode;

// The flags of a TLS server; with `mutual`, clients must present a certificate of "ca".
std::vector<std::string> TlsFlags(bool mutual) {
  return TestCertificates::Shared().ServerFlags(mutual);
}

// Expects `client` to ping `server` and to run a whole session: put, run, get.
void ExpectServed(client::Client& client, const ServerProcess& server) {
  EXPECT_EQ(client.Ping(), server.instance_id());
  client::Session session = client.CreateSession();
  const client::TensorHandle x = session.Put<float>(std::vector<float>{1, 2, 3}, {3});
  client::RunBuilder run;
  run.Op("Neg", {x});
  EXPECT_EQ(session.Get<float>(session.Run(run).back()), (std::vector<float>{-1, -2, -3}));
}

// Expects a Ping from `client` to fail as a refused connection.
::testing::AssertionResult Refused(client::Client& client) {
  return FailsWith([&] { client.Ping(); }, StatusCode::UNAVAILABLE);
}

TEST(TlsTest, AClientTrustingTheCaIsServed) {
  ServerProcess server(TlsFlags(false));
  client::Client client(server.grpc_address(),
                        {.credentials = TestCertificates::Shared().ClientCredentials("ca")});
  ExpectServed(client, server);
  EXPECT_EQ(client.Health(), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(server.Stop().ok());
}

TEST(TlsTest, APlaintextClientIsRefused) {
  ServerProcess server(TlsFlags(false));
  client::Client client(server.grpc_address());
  EXPECT_TRUE(Refused(client));
  EXPECT_TRUE(server.Stop().ok());
}

TEST(TlsTest, AClientTrustingAnotherCaIsRefused) {
  ServerProcess server(TlsFlags(false));
  client::Client client(server.grpc_address(),
                        {.credentials = TestCertificates::Shared().ClientCredentials("other-ca")});
  EXPECT_TRUE(Refused(client));
  EXPECT_TRUE(server.Stop().ok());
}

TEST(TlsTest, ATlsClientOfAPlaintextServerIsRefused) {
  ServerProcess server;
  client::Client client(server.grpc_address(),
                        {.credentials = TestCertificates::Shared().ClientCredentials("ca")});
  EXPECT_TRUE(Refused(client));
  EXPECT_TRUE(server.Stop().ok());
}

TEST(MutualTlsTest, AClientCertificateSignedByTheClientCaIsAccepted) {
  ServerProcess server(TlsFlags(true));
  client::Client client(
      server.grpc_address(),
      {.credentials = TestCertificates::Shared().ClientCredentials("ca", "client")});
  ExpectServed(client, server);
  EXPECT_TRUE(server.Stop().ok());
}

TEST(MutualTlsTest, AClientWithoutACertificateIsRefused) {
  ServerProcess server(TlsFlags(true));
  client::Client client(server.grpc_address(),
                        {.credentials = TestCertificates::Shared().ClientCredentials("ca")});
  EXPECT_TRUE(Refused(client));
  EXPECT_TRUE(server.Stop().ok());
}

TEST(MutualTlsTest, AClientCertificateOfAnotherCaIsRefused) {
  ServerProcess server(TlsFlags(true));
  client::Client client(
      server.grpc_address(),
      {.credentials = TestCertificates::Shared().ClientCredentials("ca", "other-client")});
  EXPECT_TRUE(Refused(client));
  EXPECT_TRUE(server.Stop().ok());
}

}  // namespace
}  // namespace onemodel::testing
