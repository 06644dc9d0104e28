// What every benchmark report needs: medians of repetitions, the median of per-repetition
// ratios (so drift shared by both sides cancels), machine facts read from /proc, and JSON
// strings for the --json output.
//
//   double r = MedianRatio(ours, baseline);          // > 1: ours took longer (for times)
//   std::string cpu = ReadLine("/proc/cpuinfo", "model name");
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <string>
#include <string_view>
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

// `s` as a JSON string literal (quotes and backslashes escaped, control characters blanked).
inline std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += static_cast<unsigned char>(ch) < 0x20 ? ' ' : ch;
  }
  return out + "\"";
}

}  // namespace onemodel::bench
