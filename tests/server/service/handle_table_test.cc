#include "server/sessions/handle_table.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "core/memory/buffer_pool.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

class HandleTableTest : public ::testing::Test {
 protected:
  Tensor NewTensor() { return Tensor::Empty(Shape{4}, DType::kFloat, pool_); }
  // The status code Find(handle) fails with (OK when it succeeds).
  grpc::StatusCode FindCode(const HandleTable& table, const std::string& handle) {
    try {
      table.Find(handle);
      return grpc::StatusCode::OK;
    } catch (const RpcError& e) {
      return e.code();
    }
  }
  BufferPool pool_;
};

TEST_F(HandleTableTest, HandlesNameTheirTensorAndPlacement) {
  HandleTable table(100);
  const Tensor t = NewTensor();
  const std::string p = table.Add(t, Placement::kPool, true);
  const std::string a = table.Add(t, Placement::kArena, false);
  EXPECT_EQ(p[0], 'p');
  EXPECT_EQ(a[0], 'a');
  EXPECT_EQ(table.Find(p).tensor.buffer(), t.buffer());
  EXPECT_EQ(table.Find(a).placement, Placement::kArena);
  EXPECT_TRUE(table.Find(p).owns_buffer);
  EXPECT_FALSE(table.Find(a).owns_buffer);
  EXPECT_EQ(table.size(), 2);
}

TEST_F(HandleTableTest, HandlesAreUniqueAndCarryASecretTag) {
  HandleTable table(10000);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(table.Add(NewTensor(), Placement::kArena, true));
  EXPECT_EQ(seen.size(), 1000u);
  const std::string h = *seen.begin();
  EXPECT_EQ(h.size() - h.find('.'), 17u) << "64-bit tag as 16 hex digits: " << h;
}

TEST_F(HandleTableTest, AnotherTablesHandleIsUnknownHere) {
  HandleTable mine(10), theirs(10);
  const std::string h = theirs.Add(NewTensor(), Placement::kPool, true);
  mine.Add(NewTensor(), Placement::kPool, true);  // the same serial exists here
  EXPECT_EQ(FindCode(mine, h), grpc::StatusCode::NOT_FOUND);
  try {
    mine.Find(h);
  } catch (const RpcError& e) {
    EXPECT_NE(std::string(e.what()).find("not a handle of this session"), std::string::npos);
  }
}

TEST_F(HandleTableTest, MalformedHandlesAreNotFoundWithABoundedEcho) {
  HandleTable table(10);
  const std::string good = table.Add(NewTensor(), Placement::kPool, true);
  std::string flipped = good;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  std::string upper = good;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  upper[0] = 'p';
  const std::string leading_zero = "p0" + good.substr(1);
  for (const std::string& bad :
       {std::string(), std::string("p"), std::string("x1.0000000000000000"),
        std::string("p1.zzzzzzzzzzzzzzzz"), good + "0", flipped, std::string(10000, 'p'),
        std::string("p\x01\xff"), upper, leading_zero}) {
    if (bad == good) continue;  // a tag of digits only has no uppercase spelling
    EXPECT_EQ(FindCode(table, bad), grpc::StatusCode::NOT_FOUND) << bad.substr(0, 40);
  }
  try {
    table.Find(std::string(10000, 'p'));
  } catch (const RpcError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << "a huge handle is not echoed in full";
  }
}

TEST_F(HandleTableTest, ArenaHandlesBecomeStaleAtResetAndStayRecognised) {
  HandleTable table(10);
  const std::string a = table.Add(NewTensor(), Placement::kArena, true);
  const std::string p = table.Add(NewTensor(), Placement::kPool, true);
  EXPECT_EQ(table.ResetArena(), 1);
  EXPECT_EQ(table.size(), 1);
  try {
    table.Find(a);
    FAIL() << "expected FAILED_PRECONDITION";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(std::string(e.what()).find(a), std::string::npos) << "names the handle";
    EXPECT_NE(std::string(e.what()).find("arena"), std::string::npos);
  }
  EXPECT_EQ(FindCode(table, p), grpc::StatusCode::OK) << "pool handles survive resets";
  // Still stale after further resets.
  table.ResetArena();
  EXPECT_EQ(FindCode(table, a), grpc::StatusCode::FAILED_PRECONDITION);
  // New arena handles after the reset are live.
  EXPECT_EQ(FindCode(table, table.Add(NewTensor(), Placement::kArena, true)), grpc::StatusCode::OK);
}

TEST_F(HandleTableTest, ReleasedHandlesAreNotFoundAndRemoveReturnsTheEntry) {
  HandleTable table(10);
  const Tensor t = NewTensor();
  const std::string h = table.Add(t, Placement::kPool, true);
  const HandleEntry e = table.Remove(h);
  EXPECT_EQ(e.tensor.buffer(), t.buffer());
  EXPECT_EQ(FindCode(table, h), grpc::StatusCode::NOT_FOUND);
  EXPECT_THROW(table.Remove(h), RpcError);
}

TEST_F(HandleTableTest, AViewOfAReleasedBufferIsStaleButRemovable) {
  HandleTable table(10);
  Tensor t = NewTensor();
  const std::string owner = table.Add(t, Placement::kPool, true);
  const std::string view = table.Add(t.Slice(0, 0, 2), Placement::kPool, false);
  table.Remove(owner).tensor.Dispose();
  EXPECT_EQ(FindCode(table, view), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NO_THROW(table.CheckExists(view));
  EXPECT_NO_THROW(table.Remove(view));
}

TEST_F(HandleTableTest, TheLimitIsResourceExhaustedAndNamesItsValue) {
  HandleTable table(2);
  table.Add(NewTensor(), Placement::kPool, true);
  table.Add(NewTensor(), Placement::kArena, true);
  try {
    table.Add(NewTensor(), Placement::kPool, true);
    FAIL() << "expected RESOURCE_EXHAUSTED";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(e.what()).find("limit of 2 (--max-handles)"), std::string::npos);
  }
  EXPECT_THROW((void)table.Reserve(1), RpcError);
  table.ResetArena();
  EXPECT_NO_THROW((void)table.Reserve(1)) << "a reset frees room";
}

}  // namespace
}  // namespace onemodel::server
