#include "client/lib/run_builder.h"

#include <gtest/gtest.h>

namespace onemodel::client {
namespace {

TEST(RunBuilderTest, BuildsOperationsWithEveryInputKind) {
  const TensorHandle x(std::string("p1.abc"));
  const std::vector<float> values = {1, 2};
  RunBuilder run;
  const RunOutput y = run.Op("Mul", {x, TensorData::From<float>(values, {2})});
  const RunOutput z = run.Op("Neg", {y}, {}, v1::PLACEMENT_POOL);
  run.NoGrad().ResetArena();

  EXPECT_EQ(y.index(), 0);
  EXPECT_EQ(z.index(), 1);
  const v1::RunRequest& request = run.request();
  ASSERT_EQ(run.size(), 2);
  EXPECT_TRUE(request.no_grad());
  EXPECT_TRUE(request.reset_arena());
  const v1::Operation& mul = request.operations(0);
  EXPECT_EQ(mul.op(), "Mul");
  ASSERT_EQ(mul.inputs_size(), 2);
  EXPECT_EQ(mul.inputs(0).handle(), "p1.abc");
  EXPECT_EQ(mul.inputs(1).tensor().raw_data().size(), 8u);
  EXPECT_EQ(request.operations(1).inputs(0).output(), 0);
  EXPECT_EQ(request.operations(1).placement(), v1::PLACEMENT_POOL);
}

TEST(RunBuilderTest, TypesAttributesBySpelling) {
  RunBuilder run;
  run.Op("Any", {},
         {{"i", 3},
          {"wide", int64_t{1} << 40},
          {"f", 0.5f},
          {"d", 0.25},
          {"s", "NHWC"},
          {"ints", Ints{1, 2}},
          {"floats", Floats{1.5f}}});
  const auto& attributes = run.request().operations(0).attributes();
  EXPECT_EQ(attributes.at("i").i(), 3);
  EXPECT_EQ(attributes.at("wide").i(), int64_t{1} << 40);
  EXPECT_EQ(attributes.at("f").f(), 0.5f);
  EXPECT_EQ(attributes.at("d").f(), 0.25f);
  EXPECT_EQ(attributes.at("s").s(), "NHWC");
  EXPECT_EQ(attributes.at("ints").ints().values_size(), 2);
  EXPECT_EQ(attributes.at("floats").floats().values(0), 1.5f);
}

// The wire's attributes are a map: a second value under one name silently replaced the first
// (`onemodel run Softmax -a axis=1 -a axis=0` ran over axis 0).
TEST(RunBuilderTest, AnAttributeGivenTwiceIsRefused) {
  RunBuilder run;
  const TensorHandle x("p1.x");
  try {
    run.Op("Softmax", {x}, {{"axis", 1}, {"axis", 0}});
    FAIL() << "a repeated attribute was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("attribute 'axis' more than once"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(run.size(), 0);  // nothing half-built is left behind
  run.Op("Softmax", {x}, {{"axis", 1}});
  EXPECT_EQ(run.size(), 1);
}

TEST(RunBuilderTest, ResultIndexesByOutput) {
  v1::RunReply reply;
  reply.add_outputs()->set_handle("a1.x");
  reply.add_outputs()->set_handle("a2.y");
  RunBuilder run;
  const RunOutput first = run.Op("Relu", {});
  const RunResult result(reply);
  EXPECT_EQ(result.size(), 2u);
  EXPECT_EQ(result[first].id(), "a1.x");
  EXPECT_EQ(result.back().id(), "a2.y");
}

}  // namespace
}  // namespace onemodel::client
