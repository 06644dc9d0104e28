// Unguessable names and kept secrets: session ids carry 128 random bits, handles a tag keyed
// by a per-session secret, and neither they nor the bearer token reach the logs or metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <bitset>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/client/server_test.h"
#include "tests/security/certificates.h"
#include "tests/security/logged_server.h"

namespace onemodel::testing {
namespace {

using grpc::StatusCode;
using ::testing::HasSubstr;
using ::testing::Not;

const std::regex kSessionId("[0-9a-f]{32}");
const std::regex kHandle("[pa][1-9][0-9]*\\.[0-9a-f]{16}");

// The 16 hex digits after the dot of `handle`.
std::string TagOf(const client::TensorHandle& handle) {
  return handle.id().substr(handle.id().find('.') + 1);
}

class SecrecyTest : public ServerTest {};

TEST_F(SecrecyTest, SessionIdsAre128RandomBits) {
  constexpr int kSessions = 200;
  std::set<std::string> ids;
  std::array<int, 128> ones{};
  for (int i = 0; i < kSessions; ++i) {
    client::Session session = NewSession();
    ASSERT_TRUE(std::regex_match(session.id(), kSessionId)) << session.id();
    ids.insert(session.id());
    for (int digit = 0; digit < 32; ++digit) {
      const std::bitset<4> bits(std::stoi(session.id().substr(digit, 1), nullptr, 16));
      for (int bit = 0; bit < 4; ++bit) ones[digit * 4 + bit] += bits[bit];
    }
  }
  EXPECT_EQ(ids.size(), kSessions);
  // Every bit varies like a coin: a counter, a clock or a short random part would leave bits
  // that stay fixed (more than 8 standard deviations from 100 here).
  for (int bit = 0; bit < 128; ++bit) {
    EXPECT_GT(ones[bit], 40) << "bit " << bit;
    EXPECT_LT(ones[bit], 160) << "bit " << bit;
  }
}

TEST_F(SecrecyTest, HandlesCarryASixtyFourBitTagKeyedPerSession) {
  client::Session a = NewSession();
  client::Session b = NewSession();
  const client::TensorHandle in_a = a.Put<float>(std::vector<float>{1}, {1});
  const client::TensorHandle in_b = b.Put<float>(std::vector<float>{1}, {1});
  ASSERT_TRUE(std::regex_match(in_a.id(), kHandle)) << in_a.id();
  ASSERT_TRUE(std::regex_match(in_b.id(), kHandle)) << in_b.id();
  // The same serial in both sessions, told apart only by the keyed tag.
  EXPECT_EQ(in_a.id().substr(0, in_a.id().find('.')), in_b.id().substr(0, in_b.id().find('.')));
  EXPECT_NE(TagOf(in_a), TagOf(in_b));
}

TEST_F(SecrecyTest, AHandleOfAnotherSessionIsRefusedLikeOneNeverIssued) {
  client::Session a = NewSession();
  client::Session b = NewSession();
  const client::TensorHandle theirs = a.Put<float>(std::vector<float>{1}, {1});
  b.Put<float>(std::vector<float>{2}, {1});  // b has a handle of the same serial
  const std::string serial = theirs.id().substr(0, theirs.id().find('.'));
  const client::TensorHandle invented(serial + ".0123456789abcdef");
  // The same code and words for both (with the handle quoted), so a refusal says nothing of
  // whether the handle lives in another session.
  auto message = [&](const client::TensorHandle& h) -> std::string {
    try {
      b.Describe(h);
    } catch (const client::Error& e) {
      EXPECT_EQ(e.code(), StatusCode::NOT_FOUND) << e.what();
      std::string text = e.message();
      text.replace(text.find(h.id()), h.id().size(), "<handle>");
      return text;
    }
    ADD_FAILURE() << h.id() << " was accepted in another session";
    return "";
  };
  EXPECT_EQ(message(theirs), message(invented));
  EXPECT_THAT(message(theirs), HasSubstr("is not a handle of this session"));
}

TEST_F(SecrecyTest, EveryFlippedTagBitMakesTheHandleUnknown) {
  client::Session session = NewSession();
  const client::TensorHandle x = session.Put<float>(std::vector<float>{7}, {1});
  const size_t tag_at = x.id().find('.') + 1;
  for (int bit = 0; bit < 64; ++bit) {
    std::string id = x.id();
    char& digit = id[tag_at + 15 - bit / 4];
    const int value = std::stoi(std::string(1, digit), nullptr, 16) ^ (1 << (bit % 4));
    digit = "0123456789abcdef"[value];
    EXPECT_TRUE(FailsWith([&] { session.Describe(client::TensorHandle(id)); },
                          StatusCode::NOT_FOUND, {"is not a handle of this session"}))
        << "bit " << bit;
  }
  EXPECT_EQ(session.Get<float>(x), (std::vector<float>{7}));  // the real one still works
}

TEST_F(SecrecyTest, MetricsNameSessionsBySerialOnly) {
  client::Session session = NewSession();
  session.Put<float>(std::vector<float>{1}, {1});
  const std::string metrics = HttpGet(server().metrics_address(), "/metrics");
  ASSERT_THAT(metrics, HasSubstr("200 OK"));
  // Every session label is a serial number (or "other", the sum of the rest), and there is one.
  const std::regex label("session=\"([^\"]*)\"");
  int labels = 0;
  for (auto it = std::sregex_iterator(metrics.begin(), metrics.end(), label);
       it != std::sregex_iterator(); ++it, ++labels) {
    EXPECT_TRUE(std::regex_match((*it)[1].str(), std::regex("[0-9]+|other"))) << (*it)[0];
  }
  EXPECT_GT(labels, 0);
  EXPECT_EQ(metrics.find(session.id().substr(0, 8)), std::string::npos);
  // The status page's data names it "s<serial>" only.
  const std::string status = HttpGet(server().metrics_address(), "/status.json");
  ASSERT_THAT(status, HasSubstr("200 OK"));
  EXPECT_THAT(status, HasSubstr("\"session\":\"s"));
  EXPECT_EQ(status.find(session.id().substr(0, 8)), std::string::npos);
}

TEST(LogSecrecyTest, AWholeSessionLogsNoSessionIdHandleTagOrToken) {
  const std::string token = "log-secret-token-93b1c7d2e8f04a65";
  const std::string token_file = TestCertificates::Shared().Path("log-token");
  std::ofstream(token_file) << token;
  LoggedServer logged({"--auth-token-file", token_file}, "json");
  std::string id;
  std::string w_serial;  // "p1": the handle without its tag
  std::vector<std::string> tags;
  {
    client::Client client(logged.server().grpc_address(), {.bearer_token = token});
    client::Session session = client.CreateSession({.client_name = "log-test"});
    id = session.id();
    const client::TensorHandle w =
        session.Put<float>(std::vector<float>{1, 2}, {2}, {.requires_grad = true});
    w_serial = w.id().substr(0, w.id().find('.'));
    const client::TensorHandle x =
        session.Upload(client::TensorData::From<float>(std::vector<float>{3, 4}, {2}));
    client::RunBuilder run;
    const client::RunOutput product = run.Op("Mul", {w, x});
    const client::RunOutput total = run.Op("Sum", {product});
    const client::RunResult out = session.Run(run);
    const std::vector<client::TensorHandle> grads = session.Backward(out[total], {w});
    EXPECT_EQ(session.Get<float>(grads[0]), (std::vector<float>{3, 4}));
    session.Download(out[product]);
    session.Describe(x);
    session.KeepAlive();
    session.Stats();
    // Failures are logged with their message: a refused session call and an unknown session.
    client::RunBuilder refused;
    refused.Op("NoSuchOp", {x});
    EXPECT_TRUE(FailsWith([&] { session.Run(refused); }, StatusCode::INVALID_ARGUMENT));
    for (const client::TensorHandle& h : {w, x, out[product], out[total], grads[0]}) {
      tags.push_back(TagOf(h));
    }
    session.Release({w, x});
    // A refusal quoting a handle: the log keeps its serial, not its tag.
    EXPECT_TRUE(FailsWith([&] { session.Describe(w); }, StatusCode::NOT_FOUND, {w.id()}));
    session.ResetArena();
    session.Close();
    EXPECT_TRUE(FailsWith([&] { client.AttachSession(id).KeepAlive(); }, StatusCode::NOT_FOUND));
  }
  const std::string log = logged.StopAndReadLog();
  // The session was logged, by serial (a field of the JSON line).
  EXPECT_THAT(log, HasSubstr(R"("msg":"session created: kernels)"));
  EXPECT_THAT(log, HasSubstr(R"("rpc":"CreateSession","session":"s1"})"));
  EXPECT_THAT(log, HasSubstr("NoSuchOp"));            // and its failures
  EXPECT_THAT(log, HasSubstr(w_serial + ".<tag>' was released"));
  EXPECT_THAT(log, Not(HasSubstr(id.substr(0, 7))))  // at most the 6 characters NOT_FOUND shows
      << log;
  for (const std::string& tag : tags) EXPECT_THAT(log, Not(HasSubstr(tag))) << log;
  EXPECT_THAT(log, Not(HasSubstr(token))) << log;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.starts_with("{\"time\":") && line.ends_with("}")) << line;
  }
}

}  // namespace
}  // namespace onemodel::testing
