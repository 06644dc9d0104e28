#include "server/observability/stats_proto.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/server/metrics/fake_snapshot.h"

namespace onemodel::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Every singular field of `message`, and of each message inside it, that is unset or zero
// (a field FillStats forgot, or one added to the proto since), as "path" strings.
void CollectUnset(const Message& message, const std::string& path, std::vector<std::string>* out) {
  const google::protobuf::Descriptor* d = message.GetDescriptor();
  const google::protobuf::Reflection* r = message.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string name = path + f->name();
    if (f->is_repeated()) {
      if (r->FieldSize(message, f) == 0) out->push_back(name);
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
      for (int k = 0; k < r->FieldSize(message, f); ++k) {
        CollectUnset(r->GetRepeatedMessage(message, f, k), name + "[" + std::to_string(k) + "].",
                     out);
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!r->HasField(message, f))
        out->push_back(name);
      else
        CollectUnset(r->GetMessage(message, f), name + ".", out);
    } else if (!r->HasField(message, f)) {
      out->push_back(name);
    }
  }
}

TEST(FillStatsTest, FillsPoolSessionsAndRpcs) {
  RpcStats rpc_stats({"Ping", "Run"});
  using std::chrono::milliseconds;
  const RequestPhases split{{milliseconds(10), milliseconds(20), milliseconds(30),
                             milliseconds(40)}};  // decode, queue, execute, encode
  rpc_stats.Record(1, /*OK*/ 0, milliseconds(250), split, /*ran_inline=*/true);
  rpc_stats.Record(1, /*INTERNAL*/ 13, milliseconds(500), split);
  rpc_stats.Record(0, /*NOT_FOUND*/ 5, milliseconds(125), split, /*ran_inline=*/true);
  v1::Stats stats;
  FillStats(FakeSnapshot(0), rpc_stats, &stats);

  const v1::PoolStats& pool = stats.pool();
  EXPECT_EQ(pool.rented_buffers(), 1);
  EXPECT_EQ(pool.rented_requested_bytes(), 2);
  EXPECT_EQ(pool.rented_bytes(), 3);
  EXPECT_EQ(pool.peak_rented_bytes(), 4);
  EXPECT_EQ(pool.idle_bytes(), 5);
  EXPECT_EQ(pool.max_idle_bytes(), 6);
  EXPECT_EQ(pool.hits(), 7);
  EXPECT_EQ(pool.misses(), 8);
  EXPECT_EQ(pool.frees_over_cap(), 9);
  ASSERT_EQ(pool.classes_size(), 2);
  EXPECT_EQ(pool.classes(1).size_bytes(), 4096);
  EXPECT_EQ(pool.classes(1).rented_buffers(), 17);
  EXPECT_EQ(pool.classes(1).idle_buffers(), 18);

  const v1::SessionCounters& sessions = stats.sessions();
  EXPECT_EQ(sessions.open(), 10);
  EXPECT_EQ(sessions.created(), 11);
  EXPECT_EQ(sessions.closed(), 12);
  EXPECT_EQ(sessions.expired(), 13);
  EXPECT_EQ(sessions.leaked_buffers_reclaimed(), 14);
  EXPECT_EQ(sessions.buffers_released_by_close(), 43);

  ASSERT_EQ(stats.rpcs_size(), 2);
  EXPECT_EQ(stats.rpcs(0).method(), "Ping");
  EXPECT_EQ(stats.rpcs(0).requests(), 1);
  EXPECT_EQ(stats.rpcs(0).errors(), 1);
  EXPECT_DOUBLE_EQ(stats.rpcs(0).latency_sum_seconds(), 0.125);
  EXPECT_EQ(stats.rpcs(1).method(), "Run");
  EXPECT_EQ(stats.rpcs(1).requests(), 2);
  EXPECT_EQ(stats.rpcs(1).errors(), 1);
  EXPECT_DOUBLE_EQ(stats.rpcs(1).latency_sum_seconds(), 0.75);
  EXPECT_DOUBLE_EQ(stats.rpcs(1).decode_seconds(), 0.02);
  EXPECT_DOUBLE_EQ(stats.rpcs(1).queue_seconds(), 0.04);
  EXPECT_DOUBLE_EQ(stats.rpcs(1).execute_seconds(), 0.06);
  EXPECT_DOUBLE_EQ(stats.rpcs(1).encode_seconds(), 0.08);
  EXPECT_EQ(stats.rpcs(1).inline_requests(), 1);
  EXPECT_DOUBLE_EQ(stats.rpcs(0).queue_seconds(), 0.02);

  std::vector<std::string> unset;
  CollectUnset(stats, "", &unset);
  EXPECT_EQ(unset, (std::vector<std::string>{"server_instance_id", "session"}))
      << "FillStats leaves only these to the service";
}

TEST(FillStatsTest, ReplacesWhatTheMessageHeld) {
  RpcStats rpc_stats({"Ping"});
  v1::Stats stats;
  FillStats(FakeSnapshot(0), rpc_stats, &stats);
  FillStats(FakeSnapshot(100), rpc_stats, &stats);
  EXPECT_EQ(stats.pool().rented_buffers(), 101);
  EXPECT_EQ(stats.pool().classes_size(), 2);
  EXPECT_EQ(stats.rpcs_size(), 1);
}

TEST(FillArenaStatsTest, CopiesEveryField) {
  const ArenaStats arena = FakeSnapshot(0).per_session[0].arena;  // 19, 20, ... 25
  v1::ArenaStats wire;
  FillArenaStats(arena, &wire);
  EXPECT_EQ(wire.chunks(), 19);
  EXPECT_EQ(wire.reserved_bytes(), 20);
  EXPECT_EQ(wire.used_bytes(), 21);
  EXPECT_EQ(wire.peak_used_bytes(), 22);
  EXPECT_EQ(wire.resets(), 23);
  EXPECT_EQ(wire.allocations(), 24);
  EXPECT_EQ(wire.growth_events(), 25);
  std::vector<std::string> unset;
  CollectUnset(wire, "", &unset);
  EXPECT_EQ(unset, std::vector<std::string>{});
}

}  // namespace
}  // namespace onemodel::server
