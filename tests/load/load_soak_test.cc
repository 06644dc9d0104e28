// The soak test (ctest load_soak): onemodeld under LOAD_SOAK_SESSIONS sessions of the mlp step
// for LOAD_SOAK_SECONDS after LOAD_SOAK_WARMUP seconds of warm-up, with `onemodel-load --check`.
// It passes only if no request failed, the pool's rented bytes did not grow after warm-up and
// no arena grew after warm-up; tests/load/CMakeLists.txt sets the numbers (shorter under
// sanitizers).
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tests/client/command.h"
#include "tests/common/server_process.h"

namespace onemodel::testing {
namespace {

TEST(LoadSoakTest, SessionsRunWithoutErrorsAndFlatMemory) {
  ServerProcess server;
  const CommandResult result = RunCommand(
      {ONEMODEL_LOAD_PATH, "--server", server.grpc_address(), "--sessions",
       std::to_string(LOAD_SOAK_SESSIONS), "--duration", std::to_string(LOAD_SOAK_SECONDS),
       "--warmup", std::to_string(LOAD_SOAK_WARMUP), "--check", "--json", "-"});
  EXPECT_EQ(result.exit_code, 0) << "onemodel-load --check failed; its report:\n" << result.err;
  google::protobuf::Value report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(result.out, &report).ok()) << result.out;
  const auto& fields = report.struct_value().fields();
  const auto& flatness = fields.at("flatness").struct_value().fields();
  EXPECT_EQ(fields.at("errors").struct_value().fields().at("total").number_value(), 0);
  EXPECT_GT(fields.at("requests").number_value(), 0);
  EXPECT_EQ(flatness.at("rented_bytes_delta").number_value(), 0);
  EXPECT_EQ(flatness.at("arena_growth_events").number_value(), 0);
  EXPECT_TRUE(fields.at("check").struct_value().fields().at("passed").bool_value());
  std::cout << result.err;  // the table, for the CI log
  EXPECT_TRUE(server.Stop().ok());
}

}  // namespace
}  // namespace onemodel::testing
