// The soak test (ctest load_soak): onemodeld under LOAD_SOAK_SESSIONS sessions of the mlp step
// for LOAD_SOAK_SECONDS after LOAD_SOAK_WARMUP seconds of warm-up, with `onemodel-load --check`.
// It passes only if no request failed, the pool's rented bytes did not grow after warm-up and
// no arena grew after warm-up; tests/load/CMakeLists.txt sets the numbers (shorter under
// sanitizers).
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tests/client/command.h"
#include "tests/common/parse_json.h"
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
  const nlohmann::json report = ParseJson(result.out);
  ASSERT_TRUE(report.is_object()) << result.out;
  EXPECT_EQ(report.at("errors").at("total").get<double>(), 0);
  EXPECT_GT(report.at("requests").get<double>(), 0);
  EXPECT_EQ(report.at("flatness").at("rented_bytes_delta").get<double>(), 0);
  EXPECT_EQ(report.at("flatness").at("arena_growth_events").get<double>(), 0);
  EXPECT_TRUE(report.at("check").at("passed").get<bool>());
  std::cout << result.err;  // the table, for the CI log
  EXPECT_TRUE(server.Stop().ok());
}

}  // namespace
}  // namespace onemodel::testing
