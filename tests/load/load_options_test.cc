// The flags of onemodel-load: defaults, values, and the usage errors for flags that do not fit.
#include "client/load/load_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace onemodel::load {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

TEST(LoadOptionsTest, NonFiniteAndHugeNumbersAreRefusedWithReadableMessages) {
  for (const char* value : {"nan", "inf", "-inf", "1e300", "1e400", "1000001", "0", "-1", "x"}) {
    EXPECT_THAT(ParseError({"--rate", value}),
                HasSubstr("--rate: must be a positive number of requests per second up to "
                          "1000000, not '" +
                          std::string(value) + "'"));
  }
  for (const char* value : {"nan", "inf", "1e12", "86401", "0"}) {
    EXPECT_THAT(ParseError({"--duration", value}),
                HasSubstr("--duration: must be a positive number of seconds up to 86400"));
  }
  for (const char* value : {"nan", "inf", "1e12", "-1"}) {
    EXPECT_THAT(ParseError({"--warmup", value}),
                HasSubstr("--warmup: must be 0 or a positive number of seconds up to 86400"));
  }
  EXPECT_THAT(ParseError({"--sweep", "1e15:1e300:2"}), HasSubstr("at most 1000000 requests/s"));
  EXPECT_THAT(ParseError({"--sweep", "10:100:2", "--p99-bound-ms", "nan"}),
              HasSubstr("--p99-bound-ms: must be a positive number of milliseconds"));
  EXPECT_THAT(ParseError({"--requests", "0"}),
              HasSubstr("--requests: must be a number of requests from 1 to 1000000000000"));
  EXPECT_THAT(ParseError({"--sessions", "0"}),
              HasSubstr("--sessions: must be a number of sessions from 1 to 4096, not '0'"));
  // No message spells out the largest double.
  EXPECT_THAT(ParseError({"--p99-bound-ms", "0"}), Not(HasSubstr("179769")));
  LoadOptions options;
  Parse({"--rate", "1e6", "--duration", "86400", "--warmup", "0"}, options);
  EXPECT_EQ(options.rate, 1e6);
  EXPECT_EQ(options.duration_s, 86400);
}

TEST(LoadOptionsTest, TransferBytesStopAtTheServersLargestBuffer) {
  LoadOptions options;
  Parse({"--step", "transfer", "--transfer-bytes", "2147483644"}, options);
  EXPECT_EQ(options.transfer_bytes, 2147483644);
  EXPECT_THAT(ParseError({"--step", "transfer", "--transfer-bytes", "2147483648"}),
              HasSubstr("must be a number of bytes from 4 to 2147483644"));
}

TEST(LoadOptionsTest, HelpStatesTheRangesAndWhatWarmupZeroMeans) {
  CLI::App app("test");
  LoadOptions options;
  AddLoadFlags(app, options);
  const std::string help = app.help();
  EXPECT_THAT(help, HasSubstr("STEPS (2 to 100)"));
  EXPECT_THAT(help, HasSubstr("0: none; above 0, each session runs at least one"));
  EXPECT_THAT(help, HasSubstr("0<R<=1000000"));
  EXPECT_THAT(help, HasSubstr("2147483644, the server's largest single buffer"));
  EXPECT_THAT(help, Not(HasSubstr("POSITIVE")));
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
