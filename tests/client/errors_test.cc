// Every error path: the status code and the words of the message a person acts on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Floats;
using client::Ints;
using client::RunBuilder;
using client::Session;
using client::TensorHandle;
using grpc::StatusCode;
using P = onnx::TensorProto;

class ErrorsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (!HasFatalFailure()) session_.emplace(NewSession());
  }

  TensorHandle Put(std::vector<float> values, std::vector<int64_t> dims) {
    return session_->Put<float>(values, std::move(dims));
  }
  // Runs one operation in session_.
  TensorHandle Run(const std::string& op, const std::vector<client::RunInput>& inputs,
                   const std::vector<client::NamedAttr>& attributes = {}) {
    RunBuilder run;
    run.Op(op, inputs, attributes);
    return session_->Run(run).back();
  }
  // PutTensor of `proto` in session_.
  std::function<void()> PutCall(const P& proto, client::PutOptions options = {}) {
    return [this, proto, options] { session_->PutProto(proto, options); };
  }

  std::optional<Session> session_;
};

P FloatProto(std::vector<int64_t> dims, size_t raw_bytes) {
  P proto;
  proto.set_data_type(P::FLOAT);
  proto.mutable_dims()->Add(dims.begin(), dims.end());
  proto.set_raw_data(std::string(raw_bytes, '\0'));
  return proto;
}

TEST_F(ErrorsTest, UnknownAndClosedSessionsAreNotFound) {
  Session unknown = client().AttachSession(std::string(32, '0'));
  EXPECT_TRUE(
      FailsWith([&] { unknown.KeepAlive(); }, StatusCode::NOT_FOUND, {"session", "not found"}));
  Session closed = NewSession();
  closed.Close();
  EXPECT_TRUE(FailsWith([&] { closed.Put<float>(std::vector<float>{1}, {1}); },
                        StatusCode::NOT_FOUND, {"session", "not found"}));
  EXPECT_TRUE(FailsWith([&] { closed.Close(); }, StatusCode::NOT_FOUND, {"session"}));
}

TEST_F(ErrorsTest, UnknownAndReleasedHandlesAreNotFound) {
  EXPECT_TRUE(FailsWith([&] { session_->Get(TensorHandle(std::string("p999.deadbeef"))); },
                        StatusCode::NOT_FOUND, {"p999.deadbeef"}));
  const TensorHandle x = Put({1, 2}, {2});
  session_->Release({x});
  EXPECT_TRUE(FailsWith([&] { session_->Describe(x); }, StatusCode::NOT_FOUND, {x.id()}));
  EXPECT_TRUE(FailsWith([&] { session_->Release({x}); }, StatusCode::NOT_FOUND, {x.id()}));
  EXPECT_TRUE(FailsWith([&] { Run("Neg", {x}); }, StatusCode::NOT_FOUND, {x.id()}));
}

TEST_F(ErrorsTest, AHandleOfAnotherSessionIsNotFound) {
  Session other = NewSession();
  const TensorHandle theirs =
      other.Put<float>(std::vector<float>{1, 2}, {2}, {.requires_grad = true});
  EXPECT_TRUE(FailsWith([&] { session_->Get(theirs); }, StatusCode::NOT_FOUND, {theirs.id()}));
  EXPECT_TRUE(FailsWith([&] { session_->Describe(theirs); }, StatusCode::NOT_FOUND, {theirs.id()}));
  EXPECT_TRUE(FailsWith([&] { session_->Download(theirs); }, StatusCode::NOT_FOUND, {theirs.id()}));
  EXPECT_TRUE(FailsWith([&] { Run("Neg", {theirs}); }, StatusCode::NOT_FOUND, {theirs.id()}));
  EXPECT_TRUE(
      FailsWith([&] { session_->Release({theirs}); }, StatusCode::NOT_FOUND, {theirs.id()}));
  EXPECT_TRUE(FailsWith([&] { session_->Backward(theirs, {theirs}); }, StatusCode::NOT_FOUND,
                        {theirs.id()}));
  EXPECT_EQ(other.Get<float>(theirs), (std::vector<float>{1, 2}));  // still fine at home
}

TEST_F(ErrorsTest, AnArenaHandleAfterAResetIsStaleAndNamed) {
  const TensorHandle x = Put({1, 2}, {2});
  const TensorHandle y = Run("Neg", {x});
  session_->ResetArena();
  EXPECT_TRUE(
      FailsWith([&] { session_->Get(y); }, StatusCode::FAILED_PRECONDITION, {y.id(), "reset"}));
  EXPECT_TRUE(
      FailsWith([&] { Run("Exp", {y}); }, StatusCode::FAILED_PRECONDITION, {y.id(), "reset"}));

  const TensorHandle z = Run("Neg", {x});
  RunBuilder run;  // the reset happens before the first operation
  run.Op("Exp", {z});
  EXPECT_TRUE(FailsWith([&] { session_->Run(run.ResetArena()); }, StatusCode::FAILED_PRECONDITION,
                        {z.id(), "reset"}));
}

TEST_F(ErrorsTest, AViewOfAReleasedPoolBufferIsStale) {
  const TensorHandle x = Put({1, 2, 3, 4}, {4});
  const TensorHandle view = Run("Reshape", {x}, {{"shape", Ints{2, 2}}});
  session_->Release({x});
  EXPECT_TRUE(
      FailsWith([&] { session_->Get(view); }, StatusCode::FAILED_PRECONDITION, {view.id()}));
}

TEST_F(ErrorsTest, OperationRequestsAreChecked) {
  const TensorHandle x = Put({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3});
  EXPECT_TRUE(FailsWith([&] { Run("Conv3d", {x}); }, StatusCode::INVALID_ARGUMENT, {"Conv3d"}));
  EXPECT_TRUE(FailsWith([&] { Run("MaxPool2d", {x}); }, StatusCode::INVALID_ARGUMENT,
                        {"MaxPool2d", "kernel_shape", "ints"}));
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("Softmax", {x}, {{"axis", 0.5f}});
      },
      StatusCode::INVALID_ARGUMENT, {"Softmax", "axis", "int"}));
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("Sum", {x}, {{"axes", Floats{1.0f}}});
      },
      StatusCode::INVALID_ARGUMENT, {"Sum", "axes", "ints"}));
  EXPECT_TRUE(FailsWith([&] { Run("Add", {x}); }, StatusCode::INVALID_ARGUMENT, {"Add"}));
  EXPECT_TRUE(FailsWith([&] { Run("Neg", {x, x}); }, StatusCode::INVALID_ARGUMENT, {"Neg"}));
}

TEST_F(ErrorsTest, OutputReferencesMustPointBackwards) {
  const TensorHandle x = Put({1}, {1});
  for (const int32_t index : {1, 2, 7, -1}) {  // itself, a later one, past the end, negative
    SCOPED_TRACE(index);
    v1::RunRequest request;
    for (int i = 0; i < 3; ++i) {
      v1::Operation* operation = request.add_operations();
      operation->set_op("Neg");
      if (i == 1) {
        operation->add_inputs()->set_output(index);
      } else {
        operation->add_inputs()->set_handle(x.id());
      }
    }
    EXPECT_TRUE(FailsWith([&] { session_->Run(request); }, StatusCode::INVALID_ARGUMENT));
  }
}

TEST_F(ErrorsTest, CoreShapeAndTypeErrorsAreInvalidArguments) {
  const TensorHandle a = Put({1, 2, 3, 4, 5, 6}, {2, 3});
  const TensorHandle b = Put({1, 2, 3, 4}, {4});
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("Add", {a, b});
      },
      StatusCode::INVALID_ARGUMENT, {"do not broadcast"}));
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("MatMul", {a, a});
      },
      StatusCode::INVALID_ARGUMENT, {"inner dimensions differ"}));
  const TensorHandle ints = session_->Put<int32_t>(std::vector<int32_t>{1, 2}, {2});
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("Add", {ints, ints});
      },
      StatusCode::INVALID_ARGUMENT, {"FLOAT"}));
  EXPECT_TRUE(FailsWith(
      [&] {
        Run("Reshape", {a}, {{"shape", Ints{4, -1}}});
      },
      StatusCode::INVALID_ARGUMENT, {"reshape"}));
}

TEST_F(ErrorsTest, MalformedTensorProtosAreInvalidArguments) {
  P text;
  text.set_data_type(P::STRING);
  text.add_dims(1);
  text.add_string_data("x");
  EXPECT_TRUE(FailsWith(PutCall(text), StatusCode::INVALID_ARGUMENT, {"STRING"}));

  P external = FloatProto({1}, 0);
  external.clear_raw_data();
  external.set_data_location(P::EXTERNAL);
  auto* entry = external.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  EXPECT_TRUE(FailsWith(PutCall(external), StatusCode::INVALID_ARGUMENT, {"external"}));

  P segment = FloatProto({1}, 4);
  segment.mutable_segment()->set_begin(0);
  segment.mutable_segment()->set_end(1);
  EXPECT_TRUE(FailsWith(PutCall(segment), StatusCode::INVALID_ARGUMENT, {"segment"}));

  EXPECT_TRUE(FailsWith(PutCall(FloatProto({4}, 12)), StatusCode::INVALID_ARGUMENT, {"12", "16"}));
  EXPECT_TRUE(FailsWith(PutCall(FloatProto({2, -1}, 0)), StatusCode::INVALID_ARGUMENT, {"-1"}));
  EXPECT_TRUE(FailsWith(PutCall(FloatProto(std::vector<int64_t>(9, 1), 4)),
                        StatusCode::INVALID_ARGUMENT, {"rank"}));

  P typed;
  typed.set_data_type(P::FLOAT);
  typed.add_dims(4);
  typed.add_float_data(1.0f);
  EXPECT_TRUE(FailsWith(PutCall(typed), StatusCode::INVALID_ARGUMENT));

  P unknown_type = FloatProto({1}, 4);
  unknown_type.set_data_type(999);
  EXPECT_TRUE(FailsWith(PutCall(unknown_type), StatusCode::INVALID_ARGUMENT, {"999"}));
}

TEST_F(ErrorsTest, InPlaceWritesNeedAMatchingTarget) {
  const TensorHandle x = Put({1, 2, 3}, {3});
  EXPECT_TRUE(FailsWith(
      [&] {
        session_->Put<float>(std::vector<float>{1, 2}, {2}, {.target = x.id()});
      },
      StatusCode::INVALID_ARGUMENT, {x.id()}));
  EXPECT_TRUE(FailsWith(
      [&] {
        session_->Put<int32_t>(std::vector<int32_t>{1, 2, 3}, {3}, {.target = x.id()});
      },
      StatusCode::INVALID_ARGUMENT, {x.id()}));
  EXPECT_TRUE(FailsWith(
      [&] {
        session_->Put<float>(std::vector<float>{1}, {1}, {.target = "p999.0123456789abcdef"});
      },
      StatusCode::NOT_FOUND, {"p999.0123456789abcdef"}));
  const TensorHandle broadcast = Run("Expand", {x}, {{"shape", Ints{2, 3}}});
  EXPECT_TRUE(FailsWith(
      [&] {
        session_->Put<float>(std::vector<float>(6), {2, 3}, {.target = broadcast.id()});
      },
      StatusCode::INVALID_ARGUMENT, {broadcast.id(), "broadcast"}));
}

TEST_F(ErrorsTest, OnlyFloatingTensorsRequireGrad) {
  P ints;
  ints.set_data_type(P::INT32);
  ints.add_dims(1);
  ints.set_raw_data(std::string(4, '\0'));
  EXPECT_TRUE(
      FailsWith(PutCall(ints, {.requires_grad = true}), StatusCode::INVALID_ARGUMENT, {"INT32"}));
}

TEST_F(ErrorsTest, BackwardFromARootWithoutGradIsInvalid) {
  const TensorHandle x = Put({1, 2}, {2});
  const TensorHandle total = Run("Sum", {x});
  EXPECT_TRUE(FailsWith([&] { session_->Backward(total, {x}); }, StatusCode::INVALID_ARGUMENT,
                        {"does not require grad"}));
}

TEST_F(ErrorsTest, NonScalarRootNeedsAGradOutput) {
  const TensorHandle x =
      session_->Put<float>(std::vector<float>{1, 2}, {2}, {.requires_grad = true});
  const TensorHandle y = Run("Mul", {x, x});
  EXPECT_TRUE(FailsWith([&] { session_->Backward(y, {x}); }, StatusCode::INVALID_ARGUMENT,
                        {"output gradient"}));
}

TEST_F(ErrorsTest, SessionMemoryLimitIsResourceExhausted) {
  Session small = client().CreateSession({.memory_limit_bytes = 1 << 20});
  EXPECT_TRUE(FailsWith([&] { small.Put<float>(std::vector<float>(1 << 19), {1 << 19}); },
                        StatusCode::RESOURCE_EXHAUSTED, {"memory limit", "1 MiB"}));
  small.Put<float>(std::vector<float>(1000), {1000});  // within the limit
}

TEST(LimitsTest, SessionsBeyondMaxSessionsAreResourceExhausted) {
  ServerProcess server({"--max-sessions", "2"});
  {
    client::Client client(server.grpc_address());
    {
      Session a = client.CreateSession();
      Session b = client.CreateSession();
      EXPECT_TRUE(
          FailsWith([&] { client.CreateSession(); }, StatusCode::RESOURCE_EXHAUSTED, {"2"}));
    }
    client.CreateSession();  // closing made room
  }
  EXPECT_TRUE(server.Stop().ok());
}

TEST(LimitsTest, IdleSessionsExpire) {
  ServerProcess server;
  {
    client::Client client(server.grpc_address());
    // Long enough that the Put below lands first even in a sanitizer build on a loaded machine.
    Session session = client.CreateSession({.idle_timeout_ms = 2000});
    session.Put<float>(std::vector<float>(100), {100});
    const int64_t expired_before = client.Stats().sessions().expired();
    Eventually([&] { return client.Stats().sessions().expired() != expired_before; },
               std::chrono::seconds(30));
    const v1::Stats stats = client.Stats();
    EXPECT_EQ(stats.sessions().expired() - expired_before, 1);
    EXPECT_EQ(stats.sessions().leaked_buffers_reclaimed(), 1);
    EXPECT_TRUE(
        FailsWith([&] { session.KeepAlive(); }, StatusCode::NOT_FOUND, {"session", "not found"}));
  }
  EXPECT_TRUE(server.Stop().ok());
}

TEST(AuthTest, ABearerTokenIsRequiredWhenConfigured) {
  const std::string token_file =
      (std::filesystem::temp_directory_path() / ("onemodel-token-" + std::to_string(getpid())))
          .string();
  std::ofstream(token_file) << "s3cret\n";
  ServerProcess server({"--auth-token-file", token_file});
  EXPECT_TRUE(FailsWith([&] { client::Client(server.grpc_address()).Ping(); },
                        StatusCode::UNAUTHENTICATED));
  EXPECT_TRUE(FailsWith(
      [&] { client::Client(server.grpc_address(), {.bearer_token = "wrong"}).CreateSession(); },
      StatusCode::UNAUTHENTICATED));
  {
    client::Client authorized(server.grpc_address(), {.bearer_token = "s3cret"});
    EXPECT_EQ(authorized.Ping(), server.instance_id());
    authorized.CreateSession().Put<float>(std::vector<float>{1}, {1});
  }
  EXPECT_TRUE(server.Stop().ok());
  std::filesystem::remove(token_file);
}

}  // namespace
}  // namespace onemodel::testing
