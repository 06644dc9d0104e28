// What grows with a session's requests besides tensor data is charged to its memory limit
// (issue 19, finding 3): handle-table entries and backward records. A 1 MiB session could
// hold the default 2^20 handles before (about 200 MiB of server memory); now passing its limit
// answers RESOURCE_EXHAUSTED with a message naming the limit and what to do, the session keeps
// working, and released handles give their bytes back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunBuilder;
using client::RunOutput;
using client::RunResult;
using client::Session;
using client::TensorHandle;
using grpc::StatusCode;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int kBatch = 1024;
// Far more than a 1 MiB session may hold at a few hundred bytes each, far fewer than the
// default --max-handles of 2^20, so only the memory limit can stop the loop.
constexpr int kEnough = 8192;

// The default flags: --max-handles 2^20, --max-run-operations 4096.
class StructureLimitsTest : public ServerTest {
 protected:
  // A 1 MiB session with 4 KiB arena chunks (the smallest), holding x = [1, 2, 3, 4].
  Session SmallSession() {
    return client().CreateSession({.arena_chunk_bytes = 4096, .memory_limit_bytes = kMiB});
  }
  // kBatch views of x (Expand to its own shape: no buffer, only a handle each).
  static RunResult Views(Session& session, const TensorHandle& x) {
    RunBuilder run;
    for (int i = 0; i < kBatch; ++i) run.Op("Expand", {x}, {{"shape", Ints{4}}});
    return session.Run(run);
  }
  // The handles of `result`.
  static std::vector<TensorHandle> All(const RunResult& result) {
    std::vector<TensorHandle> handles;
    for (size_t i = 0; i < result.size(); ++i) handles.push_back(result[i]);
    return handles;
  }
  // A small run works in `session` and x still holds 1..4.
  static void ExpectUsable(Session& session, const TensorHandle& x) {
    RunBuilder run;
    run.Op("Neg", {x});
    EXPECT_EQ(session.Get<float>(session.Run(run).back()), (std::vector<float>{-1, -2, -3, -4}));
  }
};

const std::vector<float> kValues = {1, 2, 3, 4};

TEST_F(StructureLimitsTest, HandlesAreChargedToTheSessionMemoryLimit) {
  Session session = SmallSession();
  const TensorHandle x = session.Put<float>(kValues, {4});
  std::vector<RunResult> made;
  int64_t handles = 1;
  EXPECT_TRUE(FailsWith(
      [&] {
        while (handles < kEnough) {
          made.push_back(Views(session, x));
          handles += kBatch;
        }
      },
      StatusCode::RESOURCE_EXHAUSTED,
      {"tensor handles need", "session memory limit of 1 MiB", "release tensors"}))
      << "a 1 MiB session held " << handles << " handles";
  RecordProperty("handles_in_one_mib", std::to_string(handles));
  EXPECT_EQ(session.Stats().session().handles(), handles) << "the refused run made none";
  ExpectUsable(session, x);

  ASSERT_FALSE(made.empty());
  session.Release(All(made.back()));  // gives the bytes back: room for another batch
  made.back() = Views(session, x);
  EXPECT_TRUE(FailsWith([&] { Views(session, x); }, StatusCode::RESOURCE_EXHAUSTED,
                        {"session memory limit of 1 MiB"}));
  session.ResetArena();  // the views were arena handles
  made.clear();
  for (int i = 0; i < 2; ++i) made.push_back(Views(session, x));
  ExpectUsable(session, x);
}

TEST_F(StructureLimitsTest, BackwardRecordsAreChargedToTheSessionMemoryLimit) {
  Session session = SmallSession();
  const TensorHandle x = session.Put<float>(kValues, {4}, {.requires_grad = true});
  // Chains of Neg over x: each operation keeps a record (it needs gradients) besides its
  // handle and 16 bytes of arena.
  const auto chain = [&](bool no_grad) {
    RunBuilder run;
    RunOutput y = run.Op("Neg", {x});
    for (int i = 1; i < kBatch; ++i) y = run.Op("Neg", {y});
    return session.Run(run.NoGrad(no_grad));
  };
  int64_t recorded = 0;
  EXPECT_TRUE(FailsWith(
      [&] {
        while (recorded < kEnough) {
          chain(false);
          recorded += kBatch;
        }
      },
      StatusCode::RESOURCE_EXHAUSTED, {"session memory limit of 1 MiB"}));
  RecordProperty("recorded_operations_in_one_mib", std::to_string(recorded));
  session.ResetArena();  // drops the handles, and with them the records
  int64_t unrecorded = 0;
  try {
    while (unrecorded < kEnough) {
      chain(true);
      unrecorded += kBatch;
    }
  } catch (const client::Error&) {
  }
  RecordProperty("unrecorded_operations_in_one_mib", std::to_string(unrecorded));
  EXPECT_GT(unrecorded, recorded) << "without records the same memory holds more results";
  session.ResetArena();
  chain(false);  // the records' bytes came back with the reset
  ExpectUsable(session, x);
}

}  // namespace
}  // namespace onemodel::testing
