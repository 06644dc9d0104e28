// The flags of onemodel-load: defaults, values, and the usage errors for flags that do not fit.
#include "client/load/load_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace onemodel::load {
namespace {

using ::testing::HasSubstr;

// Parses `args` (without the program name) into `options`.
void Parse(std::vector<std::string> args, LoadOptions& options) {
  CLI::App app("test");
  AddLoadFlags(app, options);
  args.insert(args.begin(), "onemodel-load");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

// The message of the CLI::ParseError that parsing `args` throws ("" when none).
std::string ParseError(const std::vector<std::string>& args) {
  LoadOptions options;
  try {
    Parse(args, options);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(LoadOptionsTest, DefaultsAreFourSessionsOfMlpForTenSeconds) {
  LoadOptions options;
  Parse({}, options);
  EXPECT_EQ(options.sessions, 4);
  EXPECT_EQ(options.step, StepKind::kMlp);
  EXPECT_EQ(options.requests, 0);
  EXPECT_EQ(options.duration_s, 10);
  EXPECT_EQ(options.warmup_s, 2);
  EXPECT_FALSE(options.check);
  EXPECT_EQ(options.progress, 0);
  EXPECT_EQ(options.connection.server, "127.0.0.1:50051");
}

TEST(LoadOptionsTest, ParsesEveryFlag) {
  LoadOptions options;
  Parse({"--server", "db:7", "--sessions",     "32",     "--kernels",  "exact", "--step",   "chain",
         "--size",   "100",  "--chain-length", "5",      "--requests", "1000",  "--warmup", "1.5",
         "--json",   "-",    "--progress",     "--check"},
        options);
  EXPECT_EQ(options.connection.server, "db:7");
  EXPECT_EQ(options.sessions, 32);
  EXPECT_EQ(options.kernels, v1::KERNEL_CHOICE_EXACT);
  EXPECT_EQ(options.step, StepKind::kChain);
  EXPECT_EQ(options.size, 100);
  EXPECT_EQ(options.chain_length, 5);
  EXPECT_EQ(options.requests, 1000);
  EXPECT_EQ(options.warmup_s, 1.5);
  EXPECT_EQ(options.json_path, "-");
  EXPECT_GT(options.progress, 0);
  EXPECT_TRUE(options.check);
}

TEST(LoadOptionsTest, MlpSizesAndNoProgress) {
  LoadOptions options;
  Parse({"--step", "mlp", "--batch", "8", "--width", "64", "--duration", "3", "--no-progress"},
        options);
  EXPECT_EQ(options.batch, 8);
  EXPECT_EQ(options.width, 64);
  EXPECT_EQ(options.duration_s, 3);
  EXPECT_LT(options.progress, 0);
}

TEST(LoadOptionsTest, RequestsAndDurationTogetherAreRefused) {
  EXPECT_THAT(ParseError({"--requests", "10", "--duration", "5"}),
              HasSubstr("--requests and --duration both end the run: give only one"));
}

TEST(LoadOptionsTest, ChainSizesWithTheMlpStepAreRefused) {
  EXPECT_THAT(ParseError({"--size", "10"}), HasSubstr("add --step chain"));
  EXPECT_THAT(ParseError({"--step", "mlp", "--chain-length", "3"}), HasSubstr("add --step chain"));
}

TEST(LoadOptionsTest, MlpSizesWithTheChainStepAreRefused) {
  EXPECT_THAT(ParseError({"--step", "chain", "--width", "10"}),
              HasSubstr("--batch and --width size the mlp step"));
}

TEST(LoadOptionsTest, OpenLoopRateSweepTransferAndCsv) {
  LoadOptions closed;
  Parse({}, closed);
  EXPECT_THAT(PhaseRates(closed), ::testing::ElementsAre(0));
  LoadOptions rate;
  Parse({"--rate", "250", "--step", "transfer", "--transfer-bytes", "4096", "--csv", "s.csv"},
        rate);
  EXPECT_EQ(rate.rate, 250);
  EXPECT_EQ(rate.step, StepKind::kTransfer);
  EXPECT_EQ(rate.transfer_bytes, 4096);
  EXPECT_EQ(rate.csv_path, "s.csv");
  EXPECT_THAT(PhaseRates(rate), ::testing::ElementsAre(250));
  LoadOptions sweep;
  Parse({"--sweep", "10:1000:3", "--p99-bound-ms", "25"}, sweep);
  EXPECT_THAT(PhaseRates(sweep), ::testing::ElementsAre(10, 100, 1000));
  EXPECT_EQ(sweep.p99_bound_ms, 25);
}

TEST(LoadOptionsTest, OpenLoopFlagsThatDoNotFitAreRefused) {
  EXPECT_THAT(ParseError({"--rate", "10", "--sweep", "1:10:2"}),
              HasSubstr("--rate and --sweep both set the arrival rate"));
  EXPECT_THAT(ParseError({"--rate", "10", "--requests", "100"}),
              HasSubstr("an open loop (--rate, --sweep) runs for --duration"));
  EXPECT_THAT(ParseError({"--p99-bound-ms", "5"}), HasSubstr("add --sweep"));
  EXPECT_THAT(ParseError({"--sweep", "10:1:3"}), HasSubstr("FROM < TO"));
  EXPECT_THAT(ParseError({"--rate", "0"}), HasSubstr("--rate"));
  EXPECT_THAT(ParseError({"--transfer-bytes", "64"}), HasSubstr("add --step transfer"));
  EXPECT_THAT(ParseError({"--step", "transfer", "--transfer-bytes", "6"}),
              HasSubstr("multiple of 4"));
  EXPECT_THAT(ParseError({"--json", "-", "--csv", "-"}), HasSubstr("both write to stdout"));
}

TEST(LoadOptionsTest, CheckWithoutWarmupIsRefused) {
  EXPECT_THAT(ParseError({"--check", "--warmup", "0"}),
              HasSubstr("--check needs --warmup above 0"));
  EXPECT_EQ(ParseError({"--warmup", "0"}), "");
}

TEST(LoadOptionsTest, OutOfRangeValuesAreRefused) {
  EXPECT_THAT(ParseError({"--sessions", "0"}), HasSubstr("--sessions"));
  EXPECT_THAT(ParseError({"--requests", "0"}), HasSubstr("--requests"));
  EXPECT_THAT(ParseError({"--duration", "-1"}), HasSubstr("--duration"));
  EXPECT_THAT(ParseError({"--warmup", "-1"}), HasSubstr("--warmup"));
  EXPECT_THAT(ParseError({"--step", "conv"}), HasSubstr("--step"));
  EXPECT_THAT(ParseError({"--kernels", "turbo"}), HasSubstr("--kernels"));
}

TEST(LoadOptionsTest, StepNamesAndRequestsPerStep) {
  EXPECT_EQ(StepName(StepKind::kMlp), "mlp");
  EXPECT_EQ(StepName(StepKind::kChain), "chain");
  EXPECT_EQ(StepName(StepKind::kTransfer), "transfer");
  EXPECT_EQ(RequestsPerStep(StepKind::kMlp), 2);
  EXPECT_EQ(RequestsPerStep(StepKind::kChain), 1);
  EXPECT_EQ(RequestsPerStep(StepKind::kTransfer), 2);
}

}  // namespace
}  // namespace onemodel::load
