#include "tests/core/ops/torch_bridge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel::torch_bridge {

std::string Hex(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  return buf;
}

void WriteTensor(std::ostream& out, const char* tag, const Tensor& t) {
  out << tag << " " << t.rank();
  for (int32_t e : t.shape().extents()) out << " " << e;
  tensor_test::ForEachIndex(t.shape(),
                            [&](std::span<const int64_t> i) { out << " " << Hex(t.At<float>(i)); });
  out << "\n";
}

std::vector<float> ValuesOf(const Tensor& t) {
  std::vector<float> v;
  tensor_test::ForEachIndex(t.shape(),
                            [&](std::span<const int64_t> i) { v.push_back(t.At<float>(i)); });
  return v;
}

std::vector<std::vector<std::string>> RunTorch(const std::string& input) {
  // Per test and process: CTest runs the tests of a binary in parallel.
  const std::string stem = ::testing::TempDir() + "/torch_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid());
  const std::string in_path = stem + "_cases.txt", out_path = stem + "_results.txt";
  std::ofstream(in_path) << input;
  const std::string cmd = "/usr/bin/python3 " ONEMODEL_TORCH_SCRIPT " " + in_path + " " + out_path;
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    ADD_FAILURE() << "`" << cmd << "` failed (exit " << rc
                  << "); PyTorch comes from Debian's python3-torch: run scripts/install-deps";
    return {};
  }
  std::vector<std::vector<std::string>> lines;
  std::ifstream results(out_path);
  for (std::string line; std::getline(results, line);) {
    std::istringstream ss(line);
    lines.emplace_back(std::istream_iterator<std::string>(ss),
                       std::istream_iterator<std::string>());
  }
  return lines;
}

std::vector<float> ParseValues(const std::vector<std::string>& tokens) {
  std::vector<float> v;
  for (size_t i = 2; i < tokens.size(); ++i) v.push_back(std::strtof(tokens[i].c_str(), nullptr));
  return v;
}

}  // namespace onemodel::torch_bridge
