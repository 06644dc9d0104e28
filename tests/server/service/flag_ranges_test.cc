// Every numeric flag of onemodeld has a range and must be finite: a table over all of them
// (NumericFlagRanges) tries values outside, non-numbers and overflows, each of which must exit
// 2 with a message naming the flag and its range; --help must list no numeric flag without one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "server/config.h"

namespace onemodel::server {
namespace {

// ParseConfig on `args` (after the program name); `err` gets what it printed on stderr.
int Parse(std::vector<std::string> args, std::string* err = nullptr) {
  args.insert(args.begin(), "onemodeld");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ServerConfig config;
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  const int code = ParseConfig(static_cast<int>(argv.size()), argv.data(), &config);
  const std::string text = testing::internal::GetCapturedStderr();
  testing::internal::GetCapturedStdout();
  if (err) *err = text;
  return code;
}

// `v` as a flag value: whole numbers in full, others with every digit.
std::string Text(double v) {
  char text[40];
  std::snprintf(text, sizeof text, v == std::floor(v) && std::fabs(v) < 1e18 ? "%.0f" : "%.17g", v);
  return text;
}

// Values outside `r`, or no number at all.
std::vector<std::string> BadValues(const FlagRange& r) {
  std::vector<std::string> bad = {"nan",
                                  "-nan",
                                  "inf",
                                  "-inf",
                                  "1e400",
                                  "-1e400",
                                  "abc",
                                  "",
                                  "99999999999999999999999",
                                  "-99999999999999999999999",
                                  "0x10"};
  if (r.integer) {
    bad.push_back(Text(r.min - 1));
    bad.push_back(Text(r.max + 1));
    bad.push_back("1.5");
  } else {
    bad.push_back(Text(r.min - std::max(0.001, std::fabs(r.min) / 2)));
    bad.push_back(Text(r.max * 2));
    bad.push_back("1e300");
  }
  return bad;
}

TEST(FlagRanges, EveryNumericFlagRefusesValuesOutsideItsRange) {
  const std::vector<FlagRange> ranges = NumericFlagRanges();
  ASSERT_GE(ranges.size(), 15u);
  for (const FlagRange& r : ranges) {
    for (const std::string& value : BadValues(r)) {
      std::string err;
      EXPECT_EQ(Parse({r.flag, value}, &err), 2) << r.flag << " " << value;
      EXPECT_NE(err.find(r.flag), std::string::npos) << r.flag << " " << value << ": " << err;
      if (value.empty()) continue;  // CLI11 reports a missing value before any check
      EXPECT_NE(err.find("from " + Text(r.min) + " to " + Text(r.max)), std::string::npos)
          << r.flag << " " << value << ": " << err;
    }
  }
}

TEST(FlagRanges, EveryFlagAtItsBoundsIsAccepted) {
  std::vector<std::string> at_min, at_max;
  for (const FlagRange& r : NumericFlagRanges()) {
    at_min.insert(at_min.end(), {r.flag, Text(r.min)});
    at_max.insert(at_max.end(), {r.flag, Text(r.max)});
  }
  std::string err;
  EXPECT_EQ(Parse(at_min, &err), -1) << err;
  EXPECT_EQ(Parse(at_max, &err), -1) << err;
}

TEST(FlagRanges, EveryFlagInHelpIsTextOrHasARange) {
  testing::internal::CaptureStdout();
  std::vector<std::string> args = {"onemodeld", "--help"};
  std::vector<char*> argv = {args[0].data(), args[1].data()};
  ServerConfig config;
  ASSERT_EQ(ParseConfig(2, argv.data(), &config), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  std::set<std::string> ranged;
  for (const FlagRange& r : NumericFlagRanges()) ranged.insert(r.flag);
  // Flags whose value is text, each checked for its own form.
  const std::set<std::string> text = {
      "--help",          "--listen",          "--metrics-listen", "--ready-file",
      "--log-level",     "--log-format",      "--tls-cert",       "--tls-key",
      "--tls-client-ca", "--auth-token-file", "--status-page"};
  const std::regex flag("--[a-z][a-z-]*");
  int seen = 0;
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator();
       ++it, ++seen) {
    const std::string name = it->str();
    EXPECT_TRUE(ranged.count(name) || text.count(name))
        << name << " is in --help but has no range: declare it with Flags::Number or Flags::Size";
  }
  EXPECT_GT(seen, 20);
}

TEST(FlagRanges, TheValuesOfIssue19ExitTwoNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--idle-timeout", "nan"}, "--idle-timeout"},
      {{"--idle-timeout", "1e300", "--max-idle-timeout", "1e300"}, "--idle-timeout"},
      {{"--max-idle-timeout", "1e17"}, "--max-idle-timeout"},
      {{"--session-memory-default", "-5"}, "--session-memory-default"},
      {{"--session-memory-default", "0"}, "--session-memory-default"},
      {{"--memory-limit", "-1"}, "--memory-limit"},
      {{"--pool-max-idle-bytes", "-1"}, "--pool-max-idle-bytes"},
      {{"--pool-max-idle-bytes", "99999999TiB"}, "--pool-max-idle-bytes"},
      {{"--listen", "127.0.0.1:99999"}, "--listen"},
  };
  for (const auto& [args, flag] : cases) {
    std::string err;
    EXPECT_EQ(Parse(args, &err), 2) << args[0] << " " << args[1];
    EXPECT_NE(err.find(flag), std::string::npos) << err;
  }
}

TEST(FlagRanges, AddressesNeedAPortFromZeroTo65535) {
  for (const char* bad :
       {"127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1", "127.0.0.1:-1", "127.0.0.1:http",
        ":50051", "127.0.0.1:", "", "::1:50051", "http://127.0.0.1:50051", "local host:1"}) {
    std::string err;
    EXPECT_EQ(Parse({"--listen", bad}, &err), 2) << bad;
    EXPECT_NE(err.find("--listen"), std::string::npos) << bad << ": " << err;
    if (*bad) {  // an empty --metrics-listen turns metrics off
      EXPECT_EQ(Parse({"--metrics-listen", bad}), 2) << bad;
    }
  }
  for (const char* good : {"127.0.0.1:0", "0.0.0.0:65535", "[::1]:50051", "localhost:1"}) {
    std::string err;
    EXPECT_EQ(Parse({"--listen", good, "--metrics-listen", good}, &err), -1) << good << err;
  }
  EXPECT_EQ(Parse({"--metrics-listen", "off"}), -1);
  EXPECT_EQ(Parse({"--metrics-listen", ""}), -1);
}

TEST(FlagRanges, EnvironmentVariablesAreCheckedTheSameWay) {
  setenv("ONEMODEL_IDLE_TIMEOUT", "nan", 1);
  std::string err;
  EXPECT_EQ(Parse({}, &err), 2);
  EXPECT_NE(err.find("--idle-timeout"), std::string::npos) << err;
  unsetenv("ONEMODEL_IDLE_TIMEOUT");
}

}  // namespace
}  // namespace onemodel::server
