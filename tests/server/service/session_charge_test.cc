// A session charges what its requests make grow to its own memory limit (issue 19, finding
// 3): requests waiting on its strand, handles and backward records, all given back at close.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/size_class.h"
#include "core/ops/elementwise.h"
#include "server/rpc_error.h"
#include "server/session.h"

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
  BufferPool pool_;
  MemoryBudget server_{"server memory ceiling", int64_t{1} << 30};
  WorkerPool workers_{2};
};

TEST_F(SessionChargeTest, RequestsWaitingOnABusyStrandAreChargedUntilTheyStart) {
  Session session(Options(4096), pool_, &server_, workers_);
  EXPECT_EQ(session.ChargeQueued(), 0) << "an idle strand runs the request at once";
  std::promise<void> release;
  std::promise<void> started;
  session.strand().Post([&] {
    started.set_value();
    release.get_future().wait();
  });
  started.get_future().wait();
  int64_t charged = 0;
  try {
    for (int i = 0; i < 100; ++i) charged += session.ChargeQueued();
    ADD_FAILURE() << "100 waiting requests fit in 4 KiB";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    const std::string m = e.what();
    EXPECT_NE(m.find("session memory limit of 4 KiB"), std::string::npos) << m;
    EXPECT_NE(m.find("fewer requests at a time"), std::string::npos) << m;
  }
  EXPECT_EQ(charged, 4096 / Session::kQueuedRequestBytes * Session::kQueuedRequestBytes);
  EXPECT_EQ(session.budget().used(), charged);
  session.budget().Refund(charged);  // what the requests do when they start
  release.set_value();
  std::promise<void> idle;
  session.strand().Post([&] { idle.set_value(); });
  idle.get_future().wait();
}

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
  session.Close();
  const ConvPrimitiveCacheStats closed = session.Snapshot().conv_cache;
  EXPECT_EQ(closed.entries, 0);
  EXPECT_EQ(closed.misses, 4);
}
#endif

}  // namespace
}  // namespace onemodel::server
