// A session id that ended (closed or expired) cannot be proposed again for
// --session-tombstone-seconds, and when more sessions end than --session-tombstones can hold,
// proposals are refused rather than risk giving a new session an id a client still uses.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server/rpc/rpc_error.h"
#include "server/sessions/session_manager.h"

namespace onemodel::server {
namespace {

constexpr char kProposed[] = "00112233445566778899aabbccddeeff";

class SessionReuseTest : public ::testing::Test {
 protected:
  SessionReuseTest() {
    config_.max_sessions = 4;
    config_.session_memory_default = int64_t{1} << 20;
    config_.session_tombstones = 8;
    config_.session_tombstone_seconds = 3600;
  }
  ~SessionReuseTest() override {
    if (manager_) manager_->CloseAll();
  }
  SessionManager& manager() {
    if (!manager_) manager_ = std::make_unique<SessionManager>(config_, pool_, workers_, nullptr);
    return *manager_;
  }
  // A session with the proposed `id` (empty: a random one) and idle timeout.
  std::shared_ptr<Session> Create(const std::string& id, int64_t idle_ms = 0) {
    SessionRequest r;
    r.id = id;
    r.idle_timeout_ms = idle_ms;
    return manager().Create(r);
  }
  // The code and message Create(id) fails with (OK when it succeeds).
  std::pair<grpc::StatusCode, std::string> CreateError(const std::string& id) {
    try {
      Create(id);
    } catch (const RpcError& e) {
      return {e.code(), e.what()};
    }
    return {grpc::StatusCode::OK, ""};
  }

  ServerConfig config_;
  BufferPool pool_;
  WorkerPool workers_{1};
  std::unique_ptr<SessionManager> manager_;
};

TEST_F(SessionReuseTest, AClosedSessionsIdIsRefused) {
  Create(kProposed);
  manager().Close(kProposed, nullptr);
  const auto [code, message] = CreateError(kProposed);
  EXPECT_EQ(code, grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_NE(message.find("belonged to a session that ended less than 3600 s ago "
                         "(--session-tombstone-seconds)"),
            std::string::npos)
      << message;
  // Another id is fine, and so is asking for none.
  EXPECT_EQ(CreateError("ffeeddccbbaa99887766554433221100").first, grpc::StatusCode::OK);
  EXPECT_EQ(CreateError("").first, grpc::StatusCode::OK);
}

TEST_F(SessionReuseTest, AnExpiredSessionsIdIsRefused) {
  Create(kProposed, /*idle_ms=*/1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    try {
      manager().Find(kProposed);
    } catch (const RpcError&) {
      break;  // expired
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_THROW(manager().Find(kProposed), RpcError) << "the reaper expires it within 30 s";
  EXPECT_EQ(CreateError(kProposed).first, grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(SessionReuseTest, ALoopPastTheTombstoneBoundRefusesProposalsInsteadOfForgetting) {
  Create(kProposed);
  manager().Close(kProposed, nullptr);
  // A client creates and closes more sessions than the tombstones can hold.
  for (int i = 0; i < 3 * config_.session_tombstones; ++i) {
    manager().Close(Create("")->id(), nullptr);
  }
  EXPECT_EQ(manager().Snapshot().sessions.open, 0);
  auto [code, message] = CreateError(kProposed);
  EXPECT_EQ(code, grpc::StatusCode::RESOURCE_EXHAUSTED) << "the victim's id stays refused";
  EXPECT_NE(message.find("--session-tombstones"), std::string::npos) << message;
  EXPECT_EQ(CreateError("ffeeddccbbaa99887766554433221100").first,
            grpc::StatusCode::RESOURCE_EXHAUSTED)
      << "no proposal can be vouched for until the forgotten ids expire";
  EXPECT_EQ(CreateError("").first, grpc::StatusCode::OK) << "random ids are unaffected";
}

}  // namespace
}  // namespace onemodel::server
