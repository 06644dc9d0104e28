// Handle-table entries are charged to the session's memory budget (issue 19, finding 3): a
// session with a small quota cannot hold millions of handles, and forgotten entries give
// their bytes back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/memory/buffer_pool.h"
#include "server/rpc/rpc_error.h"
#include "server/sessions/handle_table.h"
#include "tests/common/heap_bytes.h"

namespace onemodel::server {
namespace {

constexpr int64_t kEntry = HandleTable::kEntryBytes;

class HandleChargeTest : public ::testing::Test {
 protected:
  BufferPool pool_;
  const Tensor tensor_ = Tensor::Empty(Shape{4}, DType::kFloat, pool_);
  MemoryBudget server_{"server memory ceiling", int64_t{1} << 30};
  MemoryBudget budget_{"session memory limit", int64_t{1} << 20, &server_};
};

TEST_F(HandleChargeTest, EveryEntryIsChargedUntilItIsForgotten) {
  std::vector<std::string> handles;
  {
    HandleTable table(int64_t{1} << 20, &budget_);
    const int64_t fit = budget_.limit() / kEntry;
    try {
      for (int64_t i = 0; i <= fit; ++i) {
        handles.push_back(table.Add(tensor_, i % 2 ? Placement::kArena : Placement::kPool, false));
      }
      FAIL() << "a 1 MiB session held " << handles.size() << " handles";
    } catch (const RpcError& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      const std::string m = e.what();
      EXPECT_NE(m.find("session memory limit of 1 MiB"), std::string::npos) << m;
      EXPECT_NE(m.find(std::to_string(kEntry) + " B each"), std::string::npos) << m;
      EXPECT_NE(m.find("release tensors"), std::string::npos) << m;
    }
    EXPECT_EQ(static_cast<int64_t>(handles.size()), fit) << "the limit, not --max-handles";
    EXPECT_EQ(budget_.used(), fit * kEntry);
    EXPECT_EQ(server_.used(), fit * kEntry) << "and the server's ceiling with it";

    table.Remove(handles[0]);
    EXPECT_EQ(budget_.used(), (fit - 1) * kEntry);
    const int64_t arena = table.ResetArena();
    EXPECT_EQ(budget_.used(), (fit - 1 - arena) * kEntry);
    EXPECT_NO_THROW(table.Add(tensor_, Placement::kPool, false)) << "room again";
  }
  EXPECT_EQ(budget_.used(), 0) << "a destroyed table gives everything back";
  EXPECT_EQ(server_.used(), 0);
}

TEST_F(HandleChargeTest, AReservationHoldsRoomAndGivesBackWhatAddDidNotUse) {
  HandleTable table(100, &budget_);
  {
    const HandleTable::Reservation room = table.Reserve(10);
    EXPECT_EQ(budget_.used(), 10 * kEntry);
    for (int i = 0; i < 3; ++i) table.Add(tensor_, Placement::kPool, false);
    EXPECT_EQ(budget_.used(), 10 * kEntry) << "added handles use the reserved room";
    EXPECT_THROW((void)table.Reserve(91), RpcError) << "reserved room counts against the limit";
  }
  EXPECT_EQ(budget_.used(), 3 * kEntry);
  table.Clear();
  EXPECT_EQ(budget_.used(), 0);
}

TEST_F(HandleChargeTest, AReservationPastTheBudgetTakesNothing) {
  HandleTable table(int64_t{1} << 20, &budget_);
  table.Add(tensor_, Placement::kPool, false);
  EXPECT_THROW((void)table.Reserve(budget_.limit() / kEntry), RpcError);
  EXPECT_EQ(budget_.used(), kEntry);
  EXPECT_EQ(table.size(), 1);
}

TEST_F(HandleChargeTest, TheChargeCoversWhatAnEntryReallyTakes) {
  // Measured on glibc's heap: entries of tensors that require gradients (each with its own
  // leaf node), in pool and arena, in a table with no budget.
  constexpr int kCount = 100000;
  HandleTable table(kCount);
  const int64_t before = testing::HeapBytesInUse();
  for (int i = 0; i < kCount; ++i) {
    table.Add(tensor_.WithRequiresGrad(), i % 2 ? Placement::kArena : Placement::kPool, false);
  }
  if (before < 0) GTEST_SKIP() << "no glibc heap figures under a sanitizer";
  const int64_t per_entry = (testing::HeapBytesInUse() - before) / kCount;
  RecordProperty("measured_bytes_per_handle", std::to_string(per_entry));
  RecordProperty("charged_bytes_per_handle", std::to_string(kEntry));
  EXPECT_LE(per_entry, kEntry);
  EXPECT_GE(per_entry, kEntry * 2 / 3) << "the charge is not far above the real cost";
}

}  // namespace
}  // namespace onemodel::server
