// The `onemodel` CLI against a real server: every command, files in and out, exit codes.
#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "client/cli/npy.h"
#include "client/cli/tensor_file.h"
#include "tests/client/command.h"
#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::TensorData;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class CliTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    std::string dir = (std::filesystem::temp_directory_path() / "onemodel-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs the CLI with --server pointing at the test server.
  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {ONEMODEL_CLI_PATH, "--server", server().grpc_address()});
    return RunCommand(args);
  }
  // Runs the CLI and expects success; returns stdout's first line.
  std::string CliLine(const std::vector<std::string>& args) {
    const CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, result.out.find('\n'));
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string WriteFile(const std::string& name, const TensorData& data) {
    cli::WriteTensorFile(Path(name), data);
    return Path(name);
  }

  std::string dir_;
};

TEST_F(CliTest, HealthPrintsServingAndExitsZero) {
  const CommandResult result = Cli({"health"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "SERVING\n");
}

TEST_F(CliTest, HealthOfAnUnreachableServerExitsOne) {
  const CommandResult result =
      RunCommand({ONEMODEL_CLI_PATH, "health", "--server", "127.0.0.1:1", "--timeout-ms", "2000"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(result.err, HasSubstr("hint: could not reach onemodeld at '127.0.0.1:1': is it "
                                    "running there"));
}

TEST_F(CliTest, ServerComesFromTheEnvironment) {
  const CommandResult result =
      RunCommand({ONEMODEL_CLI_PATH, "health"}, {"ONEMODEL_SERVER=" + server().grpc_address()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(CliTest, SessionCreateAndClose) {
  const std::string id = CliLine({"session", "create", "--kernels", "exact"});
  ASSERT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;
  EXPECT_EQ(client().AttachSession(id).KeepAlive().server_instance_id(), server().instance_id());
  EXPECT_THAT(CliLine({"session", "close", id}), StartsWith("released_buffers=0 released_bytes="));
  const CommandResult again = Cli({"session", "close", id});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("NOT_FOUND"));
}

TEST_F(CliTest, ResetArenaTrims) {
  client::Session session = NewSession();
  const client::TensorHandle one = session.Put<float>(std::vector<float>{1}, {1});
  client::RunBuilder run;  // two results of almost 1 MiB: two arena chunks
  const client::RunOutput wide = run.Op("Expand", {one}, {{"shape", client::Ints{261120}}});
  run.Op("Neg", {wide});
  run.Op("Neg", {wide});
  session.Run(run);
  const std::vector<std::string> reset = {"reset-arena", "--session", session.id()};
  EXPECT_THAT(CliLine(reset), StartsWith("stale_handles=3 arena_chunks=2 "));
  const CommandResult keep_alone = Cli(Join(reset, {"--keep-bytes", "1MiB"}));
  EXPECT_EQ(keep_alone.exit_code, 2) << "--keep-bytes without --trim would do nothing";
  EXPECT_THAT(keep_alone.err, HasSubstr("--trim"));
  EXPECT_EQ(CliLine(Join(reset, {"--trim", "--keep-bytes", "1MiB"})),
            "stale_handles=0 arena_chunks=1 arena_reserved_bytes=1048576");
  EXPECT_EQ(CliLine(Join(reset, {"--trim"})),
            "stale_handles=0 arena_chunks=0 arena_reserved_bytes=0");
}

TEST_F(CliTest, PutRunGetRoundTripThroughNpy) {
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};
  const std::string x_file = WriteFile("x.npy", TensorData::From<float>(x, {2, 3}));
  const std::string session = CliLine({"session", "create"});
  const std::string handle = CliLine({"put", x_file, "--session", session});
  const std::string squared =
      CliLine({"run", "Mul", "--session", session, "--input", handle, "--input", x_file});
  CliLine({"get", squared, "--session", session, "--out", Path("y.npy")});
  const TensorData y = cli::ReadTensorFile(Path("y.npy"));
  EXPECT_EQ(y.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{1, 4, 9, 16, 25, 36}));

  CliLine({"run", "Sum", "--session", session, "-i", handle, "--attr", "axes=[1]", "--attr",
           "keepdims=1", "--out", Path("s.npy")});
  const TensorData sums = cli::ReadTensorFile(Path("s.npy"));
  EXPECT_EQ(sums.dims, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(sums.ToVector<float>(), (std::vector<float>{2, -5}));

  const std::string zeros =
      WriteFile("zeros.npy", TensorData::From<float>(std::vector<float>(6), {2, 3}));
  EXPECT_EQ(CliLine({"put", zeros, "--session", session, "--target", handle}), handle);
  CliLine({"get", handle, "--session", session, "--out", Path("z.npy")});
  EXPECT_EQ(cli::ReadTensorFile(Path("z.npy")).ToVector<float>(), std::vector<float>(6, 0.0f));
  CliLine({"session", "close", session});
}

TEST_F(CliTest, PutWithKeepSessionPrintsTheSessionFirstAndReadsPb) {
  onnx::TensorProto proto;  // typed fields, as other tools write them
  proto.set_data_type(onnx::TensorProto::INT64);
  proto.add_dims(3);
  for (const int64_t v : {7, -8, 9}) proto.add_int64_data(v);
  std::ofstream(Path("x.pb"), std::ios::binary) << proto.SerializeAsString();

  const CommandResult put = Cli({"put", Path("x.pb"), "--keep-session"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  std::istringstream lines(put.out);
  std::string session, handle;
  std::getline(lines, session);
  std::getline(lines, handle);
  CliLine({"get", handle, "--session", session, "--out", Path("y.pb")});
  EXPECT_EQ(cli::ReadTensorFile(Path("y.pb")).ToVector<int64_t>(),
            (std::vector<int64_t>{7, -8, 9}));
  EXPECT_THAT(CliLine({"describe", handle, "--session", session}), HasSubstr(handle));
  EXPECT_THAT(CliLine({"session", "close", session}), StartsWith("released_buffers=1 "));
}

TEST_F(CliTest, PutOrRunWithoutASessionIsAUsageError) {
  const int64_t created = client().Stats().sessions().created();
  const std::string x_file =
      WriteFile("x.npy", TensorData::From<float>(std::vector<float>{1}, {1}));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"put", x_file}, {"run", "Neg", "-i", x_file}}) {
    const CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 2) << args[0];
    EXPECT_EQ(result.out, "") << args[0] << ": no handle of a session about to close";
    EXPECT_THAT(result.err, HasSubstr("needs --session ID")) << args[0];
    EXPECT_THAT(result.err, HasSubstr("--keep-session")) << args[0];
  }
  EXPECT_EQ(client().Stats().sessions().created(), created) << "no session was opened";
  // run -o keeps the output itself, so a throwaway session is fine there.
  const CommandResult saved = Cli({"run", "Neg", "-i", x_file, "-o", Path("y.npy")});
  EXPECT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_EQ(saved.out, "") << "the handle would name a session that is already closed";
  EXPECT_EQ(cli::ReadTensorFile(Path("y.npy")).ToVector<float>(), std::vector<float>{-1});
}

TEST_F(CliTest, GetWithoutAFilePrintsTheTensorLikeNumpy) {
  const std::string session = CliLine({"session", "create"});
  const std::string x = WriteFile(
      "x.npy", TensorData::From<float>(std::vector<float>{1, -2, 3.5, -4, 5, -6}, {2, 3}));
  const std::string handle = CliLine({"put", x, "--session", session});
  const CommandResult small = Cli({"get", handle, "--session", session});
  EXPECT_EQ(small.exit_code, 0) << small.err;
  EXPECT_EQ(small.out, "[[ 1.  -2.   3.5]\n [-4.   5.  -6. ]]\n") << "as numpy prints it";

  std::vector<int64_t> values(3000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i);
  const std::string big = WriteFile("big.npy", TensorData::From<int64_t>(values, {30, 100}));
  const CommandResult summarized =
      Cli({"get", CliLine({"put", big, "--session", session}), "--session", session});
  EXPECT_EQ(summarized.exit_code, 0) << summarized.err;
  EXPECT_EQ(summarized.out,
            "[[   0    1    2 ...   97   98   99]\n"
            " [ 100  101  102 ...  197  198  199]\n"
            " [ 200  201  202 ...  297  298  299]\n"
            " ...\n"
            " [2700 2701 2702 ... 2797 2798 2799]\n"
            " [2800 2801 2802 ... 2897 2898 2899]\n"
            " [2900 2901 2902 ... 2997 2998 2999]]\n");
  CliLine({"session", "close", session});
}

TEST_F(CliTest, DescribePrintsAReadableTable) {
  const std::string session = CliLine({"session", "create"});
  const std::string x =
      WriteFile("x.npy", TensorData::From<float>(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}));
  const std::string handle = CliLine({"put", x, "--session", session, "--requires-grad"});
  const CommandResult result = Cli({"describe", handle, "--session", session});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  for (const std::string& line :
       {"handle         " + handle, std::string("dtype          FLOAT"),
        std::string("shape          [2, 3]"), std::string("strides        [3, 1] elements"),
        std::string("placement      pool"), std::string("requires_grad  true"),
        std::string("grad_fn        leaf")}) {
    EXPECT_THAT(result.out, HasSubstr(line + "\n")) << result.out;
  }
  EXPECT_THAT(result.out, Not(HasSubstr("data_type:"))) << "not protobuf text";
  CliLine({"session", "close", session});
}

TEST_F(CliTest, OpsListsTheServersOperations) {
  const CommandResult table = Cli({"ops"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, StartsWith("NAME "));
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\nSoftmax +X +axis=-1, scale=1 +yes +")))
      << table.out;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\nDetach +X +no +")));
  for (const v1::OperationSpec& op : client().ListOperations()) {
    EXPECT_THAT(table.out, HasSubstr("\n" + op.name() + " ")) << op.name();
  }

  const CommandResult one = Cli({"ops", "Slice"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, StartsWith("Slice(X)\n"));
  EXPECT_TRUE(std::regex_search(one.out, std::regex("start +int +required")));
  EXPECT_TRUE(std::regex_search(one.out, std::regex("step +int +default 1")));

  const CommandResult typo = Cli({"ops", "Softmx"});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_THAT(typo.err, HasSubstr("did you mean 'Softmax'?"));
}

TEST_F(CliTest, BackwardReleaseAndResetArena) {
  const std::string session = CliLine({"session", "create"});
  const std::string x =
      WriteFile("x.npy", TensorData::From<float>(std::vector<float>{1, 2, 3}, {3}));
  const std::string handle = CliLine({"put", x, "--session", session, "--requires-grad"});
  const std::string squared =
      CliLine({"run", "Mul", "--session", session, "-i", handle, "-i", handle});
  const std::string sum = CliLine({"run", "Sum", "--session", session, "-i", squared});
  const std::string grad = CliLine({"backward", sum, "-i", handle, "--session", session});
  CliLine({"get", grad, "--session", session, "-o", Path("g.npy")});
  EXPECT_EQ(cli::ReadTensorFile(Path("g.npy")).ToVector<float>(), (std::vector<float>{2, 4, 6}));

  EXPECT_EQ(CliLine({"release", handle, "--session", session}), "released=1");
  const CommandResult again = Cli({"release", handle, "--session", session});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("NOT_FOUND"));
  EXPECT_EQ(again.out, "") << "a failed release prints no count";
  EXPECT_THAT(CliLine({"reset-arena", "--session", session}), StartsWith("stale_handles=3 "))
      << "the product, the sum and the gradient were in the arena";
  const CommandResult stale = Cli({"get", grad, "--session", session});
  EXPECT_EQ(stale.exit_code, 1);
  CliLine({"session", "close", session});
}

TEST_F(CliTest, StatsWatchShowsAViewPerIntervalUntilCount) {
  const CommandResult result = Cli({"stats", "--watch", "--count", "3", "--interval-ms", "100"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  size_t views = 0;
  for (size_t at = 0; (at = result.out.find("server instance ", at)) != std::string::npos; ++at) {
    ++views;
  }
  EXPECT_EQ(views, 3u) << result.out;
  EXPECT_THAT(result.out, Not(HasSubstr("\033["))) << "no terminal control codes into a pipe";
}

TEST_F(CliTest, StatsWatchEndsCleanlyOnCtrlC) {
  // The shell starts the watch in the background, waits for its first view, sends SIGINT.
  // --count bounds the run should SIGINT be ignored (as a background job inherits it).
  const std::string out = Path("watch.txt");
  const std::string script =
      std::string(ONEMODEL_CLI_PATH) + " --server " + server().grpc_address() +
      " stats --watch --interval-ms 100 --count 600 > " + out + " 2>&1 & pid=$!; " +
      "while ! grep -q 'server instance' " + out + " && kill -0 $pid 2>/dev/null; do " +
      "sleep 0.05; done; kill -INT $pid; wait $pid; echo exit=$?";
  const CommandResult result = RunCommand({"/bin/sh", "-c", script});
  EXPECT_EQ(result.out, "exit=0\n") << result.err;
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t views = 0;
  for (size_t at = 0; (at = text.find("server instance ", at)) != std::string::npos; ++at) ++views;
  EXPECT_GE(views, 1u);
  EXPECT_LT(views, 600u) << "it ran until --count, not until Ctrl-C";
}

TEST_F(CliTest, UsageErrorsExitTwoAndHelpSaysSo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"stats", "--no-such-flag"},
        {"get"},
        {"no-such-command"},
        {"stats", "--count", "2"},
        {"release", "--session", "x"},
        {"run", "Neg", "-a", "no-value", "--session", "x"}}) {
    const CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 2) << args[0] << " " << result.err;
  }
  // Each says what was wrong: --count 0 quoted a 300-digit bound, a port past 65535 wrapped
  // around (99999 dialled 34463) and an empty address printed gRPC's resolver errors.
  const CommandResult zero = Cli({"stats", "--watch", "--count", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.err, HasSubstr("must be a whole number of views, at least 1 (leave --count "
                                  "out to watch until Ctrl-C); got '0'"));
  for (const std::string server : {"127.0.0.1:99999", "", "127.0.0.1", "127.0.0.1:0", ":50051",
                                   "http://localhost:50051", "::1:50051", "local host:1"}) {
    const CommandResult bad = RunCommand({ONEMODEL_CLI_PATH, "--server", server, "health"});
    EXPECT_EQ(bad.exit_code, 2) << server << ": " << bad.err;
    EXPECT_THAT(bad.err, HasSubstr("--server: must be host:port with a port from 1 to 65535"));
    EXPECT_THAT(bad.err, Not(HasSubstr("dns_resolver")));
  }
  // Addresses only: a host name would go through c-ares, whose resolver leaks 10 bytes that
  // LeakSanitizer reports at the CLI's exit in the asan preset.
  for (const std::string server : {"[::1]:1", "127.0.0.1:65535", "unix:/tmp/none.sock"}) {
    const CommandResult fine =
        RunCommand({ONEMODEL_CLI_PATH, "--server", server, "health", "--timeout-ms", "200"});
    EXPECT_EQ(fine.exit_code, 1) << server << ": " << fine.err;  // dialled, nobody there
  }
  const CommandResult help = RunCommand({ONEMODEL_CLI_PATH, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Exit status: 0 success; 1 the command failed"));
  EXPECT_THAT(help.out, HasSubstr("2 usage error"));
  for (const char* command : {"ops", "backward", "release", "reset-arena"}) {
    EXPECT_TRUE(std::regex_search(help.out, std::regex(std::string("\n +") + command + " ")))
        << command;
  }
}

TEST_F(CliTest, ScriptsStartHelpInstallsAndBuildsNothing) {
  // Without the early exit, --help ran scripts/install-deps (apt, npm) and a release build
  // (minutes) before onemodeld printed its help. The PATH holds only what printing help needs.
  std::filesystem::create_directory(Path("bin"));
  for (const char* tool : {"dirname", "cat"}) {
    std::filesystem::create_symlink(std::string("/usr/bin/") + tool, Path("bin/") + tool);
  }
  const CommandResult result = RunCommand(
      {"/bin/bash", ONEMODEL_SOURCE_DIR "/scripts/start", "--help"}, {"PATH=" + Path("bin")});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, StartsWith("Usage: scripts/start [ONEMODELD FLAGS...]"));
}

TEST_F(CliTest, StatsJsonIsTheStatsMessage) {
  const CommandResult result = Cli({"stats", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  v1::Stats stats;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(result.out, &stats).ok()) << result.out;
  EXPECT_EQ(stats.server_instance_id(), server().instance_id());
  EXPECT_THAT(result.out, HasSubstr("\"rented_bytes\""));
}

TEST_F(CliTest, StatsTableShowsPoolSessionsAndRpcs) {
  client::Session session = NewSession();
  const CommandResult result = Cli({"stats", "--session", session.id()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("server instance " + server().instance_id()));
  EXPECT_THAT(result.out, HasSubstr("buffers rented"));
  EXPECT_THAT(result.out, HasSubstr("open"));
  EXPECT_THAT(result.out, HasSubstr(session.id() + " (reference)"));
  EXPECT_THAT(result.out, HasSubstr("CreateSession"));
}

TEST_F(CliTest, ProgressBarsOnlyWhenAskedOrOnATerminal) {
  const int64_t count = int64_t{2} << 20;  // 8 MiB of floats
  const std::string big =
      WriteFile("big.npy", TensorData::From<float>(std::vector<float>(count, 0.5f), {count}));
  const std::string session = CliLine({"session", "create"});
  const CommandResult quiet = Cli({"put", big, "--session", session});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const CommandResult shown = Cli({"--progress", "put", big, "--session", session});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.err, HasSubstr("100%"));
  EXPECT_THAT(shown.err, HasSubstr("8.0/8.0 MiB"));
  CliLine({"session", "close", session});
}

TEST_F(CliTest, FailuresExitOneWithTheServerMessage) {
  const std::string session = CliLine({"session", "create"});
  const CommandResult result =
      Cli({"get", "p1.nothing", "--session", session, "--out", Path("y.npy")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(result.err, HasSubstr("p1.nothing"));
  CliLine({"session", "close", session});
}

TEST_F(CliTest, UnreadableTensorFilesAreReported) {
  const std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n";
  std::ofstream(Path("fortran.npy"), std::ios::binary)
      << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(header.size()) << '\0' << header
      << std::string(4, '\0');
  const CommandResult result = Cli({"put", Path("fortran.npy"), "--keep-session"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("Fortran"));
  // A missing file fails the command (exit 1) the same way for put as for run's inputs.
  const std::string missing = Path("missing.npy");
  for (const auto& args : {std::vector<std::string>{"put", missing, "--keep-session"},
                           {"run", "Neg", "-i", missing, "-o", Path("y.npy")}}) {
    const CommandResult absent = Cli(args);
    EXPECT_EQ(absent.exit_code, 1) << args[0] << ": " << absent.err;
    EXPECT_THAT(absent.err, HasSubstr("'" + missing + "': cannot open for reading")) << args[0];
  }
  // An empty .pb (or another message) holds no tensor; a .pb's own faults name the file.
  std::ofstream(Path("empty.pb"), std::ios::binary).flush();
  const CommandResult empty = Cli({"put", Path("empty.pb"), "--keep-session"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("'" + Path("empty.pb") +
                                   "': holds no tensor: its data_type "
                                   "is UNDEFINED"));
  onnx::TensorProto both;
  both.set_data_type(onnx::TensorProto::FLOAT);
  both.add_dims(1);
  both.set_raw_data(std::string(4, '\0'));
  both.add_float_data(2.0f);
  std::ofstream out(Path("both.pb"), std::ios::binary);
  ASSERT_TRUE(both.SerializeToOstream(&out));
  out.close();
  const CommandResult twice = Cli({"put", Path("both.pb"), "--keep-session"});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_THAT(twice.err, HasSubstr("'" + Path("both.pb") +
                                   "': tensor has both raw_data and "
                                   "float_data"));
}

TEST(CliAuthTest, TheTokenFileAuthorizesCalls) {
  const std::string token_file =
      (std::filesystem::temp_directory_path() / ("onemodel-cli-token-" + std::to_string(getpid())))
          .string();
  std::ofstream(token_file) << "t0ken\n";
  ServerProcess server({"--auth-token-file", token_file});
  const CommandResult denied =
      RunCommand({ONEMODEL_CLI_PATH, "--server", server.grpc_address(), "session", "create"});
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_THAT(denied.err, HasSubstr("UNAUTHENTICATED"));
  const CommandResult allowed = RunCommand({ONEMODEL_CLI_PATH, "--server", server.grpc_address(),
                                            "--token-file", token_file, "session", "create"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_TRUE(server.Stop().ok());
  std::filesystem::remove(token_file);
}

}  // namespace
}  // namespace onemodel::testing
