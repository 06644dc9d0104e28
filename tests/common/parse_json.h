// JSON in tests: the reports of onemodel-load and other programs, parsed with nlohmann::json
// (Debian's nlohmann-json3-dev; protobuf's Struct is not used because its Map, compiled into
// libprotobuf without ThreadSanitizer, crashes when a TSan build reads it).
//
//   const nlohmann::json report = ParseJson(result.out);
//   EXPECT_EQ(report.at("errors").at("total").get<double>(), 0);
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace onemodel::testing {

// `text` parsed as JSON; when it is not valid JSON, the test fails and the result is null.
inline nlohmann::json ParseJson(const std::string& text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    ADD_FAILURE() << "not valid JSON:\n" << text;
    return nullptr;
  }
  return value;
}

}  // namespace onemodel::testing
