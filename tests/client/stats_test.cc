// Statistics agree with what the tests did: pool size classes, arenas, sessions, RPCs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST_F(StatsTest, PrometheusEndpointServesTheMetrics) {
  ASSERT_FALSE(server().metrics_address().empty());
  const std::string response = HttpGet(server().metrics_address(), "/metrics");
  EXPECT_THAT(response.substr(0, response.find('\n')), HasSubstr("200"));
  EXPECT_THAT(response, HasSubstr("# TYPE onemodel_"));
}

}  // namespace
}  // namespace onemodel::testing
