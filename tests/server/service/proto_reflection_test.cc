// Protobuf's reflection (compiled into Debian's libprotobuf) on our messages' map fields, which
// RequestCharge::MessageBytes uses. In the TSan build these crashed until proto/CMakeLists.txt
// gave every translation unit the library's MapFieldBase layout (proto/protobuf_tsan_abi.h).
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <string>

#include "onemodel/v1/onemodel.pb.h"

namespace onemodel::server {
namespace {

// A Run of one Add whose operation carries `attributes` attributes.
v1::RunRequest RunWithAttributes(int attributes) {
  v1::RunRequest run;
  v1::Operation& op = *run.add_operations();
  op.set_op("Add");
  for (int i = 0; i < attributes; ++i) {
    (*op.mutable_attributes())["a" + std::to_string(i)].set_i(i);
  }
  return run;
}

TEST(ProtoReflectionTest, SpaceUsedCountsAMapFieldsEntries) {
  const v1::RunRequest few = RunWithAttributes(1), many = RunWithAttributes(64);
  EXPECT_GT(many.SpaceUsedLong(), few.SpaceUsedLong() + 64 * sizeof(v1::Attribute) / 2);
}

TEST(ProtoReflectionTest, ReflectionReadsAndSwapsAMapField) {
  v1::RunRequest a = RunWithAttributes(3), b = RunWithAttributes(5);
  const google::protobuf::Reflection* reflection = a.GetReflection();
  const google::protobuf::FieldDescriptor* operations =
      a.GetDescriptor()->FindFieldByName("operations");
  ASSERT_NE(operations, nullptr);
  reflection->SwapElements(&a, operations, 0, 0);
  a.Swap(&b);
  EXPECT_EQ(a.operations(0).attributes().size(), 5u);
  EXPECT_EQ(b.operations(0).attributes().size(), 3u);
  const google::protobuf::Message& op = a.operations(0);
  const google::protobuf::FieldDescriptor* map = op.GetDescriptor()->FindFieldByName("attributes");
  EXPECT_EQ(op.GetReflection()->FieldSize(op, map), 5);
  EXPECT_NE(a.DebugString().find("a4"), std::string::npos);
}

}  // namespace
}  // namespace onemodel::server
