// The service's method list (ONEMODEL_FOR_EACH_METHOD, server/rpc/service.h) against the proto: one
// row per RPC, in the proto's order, so RpcStats, GetStats and /metrics count every RPC under
// its own name.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onemodel/v1/onemodel.grpc.pb.h"
#include "server/rpc/service.h"

namespace onemodel::server {
namespace {

TEST(MethodListTest, NamesEveryRpcOfTheProtoInItsOrder) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::OneModel::service_full_name());
  ASSERT_NE(service, nullptr);
  std::vector<std::string> rpcs;
  for (int i = 0; i < service->method_count(); ++i) rpcs.push_back(service->method(i)->name());
  EXPECT_EQ(MethodNames(), rpcs);
}

TEST(MethodListTest, MethodIndexesItsName) {
  const std::vector<std::string> names = MethodNames();
  EXPECT_EQ(names[static_cast<size_t>(Method::kPing)], "Ping");
  EXPECT_EQ(names[static_cast<size_t>(Method::kRun)], "Run");
  EXPECT_EQ(names[static_cast<size_t>(Method::kListOperations)], "ListOperations");
  EXPECT_EQ(names.size(), static_cast<size_t>(Method::kListOperations) + 1);
}

}  // namespace
}  // namespace onemodel::server
