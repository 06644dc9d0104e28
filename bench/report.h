// What every benchmark report needs: medians of repetitions, the median of per-repetition
// ratios (so drift shared by both sides cancels), machine facts read from /proc, and the JSON
// of the --json output (written by nlohmann-json).
//
//   double r = MedianRatio(ours, baseline);          // > 1: ours took longer (for times)
//   std::string cpu = ReadLine("/proc/cpuinfo", "model name");
//   WriteJsonFile(path, {{"machine", Object(facts)}, {"rows", rows}});
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onemodel::bench {

// The median of `v` (0 when empty).
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The median over repetitions of a[r] / b[r].
inline double MedianRatio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r(std::min(a.size(), b.size()));
  for (size_t i = 0; i < r.size(); ++i) r[i] = a[i] / b[i];
  return Median(r);
}

// The first line of `path` (key empty), or the value of the first "key : value" line; "?".
inline std::string ReadLine(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (key.empty()) return line;
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) return line;
      return line.substr(std::min(line.size(), line.find_first_not_of(' ', colon + 1)));
    }
  }
  return "?";
}

// A report's JSON; its members keep the order they were added in.
using Json = nlohmann::ordered_json;

// `value` as JSON text, `indent` spaces a level (-1: one line). Bytes that are not UTF-8 (a
// name from the system) become U+FFFD instead of failing the report.
inline std::string JsonText(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// `pairs` as one JSON object, in order ("machine": the facts of ReadLine and friends).
inline Json Object(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json object = Json::object();
  for (const auto& [key, value] : pairs) object[key] = value;
  return object;
}

// Writes `report` to `path`, indented, with a final newline; false when it cannot.
inline bool WriteJsonFile(const std::string& path, const Json& report) {
  std::ofstream out(path);
  out << JsonText(report, 2) << '\n';
  out.close();
  return static_cast<bool>(out);
}

}  // namespace onemodel::bench
