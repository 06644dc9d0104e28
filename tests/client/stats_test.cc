// Statistics agree with what the tests did: pool size classes, arenas, sessions, RPCs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "core/kernels/conv_cache.h"
#include "core/memory/size_class.h"
#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Session;
using client::TensorHandle;
using ::testing::HasSubstr;

class StatsTest : public ServerTest {
 protected:
  v1::PoolStats Pool() { return client().Stats().pool(); }

  // The counters of the RPC whose method name ends with `name` (zero when never called).
  v1::RpcStats Rpc(const std::string& name) {
    const v1::Stats stats = client().Stats();
    for (const v1::RpcStats& rpc : stats.rpcs()) {
      if (rpc.method().ends_with(name)) return rpc;
    }
    return {};
  }
};

TEST_F(StatsTest, PutRentsItsSizeClassAndReleaseReturnsIt) {
  Session session = NewSession();
  const v1::PoolStats before = Pool();
  const TensorHandle x = session.Put<float>(std::vector<float>(1000), {1000});  // 4000 bytes
  const v1::PoolStats during = Pool();
  EXPECT_EQ(during.rented_buffers() - before.rented_buffers(), 1);
  EXPECT_EQ(during.rented_requested_bytes() - before.rented_requested_bytes(), 4000);
  EXPECT_EQ(during.rented_bytes() - before.rented_bytes(), SizeClassBytes(4000));
  EXPECT_GE(during.peak_rented_bytes(), during.rented_bytes());
  EXPECT_GE(x.info().buffer_bytes(), 4000);

  const v1::SessionStats mine = session.Stats().session();
  EXPECT_EQ(mine.handles(), 1);
  EXPECT_EQ(mine.pool_buffers(), 1);
  EXPECT_GE(mine.pool_bytes(), 4000);

  session.Release({x});
  const v1::PoolStats after = Pool();
  EXPECT_EQ(after.rented_buffers(), before.rented_buffers());
  EXPECT_EQ(after.rented_bytes(), before.rented_bytes());
  EXPECT_EQ(after.idle_bytes() - before.idle_bytes(), SizeClassBytes(4000));
  EXPECT_EQ(session.Stats().session().handles(), 0);

  session.Put<float>(std::vector<float>(1000), {1000});
  const v1::PoolStats reused = Pool();
  EXPECT_EQ(reused.hits() - after.hits(), 1) << "the idle buffer of the class is reused";
  EXPECT_EQ(reused.misses(), after.misses());
}

TEST_F(StatsTest, StreamedUploadRentsItsSizeClass) {
  Session session = NewSession();
  const int64_t count = (int64_t{5} << 20) / 4 + 1;  // 5 MiB + 4 bytes
  const v1::PoolStats before = Pool();
  const TensorHandle x =
      session.Upload(client::TensorData::From<float>(std::vector<float>(count), {count}));
  EXPECT_EQ(Pool().rented_bytes() - before.rented_bytes(), SizeClassBytes(count * 4));
  session.Release({x});
  EXPECT_EQ(Pool().rented_bytes(), before.rented_bytes());
}

TEST_F(StatsTest, ArenaResetsAreCounted) {
  Session session = NewSession();
  const TensorHandle x = session.Put<float>(std::vector<float>{1, 2}, {2});
  EXPECT_EQ(session.Stats().session().arena().resets(), 0);
  session.ResetArena();
  client::RunBuilder run;
  run.Op("Neg", {x});
  session.Run(run.ResetArena());
  const v1::ArenaStats arena = session.Stats().session().arena();
  EXPECT_EQ(arena.resets(), 2);
  EXPECT_GE(arena.allocations(), 1);
  EXPECT_GE(arena.chunks(), 1);
  EXPECT_GE(arena.reserved_bytes(), session.created().arena_chunk_bytes());
  EXPECT_GT(arena.used_bytes(), 0);
}

TEST_F(StatsTest, SessionCountersFollowTheLifecycle) {
  const v1::SessionCounters before = client().Stats().sessions();
  {
    Session first = NewSession();
    Session second = NewSession();
    first.Close();
    const v1::SessionCounters during = client().Stats().sessions();
    EXPECT_EQ(during.created() - before.created(), 2);
    EXPECT_EQ(during.closed() - before.closed(), 1);
    EXPECT_EQ(during.open() - before.open(), 1);
  }
  const v1::SessionCounters after = client().Stats().sessions();
  EXPECT_EQ(after.closed() - before.closed(), 2);
  EXPECT_EQ(after.open(), before.open());
}

TEST_F(StatsTest, ClosingASessionReleasesWhatItHeldWithoutCallingItLeaked) {
  const v1::PoolStats pool_before = Pool();
  const v1::SessionCounters before = client().Stats().sessions();
  Session session = NewSession();
  session.Put<float>(std::vector<float>(100), {100});
  session.Put<float>(std::vector<float>(5000), {5000});
  client::RunBuilder run;
  run.Op("Neg", {session.Put<float>(std::vector<float>(10), {10})});
  session.Run(run);
  const v1::CloseSessionReply reply = session.Close();
  EXPECT_EQ(reply.released_buffers(), 3);
  EXPECT_EQ(reply.leaked_buffers(), 0) << "the client closed it: nothing was lost";
  const v1::Stats after = client().Stats();
  EXPECT_EQ(after.sessions().buffers_released_by_close() - before.buffers_released_by_close(), 3);
  EXPECT_EQ(after.sessions().leaked_buffers_reclaimed(), before.leaked_buffers_reclaimed());
  EXPECT_EQ(after.pool().rented_bytes(), pool_before.rented_bytes());
  EXPECT_EQ(after.pool().rented_buffers(), pool_before.rented_buffers());
}

TEST_F(StatsTest, AnExpiredSessionsBuffersCountAsLeaked) {
  const v1::SessionCounters before = client().Stats().sessions();
  Session session = client().CreateSession({.idle_timeout_ms = 500});
  session.Put<float>(std::vector<float>(100), {100});
  session.Put<float>(std::vector<float>(10), {10});
  session.Detach();  // the client forgets it: its handles are lost
  ASSERT_TRUE(Eventually([&] { return client().Stats().sessions().expired() > before.expired(); }));
  const v1::SessionCounters after = client().Stats().sessions();
  EXPECT_EQ(after.leaked_buffers_reclaimed() - before.leaked_buffers_reclaimed(), 2);
  EXPECT_EQ(after.buffers_released_by_close(), before.buffers_released_by_close());
}

TEST_F(StatsTest, RpcCountersCountRequestsAndErrors) {
  const int64_t pings = Rpc("Ping").requests();
  for (int i = 0; i < 3; ++i) client().Ping();
  EXPECT_EQ(Rpc("Ping").requests() - pings, 3);

  Session session = NewSession();
  const v1::RpcStats gets = Rpc("GetTensor");
  EXPECT_THROW(session.GetProto(TensorHandle(std::string("p1.0"))), client::Error);
  const v1::RpcStats after = Rpc("GetTensor");
  EXPECT_EQ(after.requests() - gets.requests(), 1);
  EXPECT_EQ(after.errors() - gets.errors(), 1);
  EXPECT_GT(after.latency_sum_seconds(), 0.0);

  const int64_t requests = session.Stats().session().requests();
  session.Put<float>(std::vector<float>{1}, {1});
  EXPECT_EQ(session.Stats().session().requests() - requests, 1);
}

#ifndef __SANITIZE_THREAD__  // the TSan build leaves oneDNN out (docs/kernels.md)
TEST_F(StatsTest, EachSessionCountsItsOwnConvolutionPrimitives) {
  // An NHWC input with keep_layout: the fast kernels run Conv2d on oneDNN.
  auto conv = [](Session& session) {
    const TensorHandle x = session.Put<float>(RandomFloats(2 * 3 * 8 * 8, 170), {2, 3, 8, 8});
    const TensorHandle w = session.Put<float>(RandomFloats(4 * 3 * 3 * 3, 171), {4, 3, 3, 3});
    client::RunBuilder run;
    const auto nhwc = run.Op("ToLayout", {x}, {{"layout", "NHWC"}});
    run.Op("Conv2d", {nhwc, w}, {{"pads", client::Ints{1, 1}}, {"keep_layout", 1}});
    session.Run(run.ResetArena().NoGrad());
  };
  Session a = NewSession(v1::KERNEL_CHOICE_FAST);
  conv(a);
  const v1::ConvCacheStats first = a.Stats().session().conv_cache();
  EXPECT_EQ(first.capacity(), ConvPrimitiveCache::kDefaultCapacity);
  EXPECT_GT(first.misses(), 0);
  EXPECT_EQ(first.entries(), first.misses());
  conv(a);
  const v1::ConvCacheStats second = a.Stats().session().conv_cache();
  EXPECT_EQ(second.misses(), first.misses()) << "the identical Conv2d created no primitive";
  EXPECT_GT(second.hits(), first.hits());
  EXPECT_EQ(second.entries(), first.entries());
  EXPECT_EQ(second.evictions(), 0);

  Session b = NewSession(v1::KERNEL_CHOICE_FAST);
  EXPECT_EQ(b.Stats().session().conv_cache().entries(), 0);
  conv(b);
  const v1::ConvCacheStats other = b.Stats().session().conv_cache();
  EXPECT_EQ(other.misses(), first.misses()) << "the other session creates its own";
  EXPECT_EQ(other.hits(), first.hits());
  EXPECT_EQ(a.Stats().session().conv_cache().hits(), second.hits());
}
#endif

TEST_F(StatsTest, PrometheusEndpointServesTheMetrics) {
  ASSERT_FALSE(server().metrics_address().empty());
  const std::string response = HttpGet(server().metrics_address(), "/metrics");
  EXPECT_THAT(response.substr(0, response.find('\n')), HasSubstr("200"));
  EXPECT_THAT(response, HasSubstr("# TYPE onemodel_"));
}

// WatchStats limits: streams per session, streams per server and the shortest interval.
class WatchLimitTest : public ServerTest {
 protected:
  static void SetUpTestSuite() {
    StartServer(
        {"--max-watches", "3", "--max-watches-per-session", "2", "--min-watch-interval-ms", "50"});
  }

  // A WatchStats stream (of `session` unless empty) whose first Stats arrived, so the server
  // counts it; or the status it ended with at once.
  struct Watch {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::Stats>> reader;
    grpc::Status status;  // set when the stream ended before its first Stats
  };
  std::unique_ptr<Watch> Open(const std::string& session, int64_t interval_ms = 1000) {
    auto watch = std::make_unique<Watch>();
    if (!session.empty()) watch->context.AddMetadata("onemodel-session", session);
    v1::WatchStatsRequest request;
    request.set_session_id(session);
    request.set_interval_ms(interval_ms);
    watch->reader = stub_->WatchStats(&watch->context, request);
    v1::Stats first;
    if (!watch->reader->Read(&first)) watch->status = watch->reader->Finish();
    return watch;
  }
  // Open() until the server has room (watches other tests ended leave it asynchronously).
  std::unique_ptr<Watch> OpenOnceRoom(const std::string& session, int64_t interval_ms = 1000) {
    std::unique_ptr<Watch> watch;
    Eventually([&] {
      if (watch) Close(std::move(watch));
      watch = Open(session, interval_ms);
      return watch->status.ok();
    });
    return watch;
  }
  // Ends `watch` from the client's side (one that ended at once is already finished).
  static void Close(std::unique_ptr<Watch> watch) {
    if (!watch->status.ok()) return;
    watch->context.TryCancel();
    v1::Stats rest;
    while (watch->reader->Read(&rest)) {
    }
    watch->reader->Finish();
  }

  void SetUp() override {
    ServerTest::SetUp();
    stub_ = v1::OneModel::NewStub(client().channel());
  }

  std::unique_ptr<v1::OneModel::Stub> stub_;
};

TEST_F(WatchLimitTest, OneSessionMayWatchOnlyAFewTimesAtOnce) {
  Session session = NewSession();
  std::vector<std::unique_ptr<Watch>> open;
  for (int i = 0; i < 2; ++i) {
    open.push_back(OpenOnceRoom(session.id()));
    ASSERT_TRUE(open.back()->status.ok()) << open.back()->status.error_message();
  }
  const std::unique_ptr<Watch> third = Open(session.id());
  EXPECT_EQ(third->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(third->status.error_message(), HasSubstr("2 WatchStats streams of session s"));
  EXPECT_THAT(third->status.error_message(), HasSubstr("--max-watches-per-session"));
  Session other = NewSession();
  std::unique_ptr<Watch> others = Open(other.id());
  EXPECT_TRUE(others->status.ok()) << "the limit is per session";
  Close(std::move(others));
  Close(std::move(open.back()));
  open.pop_back();
  std::unique_ptr<Watch> again = OpenOnceRoom(session.id());
  EXPECT_TRUE(again->status.ok()) << "an ended watch makes room";
  Close(std::move(again));
  for (auto& watch : open) Close(std::move(watch));
}

TEST_F(WatchLimitTest, TheServerHoldsOnlyItsLimitOfWatchesAtOnce) {
  std::vector<std::unique_ptr<Watch>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(OpenOnceRoom(""));
    ASSERT_TRUE(open.back()->status.ok()) << open.back()->status.error_message();
  }
  const std::unique_ptr<Watch> fourth = Open("");
  EXPECT_EQ(fourth->status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(fourth->status.error_message(), HasSubstr("3 WatchStats streams are open"));
  EXPECT_THAT(fourth->status.error_message(), HasSubstr("--max-watches"));
  Close(std::move(open.back()));
  open.pop_back();
  std::unique_ptr<Watch> again = OpenOnceRoom("");
  EXPECT_TRUE(again->status.ok()) << "an ended watch makes room";
  Close(std::move(again));
  for (auto& watch : open) Close(std::move(watch));
}

TEST_F(WatchLimitTest, AnIntervalBelowTheMinimumIsRefused) {
  const std::unique_ptr<Watch> fast = Open("", 49);
  EXPECT_EQ(fast->status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(fast->status.error_message(),
              HasSubstr("interval_ms must be at least 50 (--min-watch-interval-ms"));
  EXPECT_THAT(fast->status.error_message(), HasSubstr("got 49"));
  std::unique_ptr<Watch> ok = OpenOnceRoom("", 50);
  EXPECT_TRUE(ok->status.ok()) << ok->status.error_message();
  Close(std::move(ok));
}

TEST_F(WatchLimitTest, AnIntervalAboveADayIsRefusedAndADayIsKept) {
  // Past a day, and far enough past it that its deadline overflowed the alarm's clock, the
  // watch sent as fast as the client read (2^63 - 1 ms: 16000 Stats a second).
  for (const int64_t huge : {int64_t{86400001}, int64_t{1} << 62, INT64_MAX}) {
    const std::unique_ptr<Watch> slow = Open("", huge);
    EXPECT_EQ(slow->status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << huge;
    EXPECT_THAT(slow->status.error_message(),
                HasSubstr("interval_ms must be at most 86400000 (a day; 0 means 1000); got " +
                          std::to_string(huge)));
  }
  std::unique_ptr<Watch> day = OpenOnceRoom("", 86400000);
  ASSERT_TRUE(day->status.ok()) << day->status.error_message();
  // The second Stats is a day away: the stream ends with the cancel, not with a message.
  std::thread cancel([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    day->context.TryCancel();
  });
  v1::Stats next;
  EXPECT_FALSE(day->reader->Read(&next)) << "a second Stats within 0.5 s of a day's interval";
  cancel.join();
  day->reader->Finish();
}

}  // namespace
}  // namespace onemodel::testing
