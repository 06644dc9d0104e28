// A session charges what its requests make grow to its own memory limit (issue 19, finding
// 3): requests (their parsed messages until freed, and their tasks while they wait on its
// strand), handles and backward records, all given back at close.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer.h"
#include "core/memory/size_class.h"
#include "core/ops/elementwise.h"
#include "onemodel/v1/onemodel.pb.h"
#include "server/rpc/rpc_error.h"
#include "server/sessions/request_charge.h"
#include "server/sessions/session.h"
#include "tests/common/heap_bytes.h"

namespace onemodel::server {
namespace {

class SessionChargeTest : public ::testing::Test {
 protected:
  static SessionOptions Options(int64_t memory_limit) {
    SessionOptions o;
    o.kernels = &KernelSet::Get(KernelChoice::kExact);
    o.memory_limit_bytes = memory_limit;
    o.max_handles = 1 << 20;
    o.arena_chunk_bytes = 4096;
    return o;
  }
  // A Run of one Concat of `n` inline one-element tensors, parsed from its wire bytes as gRPC
  // parses a request.
  static v1::RunRequest ParsedConcat(int n) {
    onnx::TensorProto one;
    one.set_data_type(onnx::TensorProto::FLOAT);
    one.add_dims(1);
    one.set_raw_data(std::string(4, '\0'));
    v1::RunRequest built;
    v1::Operation* concat = built.add_operations();
    concat->set_op("Concat");
    for (int i = 0; i < n; ++i) *concat->add_inputs()->mutable_tensor() = one;
    v1::RunRequest parsed;
    parsed.ParseFromString(built.SerializeAsString());
    return parsed;
  }
  // Keeps `session`'s strand busy (a task waits) while it lives. The task holds its own
  // references to both promises' states: it may still be setting `started` when the constructor
  // returns, and reach its wait only after the destructor has let it go.
  class BusyStrand {
   public:
    explicit BusyStrand(Session& session) {
      auto started = std::make_shared<std::promise<void>>();
      std::future<void> running = started->get_future();
      session.strand().Post([started, released = release_.get_future().share()] {
        started->set_value();
        released.wait();
      });
      running.wait();
    }
    ~BusyStrand() { release_.set_value(); }

   private:
    std::promise<void> release_;
  };

  BufferPool pool_;
  MemoryBudget server_{"server memory ceiling", int64_t{1} << 30};
  WorkerPool workers_{2};
};

TEST_F(SessionChargeTest, RequestsWaitingOnABusyStrandAreChargedUntilTheyStart) {
  auto session = std::make_shared<Session>(Options(4096), pool_, &server_, workers_);
  const v1::DescribeTensorRequest describe;
  const int64_t message = RequestCharge::MessageBytes(describe);
  {
    const RequestCharge idle(session, describe);
    EXPECT_EQ(session->budget().used(), message) << "an idle strand runs the request at once";
  }
  BusyStrand busy(*session);
  std::vector<RequestCharge> waiting;
  try {
    for (int i = 0; i < 100; ++i) waiting.emplace_back(session, describe);
    ADD_FAILURE() << "100 waiting requests fit in 4 KiB";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    const std::string m = e.what();
    EXPECT_NE(m.find("session memory limit of 4 KiB"), std::string::npos) << m;
    EXPECT_NE(m.find("fewer requests at a time"), std::string::npos) << m;
  }
  const int64_t each = message + RequestCharge::kQueuedBytes;
  EXPECT_EQ(static_cast<int64_t>(waiting.size()), 4096 / each);
  EXPECT_EQ(session->budget().used(), 4096 / each * each);
  for (RequestCharge& w : waiting) w.Start();  // what the requests do when they start
  EXPECT_EQ(session->budget().used(), 4096 / each * message) << "the messages stay charged";
  waiting.clear();  // gRPC frees the messages
  EXPECT_EQ(session->budget().used(), 0);
}

TEST_F(SessionChargeTest, ACallThatFreesMemoryRunsInAFullIdleSessionButWaitsOnlyCharged) {
  auto session = std::make_shared<Session>(Options(8192), pool_, &server_, workers_);
  v1::ReleaseTensorsRequest release;
  for (int i = 0; i < 64; ++i) release.add_handles(std::string(32, 'h'));
  const int64_t message = RequestCharge::MessageBytes(release);  // about 5 KiB
  ASSERT_GT(message, 4096);
  ASSERT_LT(message + RequestCharge::kQueuedBytes, 8192);
  const int64_t full = 8192 - message / 2;  // what the session holds: the message does not fit
  session->budget().Charge(full);
  constexpr auto kFrees = RequestCharge::Kind::kFrees;
  {
    RequestCharge idle(session, release, kFrees);
    EXPECT_EQ(idle.message_charged(), 0);
    EXPECT_NO_THROW(idle.Start()) << "a full session can always free some";
    EXPECT_EQ(session->budget().used(), full) << "uncharged while it runs";
  }
  {
    BusyStrand busy(*session);
    try {
      RequestCharge waiting(session, release, kFrees);
      ADD_FAILURE() << "a release of " << message << " B waited uncharged in a full session";
    } catch (const RpcError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_NE(std::string(e.what()).find("fewer requests at a time"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(session->budget().used(), full);
  }
  session->budget().Refund(full);
  while (session->strand().busy()) std::this_thread::yield();  // the busy task has ended
  {
    RequestCharge idle(session, release, kFrees);
    EXPECT_EQ(session->budget().used(), message) << "charged like any request when it fits";
  }
  BusyStrand busy(*session);
  std::optional<RequestCharge> waiting;
  waiting.emplace(session, release, kFrees);
  EXPECT_EQ(session->budget().used(), message + RequestCharge::kQueuedBytes);
  waiting->Start();
  EXPECT_EQ(session->budget().used(), message);
  waiting.reset();
  EXPECT_EQ(session->budget().used(), 0);
}

TEST_F(SessionChargeTest, ARequestOfManySmallInlineTensorsPastTheLimitIsRefused) {
  // 8192 one-element tensors: 112 KiB on the wire, 2.6 MiB parsed; their values and the
  // Concat's output would take 96 KiB of the arena.
  auto session = std::make_shared<Session>(Options(int64_t{1} << 20), pool_, &server_, workers_);
  const v1::RunRequest run = ParsedConcat(8192);
  ASSERT_LT(run.ByteSizeLong(), 128u << 10);
  ASSERT_GT(RequestCharge::MessageBytes(run), int64_t{1} << 20);
  RequestCharge charge(session, run);
  EXPECT_EQ(charge.message_charged(), 0) << "left to the strand, where free arena chunks go first";
  EXPECT_EQ(session->budget().used(), 0);
  std::promise<void> done;
  session->strand().Post([&] {
    try {
      charge.Start();
      ADD_FAILURE() << "a RunRequest of " << RequestCharge::MessageBytes(run)
                    << " B parsed was charged to a 1 MiB session";
    } catch (const RpcError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      const std::string m = e.what();
      for (const char* part :
           {"the RunRequest takes", "once parsed (112.0 KiB on the wire)",
            "session memory limit of 1 MiB", "fewer, larger parts", "larger memory_limit_bytes"}) {
        EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
      }
    }
    done.set_value();
  });
  done.get_future().wait();
  EXPECT_EQ(session->budget().used(), 0) << "nothing charged";
  BusyStrand busy(*session);
  EXPECT_THROW(RequestCharge(session, run), RpcError) << "nor for a request that would wait";
  EXPECT_EQ(session->budget().used(), 0);
}

TEST_F(SessionChargeTest, AWaitingRequestsParsedMessageIsChargedUntilItIsFreed) {
  auto session = std::make_shared<Session>(Options(int64_t{8} << 20), pool_, &server_, workers_);
  const v1::RunRequest run = ParsedConcat(8192);
  const int64_t message = RequestCharge::MessageBytes(run);
  std::optional<RequestCharge> charge;
  {
    BusyStrand busy(*session);
    charge.emplace(session, run);
    EXPECT_EQ(session->budget().used(), message + RequestCharge::kQueuedBytes);
    EXPECT_EQ(server_.used(), message + RequestCharge::kQueuedBytes) << "and the server's";
    session->Publish();
    EXPECT_EQ(session->Snapshot().charged_bytes, message + RequestCharge::kQueuedBytes);
  }
  charge->Start();
  EXPECT_EQ(session->budget().used(), message) << "the wait is over, the message is still held";
  charge.reset();
  EXPECT_EQ(session->budget().used(), 0);
  EXPECT_EQ(server_.used(), 0);
}

TEST_F(SessionChargeTest, ARequestThatFitsOnceFreeArenaChunksGoIsChargedOnTheStrand) {
  auto session = std::make_shared<Session>(Options(64 << 10), pool_, &server_, workers_);
  std::promise<void> filled;
  session->strand().Post([&] {  // 15 chunks of 4 KiB, all free after the reset
    // Each allocation fills one chunk with its canary (CHECKED builds add kCanaryBytes).
    for (int i = 0; i < 15; ++i) session->arena().Allocate(4096 - kCanaryBytes);
    session->ResetArena();
    filled.set_value();
  });
  filled.get_future().wait();
  // The task set the promise before it ended: wait for the strand to be idle, as a request
  // arriving now would find it (a busy one refuses at once instead).
  while (session->strand().busy()) std::this_thread::yield();
  ASSERT_EQ(session->budget().used(), 60 << 10);
  const v1::RunRequest run = ParsedConcat(32);
  ASSERT_GT(RequestCharge::MessageBytes(run), 4 << 10);
  RequestCharge charge(session, run);
  EXPECT_EQ(charge.message_charged(), 0) << "arrival may not trim the arena";
  std::promise<void> started;
  session->strand().Post([&] {
    EXPECT_NO_THROW(charge.Start());
    started.set_value();
  });
  started.get_future().wait();
  EXPECT_EQ(charge.message_charged(), RequestCharge::MessageBytes(run));
  EXPECT_LT(session->arena().Stats().reserved_bytes, 60 << 10) << "free chunks went first";
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_F(SessionChargeTest, TheChargeIsWhatAParsedRequestTakesButMallocsHeaders) {
  // The hostile shape (one Concat of many one-element inline tensors) and a common one (one
  // Add of two handles, 10000 of them), parsed from the wire as gRPC does, measured on glibc's
  // heap. SpaceUsedLong counts the objects, not malloc's block headers and rounding.
  v1::RunRequest add;
  v1::Operation* op = add.add_operations();
  op->set_op("Add");
  op->add_inputs()->set_handle("p1.0123456789abcdef0123456789abcdef");
  op->add_inputs()->set_handle("p2.0123456789abcdef0123456789abcdef");
  const struct {
    std::string wire;
    int copies;
    const char* name;
  } shapes[] = {{ParsedConcat(100000).SerializeAsString(), 1, "concat_100000_inline"},
                {add.SerializeAsString(), 10000, "add_of_two_handles"}};
  for (const auto& shape : shapes) {
    std::vector<v1::RunRequest> parsed(static_cast<size_t>(shape.copies));
    const int64_t before = testing::HeapBytesInUse();
    for (v1::RunRequest& p : parsed) ASSERT_TRUE(p.ParseFromString(shape.wire));
    if (before < 0) GTEST_SKIP() << "no glibc heap figures under a sanitizer";
    const int64_t measured =
        testing::HeapBytesInUse() - before +
        shape.copies *
            static_cast<int64_t>(sizeof(v1::RunRequest));  // gRPC allocates the message too
    int64_t charged = 0;
    for (const v1::RunRequest& p : parsed) charged += RequestCharge::MessageBytes(p);
    RecordProperty(std::string(shape.name) + "_heap_bytes", std::to_string(measured));
    RecordProperty(std::string(shape.name) + "_charged_bytes", std::to_string(charged));
    EXPECT_LE(charged, measured) << shape.name;
    EXPECT_GE(charged, measured * 3 / 4)
        << shape.name << ": malloc's headers are a quarter at most";
  }
}
#endif

TEST_F(SessionChargeTest, HandlesAndRecordsAreChargedAndCloseGivesEverythingBack) {
  Session session(Options(int64_t{1} << 20), pool_, &server_, workers_);
  std::promise<void> done;
  session.strand().Post([&] {
    {  // the test's own references go before the close, as a client's would
      const OpContext ctx = session.ArenaContext();
      Tensor x = Tensor::Empty(Shape{4}, DType::kFloat, session.ledger()).WithRequiresGrad();
      session.handles().Add(x, Placement::kPool, true);
      const int64_t before = session.budget().used();
      const Tensor y = ops::Neg(x, ctx);
      ChargeGraph(y, session.budget());
      session.handles().Add(y, Placement::kArena, true);
      EXPECT_EQ(session.budget().used() - before,
                4096 + GradFn(y)->Footprint() + HandleTable::kEntryBytes)
          << "an arena chunk, the record and the handle";
    }
    session.Close();
    done.set_value();
  });
  done.get_future().wait();
  EXPECT_EQ(session.budget().used(), 0);
  EXPECT_EQ(server_.used(), 0);
}

TEST_F(SessionChargeTest, TheSnapshotShowsWhatTheLimitCountsBesideTheMemory) {
  Session session(Options(int64_t{1} << 20), pool_, &server_, workers_);
  std::promise<void> done;
  session.strand().Post([&] {
    Tensor x = Tensor::Empty(Shape{650}, DType::kFloat, session.ledger());  // 2600 B
    session.handles().Add(x, Placement::kPool, true);
    session.Publish();
    const SessionSnapshot s = session.Snapshot();
    EXPECT_EQ(s.pool_bytes, 2600);
    EXPECT_EQ(s.charged_bytes, session.budget().used());
    EXPECT_EQ(s.charged_bytes, SizeClassBytes(2600) + HandleTable::kEntryBytes)
        << "the buffer's size class and the handle, where the memory shows 2600 B";
    EXPECT_GT(SizeClassBytes(2600), 2600);
    session.Close();
    done.set_value();
  });
  done.get_future().wait();
}

#ifndef __SANITIZE_THREAD__  // the TSan build leaves oneDNN out (docs/kernels.md)
TEST_F(SessionChargeTest, CloseFreesTheSessionsConvolutionPrimitives) {
  SessionOptions options = Options(1 << 20);
  options.kernels = &KernelSet::Get(KernelChoice::kFast);
  Session session(options, pool_, &server_, workers_);
  {
    const ConvCacheScope scope(&session.conv_cache());  // as the session's requests run
    options.kernels->Conv2dScratchFloats(Shape{1, 2, 4, 4}, Shape{3, 2, 1, 1}, {.keep_layout = 1});
  }
  session.Publish();
  EXPECT_EQ(session.Snapshot().conv_cache.entries, 4) << "forward +- bias and both gradients";
  EXPECT_EQ(session.budget().used(), 4 * ConvPrimitiveCache::EntryBytes(1, 1))
      << "each primitive is charged to the session";
  session.Close();
  const ConvPrimitiveCacheStats closed = session.Snapshot().conv_cache;
  EXPECT_EQ(closed.entries, 0);
  EXPECT_EQ(closed.misses, 4);
  EXPECT_EQ(session.budget().used(), 0);
}
#endif

}  // namespace
}  // namespace onemodel::server
