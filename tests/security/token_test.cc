// Bearer-token authentication: every OneModel RPC (unary and streamed) needs the token, a
// refusal never echoes a token, and health checks stay open.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/client/command.h"
#include "tests/client/server_test.h"
#include "tests/security/certificates.h"

namespace onemodel::testing {
namespace {

using grpc::StatusCode;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "tok-5f3a9c1e-7b2d-4e8f-a6c0-d91b3e7f2a48";

// A token file holding kToken (with a trailing newline, as editors write it).
std::vector<std::string> TokenFlags() {
  const std::string path = TestCertificates::Shared().Path("token");
  std::ofstream(path) << kToken << "\n";
  return {"--auth-token-file", path};
}

// Success when `call` fails UNAUTHENTICATED without quoting kToken or `sent`.
::testing::AssertionResult Unauthenticated(const std::function<void()>& call,
                                           const std::string& sent) {
  try {
    call();
  } catch (const client::Error& e) {
    if (e.code() != StatusCode::UNAUTHENTICATED) {
      return ::testing::AssertionFailure() << "expected UNAUTHENTICATED, got: " << e.what();
    }
    const std::string message = e.what();
    if (message.find(kToken) != std::string::npos ||
        (!sent.empty() && message.find(sent) != std::string::npos)) {
      return ::testing::AssertionFailure() << "the message echoes a token: " << message;
    }
    if (message.find("--auth-token-file") == std::string::npos) {
      return ::testing::AssertionFailure() << "the message does not say what to do: " << message;
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "the call succeeded";
}

class TokenTest : public ::testing::Test {
 protected:
  // Expects every kind of call through `client` (a session of `owner` attached) to be refused.
  void ExpectEveryCallRefused(client::Client& client, const std::string& sent) {
    client::Session owned = owner_->CreateSession();
    const client::TensorHandle x = owned.Put<float>(std::vector<float>{1, 2}, {2});
    client::Session stranger = client.AttachSession(owned.id());
    const client::TensorData data = client::TensorData::From<float>(std::vector<float>{1}, {1});
    EXPECT_TRUE(Unauthenticated([&] { client.Ping(); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { client.CreateSession(); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { client.Stats(); }, sent));
    EXPECT_TRUE(Unauthenticated(
        [&] { client.WatchStats(10, [](const v1::Stats&) { return false; }); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.KeepAlive(); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.Put(data); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.Upload(data); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.GetProto(x); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.Download(x); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.Describe(x); }, sent));
    client::RunBuilder run;
    run.Op("Neg", {x});
    EXPECT_TRUE(Unauthenticated([&] { stranger.Run(run); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.ResetArena(); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.Release({x}); }, sent));
    EXPECT_TRUE(Unauthenticated([&] { stranger.Close(); }, sent));
    EXPECT_EQ(owned.Get<float>(x), (std::vector<float>{1, 2}));  // nothing was touched
  }

  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(TokenFlags());
    owner_ = std::make_unique<client::Client>(server_->grpc_address(),
                                              client::ClientOptions{.bearer_token = kToken});
  }
  void TearDown() override {
    owner_.reset();
    EXPECT_TRUE(server_->Stop().ok());
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> owner_;
};

TEST_F(TokenTest, EveryCallWithoutATokenIsRefused) {
  client::Client anonymous(server_->grpc_address());
  ExpectEveryCallRefused(anonymous, "");
}

TEST_F(TokenTest, EveryCallWithAWrongTokenIsRefusedWithoutEchoingIt) {
  const std::string wrong = "wrong-token-0123456789";
  client::Client client(server_->grpc_address(), {.bearer_token = wrong});
  ExpectEveryCallRefused(client, wrong);
}

TEST_F(TokenTest, APrefixOrAnExtensionOfTheTokenIsRefused) {
  const std::string token = kToken;
  for (const std::string& sent : {token.substr(0, token.size() - 1), token + "0", token + token,
                                  std::string(token.size(), 'x')}) {
    SCOPED_TRACE(sent);
    EXPECT_TRUE(Unauthenticated(
        [&] { client::Client(server_->grpc_address(), {.bearer_token = sent}).Ping(); }, sent));
  }
}

TEST_F(TokenTest, TheTokenWithoutTheBearerSchemeIsRefused) {
  auto stub = v1::OneModel::NewStub(owner_->channel());
  for (const std::string& header :
       {std::string(kToken), "bearer " + std::string(kToken), "Basic " + std::string(kToken)}) {
    SCOPED_TRACE(header);
    grpc::ClientContext context;
    context.AddMetadata("authorization", header);
    v1::PingReply reply;
    const grpc::Status status = stub->Ping(&context, v1::PingRequest(), &reply);
    EXPECT_EQ(status.error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_THAT(status.error_message(), Not(HasSubstr(kToken)));
  }
}

// Sends Ping with one "authorization" entry per element of `headers` through `channel`.
grpc::Status PingWithAuthorizations(const std::shared_ptr<grpc::Channel>& channel,
                                    const std::vector<std::string>& headers) {
  auto stub = v1::OneModel::NewStub(channel);
  grpc::ClientContext context;
  for (const std::string& header : headers) context.AddMetadata("authorization", header);
  v1::PingReply reply;
  return stub->Ping(&context, v1::PingRequest(), &reply);
}

// Every copy of a repeated header must carry the token, whichever comes first; copies of the
// right one are served. `channel` reaches a server started with TokenFlags().
void ExpectRepeatedAuthorizationsEachChecked(const std::shared_ptr<grpc::Channel>& channel) {
  const std::string right = "Bearer " + std::string(kToken);
  const std::string wrong = "Bearer wrong-token-0123456789";
  for (const auto& headers :
       {std::vector{right, wrong}, std::vector{wrong, right}, std::vector{right, std::string()}}) {
    SCOPED_TRACE(headers[0] + " | " + headers[1]);
    const grpc::Status status = PingWithAuthorizations(channel, headers);
    EXPECT_EQ(status.error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_THAT(status.error_message(), Not(HasSubstr(kToken)));
  }
  EXPECT_TRUE(PingWithAuthorizations(channel, {right, right}).ok());
}

TEST_F(TokenTest, EveryCopyOfARepeatedAuthorizationHeaderMustCarryTheToken) {
  ExpectRepeatedAuthorizationsEachChecked(owner_->channel());
}

TEST_F(TokenTest, TheRightTokenIsServed) {
  EXPECT_EQ(owner_->Ping(), server_->instance_id());
  client::Session session = owner_->CreateSession();
  const client::TensorHandle x =
      session.Upload(client::TensorData::From<float>(std::vector<float>{1, 2, 3}, {3}));
  EXPECT_EQ(session.Download(x).ToVector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(session.Stats().session().handles(), 1);
}

TEST_F(TokenTest, HealthChecksStayOpenWithoutAToken) {
  client::Client anonymous(server_->grpc_address());
  EXPECT_EQ(anonymous.Health(), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(anonymous.Health("onemodel.v1.OneModel"),
            grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(TokenOverTlsTest, TlsAndATokenTogetherNeedBoth) {
  const TestCertificates& pki = TestCertificates::Shared();
  ServerProcess server(Join(pki.ServerFlags(/*mutual=*/true), TokenFlags()));
  const auto tls = pki.ClientCredentials("ca", "client");
  EXPECT_TRUE(Unauthenticated(
      [&] { client::Client(server.grpc_address(), {.credentials = tls}).Ping(); }, ""));
  EXPECT_TRUE(
      FailsWith([&] { client::Client(server.grpc_address(), {.bearer_token = kToken}).Ping(); },
                StatusCode::UNAVAILABLE));
  {
    client::Client both(server.grpc_address(), {.bearer_token = kToken, .credentials = tls});
    EXPECT_EQ(both.Ping(), server.instance_id());
    client::Session session = both.CreateSession();
    EXPECT_EQ(session.Get<float>(session.Put<float>(std::vector<float>{4}, {1})),
              (std::vector<float>{4}));
    EXPECT_EQ(both.Health(), grpc::health::v1::HealthCheckResponse::SERVING);
    ExpectRepeatedAuthorizationsEachChecked(both.channel());
  }
  EXPECT_TRUE(server.Stop().ok());
}

}  // namespace
}  // namespace onemodel::testing
