// The BlockedWeights layout over gRPC: a session pre-blocks its convolution weights once
// (ToLayout into the pool), reuses them run after run, and Conv2d gives the same bytes as
// with the plain weights in both kernel choices; TensorInfo reports the layout, GetTensor
// returns the logical values, and ordinary operations refuse the blocked handle.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::RunInput;
using client::TensorHandle;
using ::testing::ElementsAre;

class BlockedWeightsTest : public ServerTest {};

// The values' bit patterns, so that equality means the same bytes.
std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

TEST_F(BlockedWeightsTest, PreBlockedWeightsGiveConv2dTheSameBytesRunAfterRun) {
  // 20 output channels in blocks of 16 (a tail of 4), two groups of 3 input channels.
  const std::vector<int64_t> xd = {2, 6, 7, 7}, wd = {20, 3, 3, 3};
  const std::vector<float> x = RandomFloats(2 * 6 * 7 * 7, 160);
  const std::vector<float> w = RandomFloats(20 * 3 * 3 * 3, 161);
  const std::vector<float> b = RandomFloats(20, 162);
  const std::vector<client::NamedAttr> conv = {{"pads", Ints{1, 1, 1, 1}}, {"group", 2}};
  for (v1::KernelChoice kernels : {v1::KERNEL_CHOICE_EXACT, v1::KERNEL_CHOICE_FAST}) {
    SCOPED_TRACE(v1::KernelChoice_Name(kernels));
    client::Session session = NewSession(kernels);
    const TensorHandle hx = session.Put<float>(x, xd), hw = session.Put<float>(w, wd),
                       hb = session.Put<float>(b, {20});
    client::RunBuilder pack;
    pack.Op("ToLayout", {hw}, {{"layout", "BlockedWeights"}, {"block", 16}}, v1::PLACEMENT_POOL);
    const TensorHandle blocked = session.Run(pack.NoGrad()).back();
    EXPECT_EQ(blocked.info().layout(), "BlockedWeights");
    EXPECT_EQ(blocked.info().block_size(), 16);
    EXPECT_THAT(blocked.info().dims(), ElementsAre(20, 3, 3, 3));
    EXPECT_GE(blocked.info().buffer_bytes(), 2 * 3 * 3 * 3 * 16 * 4);  // ceil(20/16) blocks
    EXPECT_EQ(Bits(session.Get<float>(blocked)), Bits(w)) << "GetTensor gives logical values";

    client::RunBuilder plain_run;
    plain_run.Op("Conv2d", {hx, hw, hb}, conv);
    const std::vector<uint32_t> want = Bits(session.Get<float>(session.Run(plain_run).back()));
    for (int run = 0; run < 2; ++run) {
      client::RunBuilder again;
      again.Op("Conv2d", {hx, blocked, hb}, conv);
      const TensorHandle y = session.Run(again.ResetArena()).back();
      EXPECT_EQ(Bits(session.Get<float>(y)), want) << "run " << run;
    }

    client::RunBuilder unpack;
    unpack.Op("ToLayout", {blocked}, {{"layout", "NCHW"}});
    const TensorHandle back = session.Run(unpack).back();
    EXPECT_EQ(back.info().layout(), "NCHW");
    EXPECT_EQ(back.info().block_size(), 0);
    EXPECT_EQ(Bits(session.Get<float>(back)), Bits(w));
  }
}

TEST_F(BlockedWeightsTest, OrdinaryOpsAndGradientsRefuseBlockedWeights) {
  client::Session session = NewSession();
  const TensorHandle hw = session.Put<float>(RandomFloats(5 * 2 * 1 * 1, 163), {5, 2, 1, 1});
  client::RunBuilder pack;
  pack.Op("ToLayout", {hw}, {{"layout", "blockedweights"}, {"block", 4}});
  const TensorHandle blocked = session.Run(pack).back();
  EXPECT_TRUE(FailsWith(
      [&] {
        client::RunBuilder run;
        run.Op("Relu", {blocked});
        session.Run(run);
      },
      grpc::StatusCode::INVALID_ARGUMENT, {"Relu", "weights blocked by 4", "ToLayout(NCHW)"}));
  const TensorHandle leaf =
      session.Put<float>(RandomFloats(5 * 2, 164), {5, 2, 1, 1}, {.requires_grad = true});
  EXPECT_TRUE(FailsWith(
      [&] {
        client::RunBuilder run;
        run.Op("ToLayout", {leaf}, {{"layout", "BlockedWeights"}});
        session.Run(run);
      },
      grpc::StatusCode::INVALID_ARGUMENT, {"ToLayout(BlockedWeights)", "requires gradients"}));
}

}  // namespace
}  // namespace onemodel::testing
