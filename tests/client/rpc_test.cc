// Every RPC of onemodel.v1.OneModel and grpc.health.v1.Health, through the C++ client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Session;
using client::TensorData;
using client::TensorHandle;
using ::testing::ElementsAre;
using ::testing::StartsWith;
using P = onnx::TensorProto;

class RpcTest : public ServerTest {};

TEST_F(RpcTest, PingReturnsTheInstanceIdOfTheReadyFile) {
  EXPECT_EQ(client().Ping(), server().instance_id());
}

TEST_F(RpcTest, HealthIsServingForTheServerAndTheService) {
  EXPECT_EQ(client().Health(""), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(client().Health("onemodel.v1.OneModel"),
            grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(RpcTest, CreateSessionReportsIdKernelsInstanceAndLimits) {
  Session exact = NewSession(v1::KERNEL_CHOICE_EXACT);
  EXPECT_TRUE(std::regex_match(exact.id(), std::regex("[0-9a-f]{32}"))) << exact.id();
  EXPECT_EQ(exact.created().kernel_variant(), "reference");
  EXPECT_EQ(exact.server_instance_id(), server().instance_id());
  EXPECT_EQ(exact.created().arena_chunk_bytes(), 1 << 20);
  EXPECT_EQ(exact.created().max_message_bytes(), 64 << 20);
  EXPECT_GT(exact.created().memory_limit_bytes(), 0);
  EXPECT_GT(exact.created().idle_timeout_ms(), 0);

  Session fast = NewSession(v1::KERNEL_CHOICE_FAST);
  EXPECT_THAT(fast.created().kernel_variant(), StartsWith("fast-"));
  EXPECT_NE(fast.id(), exact.id());
  EXPECT_THAT(client().CreateSession().created().kernel_variant(), StartsWith("fast-"));
}

TEST_F(RpcTest, CreateSessionKeepsRequestedLimits) {
  Session session = client().CreateSession(
      {.arena_chunk_bytes = 2 << 20, .memory_limit_bytes = 16 << 20, .idle_timeout_ms = 60000});
  EXPECT_EQ(session.created().arena_chunk_bytes(), 2 << 20);
  EXPECT_EQ(session.created().memory_limit_bytes(), 16 << 20);
  EXPECT_EQ(session.created().idle_timeout_ms(), 60000);
}

TEST_F(RpcTest, KeepAliveReportsInstanceAndTimeout) {
  Session session = client().CreateSession({.idle_timeout_ms = 45000});
  const v1::KeepAliveReply reply = session.KeepAlive();
  EXPECT_EQ(reply.server_instance_id(), server().instance_id());
  EXPECT_EQ(reply.idle_timeout_ms(), 45000);
}

TEST_F(RpcTest, CloseSessionReleasesWhatTheClientKeptAndEndsTheSession) {
  Session session = NewSession();
  const std::vector<float> values(1000, 1.0f);
  const TensorHandle kept = session.Put<float>(values, {1000});
  const TensorHandle released = session.Put<float>(values, {1000});
  session.Release({released});
  const v1::CloseSessionReply reply = session.Close();
  EXPECT_EQ(reply.released_buffers(), 1);
  EXPECT_EQ(reply.leaked_buffers(), 0) << "closing is the normal end, not a leak";
  EXPECT_GE(reply.released_bytes(), 4000);
  EXPECT_FALSE(session.owns());
  EXPECT_TRUE(FailsWith([&] { session.KeepAlive(); }, grpc::StatusCode::NOT_FOUND,
                        {"session", "not found"}));
}

TEST_F(RpcTest, DestructorClosesOwnedSessionsOnly) {
  const v1::SessionCounters before = client().Stats().sessions();
  std::string detached_id;
  {
    Session owned = NewSession();
    Session detached = NewSession();
    detached_id = detached.Detach();
    Session moved = std::move(owned);
    EXPECT_TRUE(moved.owns());
  }
  const v1::SessionCounters after = client().Stats().sessions();
  EXPECT_EQ(after.created() - before.created(), 2);
  EXPECT_EQ(after.closed() - before.closed(), 1);
  EXPECT_EQ(after.open() - before.open(), 1);
  Session attached = client().AttachSession(detached_id);
  EXPECT_FALSE(attached.owns());
  EXPECT_EQ(attached.KeepAlive().server_instance_id(), server().instance_id());
  attached.Close();
}

TEST_F(RpcTest, PutAndGetRoundTripEveryType) {
  Session session = NewSession();
  for (const int32_t type : {P::FLOAT, P::UINT8, P::INT8, P::UINT16, P::INT16, P::INT32, P::INT64,
                             P::BOOL, P::FLOAT16, P::DOUBLE, P::UINT32, P::UINT64, P::BFLOAT16}) {
    SCOPED_TRACE(client::DataTypeName(type));
    TensorData data{type, {2, 3}, std::string(6 * client::ElementBytes(type), '\0')};
    for (size_t i = 0; i < data.bytes.size(); ++i) {
      data.bytes[i] = static_cast<char>(type == P::BOOL ? i % 2 : (i * 37 + 11) % 127);
    }
    const TensorHandle handle = session.Put(data);
    EXPECT_EQ(handle.data_type(), type);
    EXPECT_EQ(handle.info().data_type_name(), client::DataTypeName(type));
    const TensorData back = session.Get(handle);
    EXPECT_EQ(back.data_type, type);
    EXPECT_EQ(back.dims, data.dims);
    EXPECT_EQ(back.bytes, data.bytes);
  }
}

TEST_F(RpcTest, PutAcceptsTypedFieldsAndGetRepliesWithRawData) {
  Session session = NewSession();
  P proto;
  proto.set_data_type(P::INT16);
  proto.add_dims(3);
  for (const int v : {-7, 0, 300}) proto.add_int32_data(v);
  const TensorHandle handle = session.PutProto(proto);
  const P reply = session.GetProto(handle);
  EXPECT_EQ(reply.name(), handle.id());
  EXPECT_TRUE(reply.has_raw_data());
  EXPECT_EQ(reply.int32_data_size(), 0);
  EXPECT_EQ(reply.data_type(), P::INT16);
  EXPECT_THAT(reply.dims(), ElementsAre(3));
  EXPECT_EQ(client::FromProto(reply).ToVector<int16_t>(), (std::vector<int16_t>{-7, 0, 300}));
}

TEST_F(RpcTest, PutAndUploadWithATargetWriteInPlace) {
  Session session = NewSession();
  const TensorHandle x = session.Put<float>(std::vector<float>{1, 2, 3}, {3});
  const TensorHandle put = session.Put<float>(std::vector<float>{4, 5, 6}, {3}, {.target = x.id()});
  EXPECT_EQ(put.id(), x.id());
  EXPECT_EQ(put.info().version(), x.info().version() + 1);
  EXPECT_EQ(session.Get<float>(x), (std::vector<float>{4, 5, 6}));
  const TensorHandle uploaded =
      session.Upload(TensorData::From<float>(std::vector<float>{7, 8, 9}, {3}), {.target = x.id()});
  EXPECT_EQ(uploaded.id(), x.id());
  EXPECT_EQ(uploaded.info().version(), x.info().version() + 2);
  EXPECT_EQ(session.Get<float>(x), (std::vector<float>{7, 8, 9}));
}

TEST_F(RpcTest, DescribeReportsTheTensor) {
  Session session = NewSession();
  const std::vector<float> values = RandomFloats(2 * 3 * 4 * 5, 1);
  const TensorHandle x = session.Put<float>(values, {2, 3, 4, 5}, {.requires_grad = true});
  const v1::TensorInfo info = session.Describe(TensorHandle(x.id())).info();
  EXPECT_THAT(info.handle(), StartsWith("p"));
  EXPECT_EQ(info.handle(), x.id());
  EXPECT_EQ(info.data_type(), P::FLOAT);
  EXPECT_EQ(info.data_type_name(), "FLOAT");
  EXPECT_THAT(info.dims(), ElementsAre(2, 3, 4, 5));
  EXPECT_THAT(info.strides(), ElementsAre(60, 20, 5, 1));
  EXPECT_EQ(info.offset(), 0);
  EXPECT_EQ(info.layout(), "NCHW");
  EXPECT_EQ(info.block_size(), 0);
  EXPECT_TRUE(info.requires_grad());
  EXPECT_EQ(info.grad_fn(), "leaf");
  EXPECT_EQ(info.placement(), v1::PLACEMENT_POOL);
  EXPECT_GE(info.buffer_bytes(), 480);
}

TEST_F(RpcTest, ArenaPlacementPutsTensorsInTheArena) {
  Session session = NewSession();
  const std::vector<int32_t> values = {1, 2, 3};
  const TensorHandle handle = session.Put<int32_t>(values, {3}, {.placement = v1::PLACEMENT_ARENA});
  EXPECT_THAT(handle.id(), StartsWith("a"));
  EXPECT_EQ(handle.info().placement(), v1::PLACEMENT_ARENA);
  EXPECT_EQ(session.Get<int32_t>(handle), values);
}

TEST_F(RpcTest, ReleaseTensorsForgetsHandles) {
  Session session = NewSession();
  const std::vector<float> values = {1, 2};
  const TensorHandle a = session.Put<float>(values, {2});
  const TensorHandle b = session.Put<float>(values, {2});
  EXPECT_EQ(session.Release({a, b}), 2);
  EXPECT_TRUE(FailsWith([&] { session.Get(a); }, grpc::StatusCode::NOT_FOUND, {a.id()}));
}

TEST_F(RpcTest, RunTakesHandlesEarlierOutputsAndInlineTensors) {
  Session session = NewSession();
  const std::vector<float> x_values = {1, 2, 3};
  const std::vector<float> y_values = {10, 20, 30};
  const TensorHandle x = session.Put<float>(x_values, {3});
  client::RunBuilder run;
  const client::RunOutput sum = run.Op("Add", {x, TensorData::From<float>(y_values, {3})});
  const client::RunOutput doubled = run.Op("Add", {sum, sum}, {}, v1::PLACEMENT_POOL);
  const client::RunResult result = session.Run(run);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_THAT(result[sum].id(), StartsWith("a"));
  EXPECT_EQ(result[sum].info().placement(), v1::PLACEMENT_ARENA);
  EXPECT_THAT(result[doubled].id(), StartsWith("p"));
  EXPECT_THAT(result[doubled].info().dims(), ElementsAre(3));
  EXPECT_EQ(session.Get<float>(result[sum]), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(session.Get<float>(result[doubled]), (std::vector<float>{22, 44, 66}));
}

TEST_F(RpcTest, BackwardReturnsOneGradientPerInput) {
  Session session = NewSession();
  const std::vector<float> values = {1, -2, 3};
  const TensorHandle x = session.Put<float>(values, {3}, {.requires_grad = true});
  client::RunBuilder run;
  const client::RunOutput square = run.Op("Mul", {x, x});
  const client::RunOutput total = run.Op("Sum", {square});
  const client::RunResult result = session.Run(run);
  EXPECT_EQ(result[total].info().grad_fn(), "Sum");
  EXPECT_TRUE(result[total].info().requires_grad());
  const std::vector<TensorHandle> grads = session.Backward(result[total], {x, x});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(session.Get<float>(grads[0]), (std::vector<float>{2, -4, 6}));
  EXPECT_EQ(session.Get<float>(grads[1]), (std::vector<float>{2, -4, 6}));
}

TEST_F(RpcTest, ResetArenaStalesArenaHandlesAndCountsThem) {
  Session session = NewSession();
  const std::vector<float> values = {1, 2};
  const TensorHandle x = session.Put<float>(values, {2});
  client::RunBuilder run;
  run.Op("Neg", {x});
  run.Op("Exp", {x});
  session.Run(run.NoGrad());
  const v1::ResetArenaReply reply = session.ResetArena();
  EXPECT_EQ(reply.stale_handles(), 2);
  EXPECT_EQ(reply.arena().resets(), 1);
  EXPECT_EQ(reply.arena().used_bytes(), 0);
  EXPECT_EQ(session.Get<float>(x), values);  // pool tensors survive
}

TEST_F(RpcTest, GetStatsNamesTheSessionWhenAsked) {
  Session session = NewSession();
  const v1::Stats stats = session.Stats();
  EXPECT_EQ(stats.server_instance_id(), server().instance_id());
  EXPECT_EQ(stats.session().session_id(), session.id());
  EXPECT_EQ(stats.session().kernel_variant(), "reference");
  EXPECT_FALSE(client().Stats().has_session());
}

TEST_F(RpcTest, WatchStatsStreamsUntilTheClientStops) {
  int received = 0;
  client().WatchStats(20, [&](const v1::Stats& stats) {
    EXPECT_EQ(stats.server_instance_id(), server().instance_id());
    return ++received < 3;
  });
  EXPECT_EQ(received, 3);
}

TEST_F(RpcTest, ListOperationsDescribesWhatRunAccepts) {
  const std::vector<v1::OperationSpec> ops = client().ListOperations();
  ASSERT_GE(ops.size(), 30u);
  std::set<std::string> names;
  for (const v1::OperationSpec& op : ops) names.insert(op.name());
  for (const char* name : {"Add", "MatMul", "Softmax", "MaxPool2d", "Slice", "Detach"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  const std::vector<v1::OperationSpec> softmax = client().ListOperations("Softmax");
  ASSERT_EQ(softmax.size(), 1u);
  EXPECT_EQ(softmax[0].inputs_size(), 1);
  EXPECT_TRUE(softmax[0].differentiable());
  ASSERT_EQ(softmax[0].attributes_size(), 2);
  EXPECT_EQ(softmax[0].attributes(0).name(), "axis");
  EXPECT_EQ(softmax[0].attributes(0).kind(), v1::ATTRIBUTE_KIND_INT);
  EXPECT_EQ(softmax[0].attributes(0).default_value().i(), -1);
  EXPECT_TRUE(FailsWith([&] { client().ListOperations("softmx"); }, grpc::StatusCode::NOT_FOUND,
                        {"unknown operation 'softmx'", "did you mean 'Softmax'?"}));
}

TEST_F(RpcTest, AnUnknownOperationSuggestsTheNearestNames) {
  Session session = NewSession();
  const TensorHandle x = session.Put<float>(std::vector<float>{1, 2}, {2});
  client::RunBuilder typo;
  typo.Op("Softmx", {x});
  EXPECT_TRUE(FailsWith([&] { session.Run(typo); }, grpc::StatusCode::INVALID_ARGUMENT,
                        {"operation 0 (Softmx): unknown operation 'Softmx'; did you mean "
                         "'Softmax'?"}));
  client::RunBuilder control;
  control.Op(std::string("Re\x1b[31mlu"), {x});
  EXPECT_TRUE(FailsWith([&] { session.Run(control); }, grpc::StatusCode::INVALID_ARGUMENT,
                        {"operation 0 (Re\\x1b[31mlu): unknown operation 'Re\\x1b[31mlu'"}));
}

TEST_F(RpcTest, StreamedTransfersWorkInSmallChunks) {
  Session session = NewSession();
  const std::vector<float> values = RandomFloats(1000, 2);
  std::vector<int64_t> seen;
  const TensorHandle handle = session.Upload(TensorData::From<float>(values, {10, 100}),
                                             {.progress = [&](int64_t done, int64_t total) {
                                               EXPECT_EQ(total, 4000);
                                               seen.push_back(done);
                                             }});
  EXPECT_THAT(handle.info().dims(), ElementsAre(10, 100));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 4000);
  const TensorData back = session.Download(handle, {}, 256);
  EXPECT_EQ(back.dims, (std::vector<int64_t>{10, 100}));
  EXPECT_EQ(back.ToVector<float>(), values);
}

TEST_F(RpcTest, EveryReplyCarriesTheInstanceHeader) {
  Session session = NewSession();
  const std::string& instance = server().instance_id();
  const std::vector<float> values = {1, 2};
  const auto expect_instance = [&](const char* rpc) {
    EXPECT_EQ(session.last_reply_instance(), instance) << rpc;
  };
  const TensorHandle x = session.Put<float>(values, {2});
  expect_instance("PutTensor");
  session.GetProto(x);
  expect_instance("GetTensor");
  session.Upload(TensorData::From<float>(values, {2}));
  expect_instance("UploadTensor");
  session.Download(x);
  expect_instance("DownloadTensor");
  session.Describe(x);
  expect_instance("DescribeTensor");
  client::RunBuilder run;
  run.Op("Neg", {x});
  session.Run(run);
  expect_instance("Run");
  session.KeepAlive();
  expect_instance("KeepAlive");
  session.ResetArena();
  expect_instance("ResetArena");
  session.Stats();
  expect_instance("GetStats");
  session.Release({x});
  expect_instance("ReleaseTensors");
}

// Raw stub calls: the session may be named by header, by field, or both when they agree.
class SessionNamingTest : public ServerTest {
 protected:
  grpc::Status KeepAlive(const std::string& header, const std::string& field) {
    auto stub = v1::OneModel::NewStub(client().channel());
    grpc::ClientContext context;
    if (!header.empty()) context.AddMetadata("onemodel-session", header);
    v1::KeepAliveRequest request;
    request.set_session_id(field);
    v1::KeepAliveReply reply;
    return stub->KeepAlive(&context, request, &reply);
  }
};

TEST_F(SessionNamingTest, HeaderOrFieldOrBothNameTheSession) {
  Session session = NewSession();
  EXPECT_TRUE(KeepAlive(session.id(), "").ok());
  EXPECT_TRUE(KeepAlive("", session.id()).ok());
  EXPECT_TRUE(KeepAlive(session.id(), session.id()).ok());
}

TEST_F(SessionNamingTest, DisagreeingHeaderAndFieldAreInvalid) {
  Session a = NewSession();
  Session b = NewSession();
  const grpc::Status status = KeepAlive(a.id(), b.id());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
}

}  // namespace
}  // namespace onemodel::testing
