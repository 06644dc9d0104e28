// A proposed session id (the 'onemodel-session' header of CreateSession) cannot be that of a
// session that ended recently, and a header sent twice with different values is refused
// instead of letting the first copy win.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

class SessionIdReuseTest : public ServerTest {
 protected:
  // CreateSession with each of `headers` as an 'onemodel-session' header; `id` gets the id.
  grpc::Status Create(const std::vector<std::string>& headers, std::string* id = nullptr) {
    auto stub = v1::OneModel::NewStub(client().channel());
    grpc::ClientContext context;
    for (const std::string& h : headers) context.AddMetadata("onemodel-session", h);
    v1::CreateSessionRequest request;
    request.set_kernels(v1::KERNEL_CHOICE_EXACT);
    v1::CreateSessionReply reply;
    const grpc::Status status = stub->CreateSession(&context, request, &reply);
    if (id) *id = reply.session_id();
    return status;
  }
  // KeepAlive naming the session by each of `headers`.
  grpc::Status KeepAlive(const std::vector<std::string>& headers) {
    auto stub = v1::OneModel::NewStub(client().channel());
    grpc::ClientContext context;
    for (const std::string& h : headers) context.AddMetadata("onemodel-session", h);
    v1::KeepAliveRequest request;
    v1::KeepAliveReply reply;
    return stub->KeepAlive(&context, request, &reply);
  }
};

TEST_F(SessionIdReuseTest, AClosedSessionsIdCannotBeProposedAgain) {
  const std::string proposed = "0123456789abcdef0123456789abcdef";
  std::string id;
  ASSERT_TRUE(Create({proposed}, &id).ok());
  ASSERT_EQ(id, proposed);
  client().AttachSession(id).Close();
  const grpc::Status again = Create({proposed});
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS) << again.error_message();
  EXPECT_NE(again.error_message().find("belonged to a session that ended less than"),
            std::string::npos)
      << again.error_message();
  // A client still holding the old id is told its session is gone, not let into another.
  EXPECT_EQ(KeepAlive({proposed}).error_code(), grpc::StatusCode::NOT_FOUND);
  // A server-chosen id of a closed session is refused the same way.
  client::Session random = NewSession();
  const std::string random_id = random.id();
  random.Close();
  EXPECT_EQ(Create({random_id}).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(SessionIdReuseTest, TwoDifferentSessionHeadersAreInvalid) {
  const std::string a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1";
  const std::string b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2";
  const grpc::Status create = Create({a, b});
  EXPECT_EQ(create.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << create.error_message();
  EXPECT_NE(create.error_message().find("more than once with different values"), std::string::npos)
      << create.error_message();
  // The same value twice is one id.
  std::string id;
  ASSERT_TRUE(Create({a, a}, &id).ok());
  EXPECT_EQ(id, a);
  EXPECT_TRUE(KeepAlive({a, a}).ok());
  EXPECT_EQ(KeepAlive({a, b}).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(KeepAlive({b, a}).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace onemodel::testing
