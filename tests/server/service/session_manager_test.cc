#include "server/sessions/session_manager.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <thread>

#include "core/common/exceptions.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

using namespace std::chrono_literals;

// A request with the given options (0: the server default).
SessionRequest Request(bool exact = false, int64_t chunk = 0, int64_t memory = 0,
                       int64_t idle_ms = 0) {
  SessionRequest r;
  r.exact_kernels = exact;
  r.arena_chunk_bytes = chunk;
  r.memory_limit_bytes = memory;
  r.idle_timeout_ms = idle_ms;
  return r;
}

class SessionManagerTest : public ::testing::Test {
 protected:
  SessionManagerTest() {
    config_.max_sessions = 3;
    config_.session_memory_default = int64_t{8} << 20;
    config_.session_memory_max = int64_t{16} << 20;
    config_.memory_limit_bytes = int64_t{32} << 20;
  }
  ~SessionManagerTest() override {
    if (manager_) manager_->CloseAll();
  }
  SessionManager& manager() {
    if (!manager_) {
      manager_ = std::make_unique<SessionManager>(
          config_, pool_, workers_, [this](const Session&, EndReason reason, int64_t buffers) {
            std::lock_guard guard(mutex_);
            ended_.push_back(std::string(EndReasonName(reason)) + ":" + std::to_string(buffers));
          });
    }
    return *manager_;
  }
  // The code and message of the RpcError `f` throws.
  std::pair<grpc::StatusCode, std::string> ErrorOf(const std::function<void()>& f) {
    try {
      f();
    } catch (const RpcError& e) {
      return {e.code(), e.what()};
    }
    return {grpc::StatusCode::OK, ""};
  }
  // Runs `f` on the session's strand and waits for it.
  void OnStrand(Session& s, const std::function<void()>& f) {
    std::promise<void> done;
    s.strand().Post([&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  ServerConfig config_;
  BufferPool pool_;
  WorkerPool workers_{2};
  std::unique_ptr<SessionManager> manager_;
  std::mutex mutex_;
  std::vector<std::string> ended_;
};

TEST_F(SessionManagerTest, SessionsGetUnguessableIdsAndTheirKernels) {
  auto a = manager().Create(Request());
  auto b = manager().Create(Request(true));
  EXPECT_EQ(a->id().size(), 32u);
  EXPECT_EQ(a->id().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a->id(), b->id());
  EXPECT_NE(a->serial(), b->serial());
  EXPECT_EQ(b->options().kernels->name(), "reference");
  EXPECT_NE(a->options().kernels->name(), "reference");
  EXPECT_EQ(manager().Find(a->id()), a);
  EXPECT_EQ(a->options().memory_limit_bytes, config_.session_memory_default);
}

TEST_F(SessionManagerTest, AProposedIdBecomesTheSessionIdOnceAndOnlyWhenWellFormed) {
  SessionRequest r = Request();
  r.id = "00112233445566778899aabbccddeeff";  // a proxy's placement key (nginx $request_id)
  auto s = manager().Create(r);
  EXPECT_EQ(s->id(), r.id);
  EXPECT_EQ(manager().Find(r.id), s);
  auto [code, message] = ErrorOf([&] { manager().Create(r); });
  EXPECT_EQ(code, grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_NE(message.find("is in use; propose another random id or send none"), std::string::npos);
  r.id = "00112233445566778899AABBCCDDEEFF";
  std::tie(code, message) = ErrorOf([&] { manager().Create(r); });
  EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(message.find("must be 32 lowercase hex characters"), std::string::npos) << message;
  r.id = "0011";
  EXPECT_EQ(ErrorOf([&] { manager().Create(r); }).first, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(manager().Snapshot().sessions.created, 1) << "refused ids create nothing";
}

TEST_F(SessionManagerTest, OptionsOutsideTheLimitsAreRefusedByName) {
  auto [code, message] = ErrorOf([&] { manager().Create(Request(false, 0, int64_t{100} << 30)); });
  EXPECT_EQ(code, grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(message,
            "memory_limit_bytes 107374182400 (100 GiB) is above the server's per-session maximum "
            "of 16777216 (16 MiB, --session-memory-max); ask for less");
  EXPECT_EQ(ErrorOf([&] { manager().Create(Request(false, 0, (int64_t{16} << 20) + 1)); }).second,
            "memory_limit_bytes 16777217 (16.0 MiB) is above the server's per-session maximum of "
            "16777216 (16 MiB, --session-memory-max); ask for less")
      << "one byte over the maximum reads as such";
  EXPECT_EQ(ErrorOf([&] { manager().Create(Request(false, 0, -1)); }).first,
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ErrorOf([&] { manager().Create(Request(false, 100)); }).first,
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ErrorOf([&] { manager().Create(Request(false, int64_t{4} << 30)); }).first,
            grpc::StatusCode::INVALID_ARGUMENT);
  std::tie(code, message) = ErrorOf([&] { manager().Create(Request(false, 0, 0, -5)); });
  EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(message.find("idle_timeout_ms must be between 1 and 86400000"), std::string::npos);
  EXPECT_EQ(manager().Snapshot().sessions.created, 0) << "refused sessions are not counted";
}

TEST_F(SessionManagerTest, MaxSessionsIsResourceExhaustedAndClosingFreesASlot) {
  auto a = manager().Create(Request());
  manager().Create(Request());
  manager().Create(Request());
  auto [code, message] = ErrorOf([&] { manager().Create(Request()); });
  EXPECT_EQ(code, grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(message.find("3 sessions open, its --max-sessions limit"), std::string::npos);
  std::promise<void> closed;
  manager().Close(a->id(), [&](int64_t, int64_t) { closed.set_value(); });
  closed.get_future().wait();
  EXPECT_NO_THROW(manager().Create(Request()));
}

TEST_F(SessionManagerTest, UnknownAndClosedSessionsAreNotFound) {
  auto [code, message] = ErrorOf([&] { manager().Find("00112233445566778899aabbccddeeff"); });
  EXPECT_EQ(code, grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(message.find("session '001122...' not found"), std::string::npos) << message;
  EXPECT_EQ(message.find("00112233"), std::string::npos) << "the id is a secret: not echoed";
  EXPECT_NE(message.find("closed, expired"), std::string::npos) << message;
  for (const std::string typo :
       {"nonsense", "00112233445566778899aabbccddeef", "00112233445566778899AABBCCDDEEFF", ""}) {
    const auto [typo_code, typo_message] = ErrorOf([&] { manager().Find(typo); });
    EXPECT_EQ(typo_code, grpc::StatusCode::NOT_FOUND) << typo;
    EXPECT_NE(typo_message.find("no session id looks like this; an id is the 32 lowercase hex"),
              std::string::npos)
        << typo_message;
  }
  auto s = manager().Create(Request());
  manager().Close(s->id(), nullptr);
  EXPECT_EQ(ErrorOf([&] { manager().Find(s->id()); }).first, grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ErrorOf([&] { manager().Close(s->id(), nullptr); }).first, grpc::StatusCode::NOT_FOUND);
}

TEST_F(SessionManagerTest, CloseReturnsEveryByteAndCountsLeaks) {
  auto s = manager().Create(Request(false, 65536));
  OnStrand(*s, [&] {
    Tensor kept = Tensor::Empty(Shape{1000}, DType::kFloat, s->ledger());
    Tensor released = Tensor::Empty(Shape{10}, DType::kFloat, s->ledger());
    released.Dispose();
    Tensor::Empty(Shape{100}, DType::kFloat, s->arena());
    s->handles().Add(kept, Placement::kPool, true);
    s->Publish();
  });
  EXPECT_GT(pool_.Stats().rented_bytes, 0);
  std::promise<std::pair<int64_t, int64_t>> result;
  manager().Close(s->id(), [&](int64_t buffers, int64_t bytes) {
    result.set_value({buffers, bytes});
  });
  const auto [buffers, bytes] = result.get_future().get();
  EXPECT_EQ(buffers, 1);
  EXPECT_EQ(bytes, 4096 + 65536 + HandleTable::kEntryBytes)
      << "the kept buffer's class, the arena chunk and the handle";
  EXPECT_EQ(pool_.Stats().rented_bytes, 0);
  const ServerSnapshot snap = manager().Snapshot();
  EXPECT_EQ(snap.sessions.closed, 1);
  EXPECT_EQ(snap.sessions.buffers_released_by_close, 1);
  EXPECT_EQ(snap.sessions.leaked_buffers_reclaimed, 0) << "a close releases, it does not leak";
  EXPECT_EQ(snap.sessions.open, 0);
  EXPECT_EQ(ended_, std::vector<std::string>{"closed:1"});
}

TEST_F(SessionManagerTest, TheSessionQuotaAndTheServerCeilingRefuseAllocations) {
  auto a = manager().Create(Request(false, 0, int64_t{16} << 20));
  auto b = manager().Create(Request(false, 0, int64_t{16} << 20));
  auto c = manager().Create(Request(false, 0, int64_t{16} << 20));
  OnStrand(*a, [&] {
    EXPECT_THROW(Tensor::Empty(Shape{5, 1 << 20}, DType::kFloat, a->ledger()),
                 MemoryLimitException);
    Tensor::Empty(Shape{3, 1 << 20}, DType::kFloat, a->ledger());  // 12 MiB: fits
  });
  OnStrand(*b, [&] { Tensor::Empty(Shape{3, 1 << 20}, DType::kFloat, b->ledger()); });
  OnStrand(*c, [&] {
    try {
      Tensor::Empty(Shape{4, 1 << 20}, DType::kFloat, c->ledger());  // 16 MiB: over 32 in all
      ADD_FAILURE() << "expected the server ceiling";
    } catch (const MemoryLimitException& e) {
      EXPECT_NE(std::string(e.what()).find("server memory ceiling"), std::string::npos) << e.what();
    }
  });
}

TEST_F(SessionManagerTest, IdleSessionsExpireButNotWhileBusy) {
  auto idle = manager().Create(Request(false, 0, 0, 50));
  auto busy = manager().Create(Request(false, 0, 0, 50));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  busy->strand().Post([released] { released.wait(); });
  const auto start = std::chrono::steady_clock::now();
  while (manager().Snapshot().sessions.expired < 1 &&
         std::chrono::steady_clock::now() - start < 5s) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(ErrorOf([&] { manager().Find(idle->id()); }).first, grpc::StatusCode::NOT_FOUND);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(manager().Find(busy->id()), busy) << "a running request keeps its session";
  release.set_value();
  while (manager().Snapshot().sessions.expired < 2 &&
         std::chrono::steady_clock::now() - start < 5s) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(manager().Snapshot().sessions.expired, 2);
}

TEST_F(SessionManagerTest, SnapshotListsSessionsByTheirPublicSerial) {
  auto a = manager().Create(Request());
  auto b = manager().Create(Request(true));
  OnStrand(*b, [&] {
    Tensor::Empty(Shape{4}, DType::kFloat, b->arena());
    b->FinishRequest();
  });
  const ServerSnapshot snap = manager().Snapshot();
  ASSERT_EQ(snap.per_session.size(), 2u);
  EXPECT_EQ(snap.per_session[0].serial, a->serial());
  EXPECT_EQ(snap.per_session[1].kernel_variant, "reference");
  EXPECT_EQ(snap.per_session[1].arena.allocations, 1);
  EXPECT_EQ(snap.per_session[1].requests, 1);
  EXPECT_EQ(snap.sessions.open, 2);
  EXPECT_EQ(snap.sessions.created, 2);
}

TEST_F(SessionManagerTest, CloseAllReturnsOnlyOnceTheClosedSessionsAreDestroyed) {
  // The close task holds the last reference; a session destroyed after CloseAll() returned
  // would give its memory back to the server budget of a manager that may be gone.
  for (int i = 0; i < 500; ++i) {
    const std::weak_ptr<Session> session = manager().Create(Request());
    manager().CloseAll();
    ASSERT_TRUE(session.expired()) << "iteration " << i;
  }
}

}  // namespace
}  // namespace onemodel::server
