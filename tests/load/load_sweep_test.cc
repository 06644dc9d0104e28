// The sweep (ctest load_sweep): onemodel-load --sweep against a real onemodeld for about ten
// seconds, from a rate any server holds to one no server on a test machine can, so the knee
// must be found between them; its JSON and CSV parse and agree; and onemodel-load-plot draws
// them into a PNG (skipped only where Debian's python3-matplotlib is not installed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/client/command.h"
#include "tests/common/parse_json.h"
#include "tests/common/server_process.h"

namespace onemodel::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// `line` split at commas.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

class LoadSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("load-sweep-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(LoadSweepTest, FindsTheKneeWritesJsonAndCsvAndPlotsThem) {
  ServerProcess server;
  const fs::path json_path = dir_ / "sweep.json";
  const fs::path csv_path = dir_ / "sweep.csv";
  // 50, 792, 12599 and 200000 requests/s, 2 s each after 1 s of warm-up.
  const CommandResult load = RunCommand({ONEMODEL_LOAD_PATH,
                                         "--server",
                                         server.grpc_address(),
                                         "--step",
                                         "chain",
                                         "--size",
                                         "1024",
                                         "--sessions",
                                         "2",
                                         "--sweep",
                                         "50:200000:4",
                                         "--duration",
                                         "2",
                                         "--warmup",
                                         "1",
                                         "--p99-bound-ms",
                                         "100",
                                         "--json",
                                         json_path.string(),
                                         "--csv",
                                         csv_path.string()});
  ASSERT_EQ(load.exit_code, 0) << load.out << load.err;
  std::cout << load.out;  // the table, for the CI log

  const nlohmann::json report = ParseJson(ReadFile(json_path));
  ASSERT_TRUE(report.is_object());
  const nlohmann::json& rates = report.at("rates");
  ASSERT_EQ(rates.size(), 4);
  const nlohmann::json& knee = report.at("knee");
  EXPECT_TRUE(knee.at("found").get<bool>()) << load.out;
  EXPECT_TRUE(knee.at("limited").get<bool>()) << load.out;
  EXPECT_LT(knee.at("rate_per_s").get<double>(), 200000);
  EXPECT_EQ(report.at("errors").at("total").get<double>(), 0);
  double steps = 0;
  for (const nlohmann::json& rate : rates) {
    EXPECT_EQ(rate.at("steps").get<double>() + rate.at("unsent_steps").get<double>(),
              rate.at("due_steps").get<double>());
    steps += rate.at("steps").get<double>();
  }
  EXPECT_EQ(steps, report.at("steps").get<double>());
  EXPECT_GT(rates.back().at("unsent_steps").get<double>(), 0);  // the overload

  // The CSV: a header, then one line per second of each rate, all steps counted.
  std::stringstream csv(ReadFile(csv_path));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  const std::vector<std::string> header = Cells(line);
  ASSERT_EQ(header.size(), 12) << line;
  EXPECT_EQ(header[0], "phase");
  EXPECT_EQ(header[8], "p99_ms");
  EXPECT_EQ(header[11], "arena_reserved_bytes");
  std::vector<double> phase_seconds(rates.size());
  int server_rows = 0;
  double csv_steps = 0;
  while (std::getline(csv, line)) {
    const std::vector<std::string> cells = Cells(line);
    ASSERT_EQ(cells.size(), 12) << line;
    const size_t phase = std::stoul(cells[0]);
    ASSERT_LT(phase, rates.size()) << line;
    const double rate = rates[phase].at("rate_per_s").get<double>();
    EXPECT_NEAR(std::stod(cells[1]), rate, 1e-5 * rate) << line;  // 6 digits in the CSV
    phase_seconds[phase] += std::stod(cells[3]);
    csv_steps += std::stod(cells[5]) * std::stod(cells[3]);  // steps/s times seconds
    if (!cells[9].empty()) ++server_rows;
  }
  for (size_t i = 0; i < rates.size(); ++i) {
    EXPECT_NEAR(phase_seconds[i], rates[i].at("seconds").get<double>(), 2e-3) << "rate " << i;
  }
  EXPECT_GE(server_rows, 4);
  EXPECT_NEAR(csv_steps, steps, 1 + 1e-3 * steps);

  if (RunCommand({"/usr/bin/python3", "-c", "import matplotlib"}).exit_code != 0) {
    GTEST_SKIP() << "python3-matplotlib is not installed (scripts/install-deps installs it)";
  }
  const fs::path png = dir_ / "sweep.png";
  const CommandResult plot =
      RunCommand({"/usr/bin/python3", ONEMODEL_LOAD_PLOT_PATH, "--csv", csv_path.string(), "--json",
                  json_path.string(), "-o", png.string()});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  const std::string image = ReadFile(png);
  EXPECT_EQ(image.substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_GT(image.size(), 20000);  // four panels, not an empty canvas
  EXPECT_TRUE(server.Stop().ok());
}

TEST(LoadPlotTest, InputThatIsNotOnemodelLoadsIsRefused) {
  const fs::path bad = fs::temp_directory_path() / ("not-load-" + std::to_string(getpid()));
  std::ofstream(bad) << "{\"tool\": \"other\"}";
  const CommandResult plot = RunCommand(
      {"/usr/bin/python3", ONEMODEL_LOAD_PLOT_PATH, "--json", bad.string(), "-o", "x.png"});
  fs::remove(bad);
  EXPECT_EQ(plot.exit_code, 2);
  EXPECT_NE(plot.err.find("is not an onemodel-load --json report"), std::string::npos) << plot.err;
}

}  // namespace
}  // namespace onemodel::testing
