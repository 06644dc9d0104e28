// The service (RPC) benchmarks: onemodeld's RPCs against baselines on the same in-process
// server, measured in turn in one run (DESIGN.md section 8). Each comparison is a function
// returning {ours, baseline, ratio}, so rpc_bench and any other driver (a JSON report) can call
// it; RpcComparisons() lists them with their names, units and goals.
//
//   rpc_small_add_vs_empty_rpc      Run (one Add of two [16] floats, no_grad, reset_arena) vs Ping
//   rpc_batch10_vs_10_single        one Run of 10 chained Adds vs 10 Runs of one Add each
//   rpc_put_get_256m_vs_raw_stream  UploadTensor + DownloadTensor of 256 MiB vs RawStream
//                                   Upload + Download of the same bytes (raw_stream.proto)
//   sessions_32_throughput_vs_1     small Adds per second: 32 sessions on 32 threads vs 1
//   train_step_rpc_vs_inprocess     an MLP's SGD step through the server (1 Run) vs 2 x the
//                                   same step in-process + 3 x Ping (train_step.cc)
//
// The client uses plain generated stubs over one channel to a Server started in this process
// on 127.0.0.1:0 (metrics off, log level warn), with RawStreamService served beside it.
//
//   RpcFixture fixture(RpcOptions{});
//   for (const RpcComparison& c : RpcComparisons()) {
//     Comparison r = c.run(fixture, options, nullptr);   // r.ratio > 1: ours is better
//   }
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/rpc/raw_stream_service.h"
#include "onemodel/v1/onemodel.grpc.pb.h"
#include "raw_stream.grpc.pb.h"
#include "server/server.h"

namespace onemodel::bench {

struct RpcOptions {
  int latency_reps = 31;    // repetitions of each latency comparison
  int latency_calls = 100;  // calls of each side per repetition, in turn
  int transfer_reps = 9;    // Put+Get round trips of each side
  int64_t transfer_bytes = int64_t{256} << 20;
  int64_t chunk_bytes = int64_t{1} << 20;  // upload chunks (downloads use the server default)
  int scaling_reps = 9;                    // windows of each side
  double scaling_window_seconds = 0.25;
  int scaling_sessions = 32;
  int workers = 0;  // server worker threads; 0: one per core
  // The server's --inline-max-bytes (0: no request runs on gRPC's thread).
  int64_t inline_max_bytes = server::ServerConfig{}.inline_max_bytes;

  // A smoke run of a few seconds: few repetitions, 16 MiB transfers, short windows.
  static RpcOptions Quick();
};

// One comparison's figures. `ours` and `baseline` are medians in the comparison's unit;
// `ratio` is the median over repetitions of how many times better ours is (> 1: better):
// baseline / ours for times, ours / baseline for rates.
struct Comparison {
  double ours = 0;
  double baseline = 0;
  double ratio = 0;
};

// A supporting figure printed beside the comparisons (a timing breakdown).
struct Detail {
  std::string name;
  double value = 0;  // median
  std::string unit;
  std::string versus;  // what `ratio` divides by ("" for none)
  double ratio = 0;    // median over repetitions of value / versus's value
};

// A session with two [16] float tensors in the pool, the inputs of the small Adds.
struct SmallSession {
  std::string id;
  std::string a, b;  // handles
};

// The server under test (with the raw-stream baseline beside it) and a client channel to it.
class RpcFixture {
 public:
  // Starts the server; throws std::runtime_error when it cannot.
  explicit RpcFixture(const RpcOptions& options);
  ~RpcFixture();
  RpcFixture(const RpcFixture&) = delete;
  RpcFixture& operator=(const RpcFixture&) = delete;

  v1::OneModel::Stub& stub() { return *stub_; }
  raw::RawStream::Stub& raw() { return *raw_; }
  server::Server& server() { return *server_; }
  int workers() const { return workers_; }

  // Creates a session and puts its two small tensors (throws on any RPC failure).
  SmallSession NewSmallSession();
  // Closes a session made by NewSmallSession.
  void Close(const SmallSession& session);

 private:
  int workers_;
  RawStreamService raw_service_;
  std::unique_ptr<server::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::OneModel::Stub> stub_;
  std::unique_ptr<raw::RawStream::Stub> raw_;
};

// Throws std::runtime_error naming the call unless `status` is OK.
void Check(const grpc::Status& status, std::string_view what);
// One empty RPC (Ping); throws as Check.
void Ping(RpcFixture& f);

// Signature shared by the comparisons; `details` (may be null) receives supporting figures.
using ComparisonFn = Comparison (*)(RpcFixture& fixture, const RpcOptions& options,
                                    std::vector<Detail>* details);

// Latency (us): one Run of one Add (by handle, no_grad, reset_arena) vs one Ping.
Comparison SmallAddVsEmptyRpc(RpcFixture& fixture, const RpcOptions& options,
                              std::vector<Detail>* details);
// Latency (us per 10 Adds): one Run of 10 chained Adds vs 10 Runs of one Add (chained by handle).
Comparison Batch10Vs10Single(RpcFixture& fixture, const RpcOptions& options,
                             std::vector<Detail>* details);
// Throughput (GB/s, bytes up + down): UploadTensor then DownloadTensor of one float tensor of
// options.transfer_bytes vs RawStream Upload then Download of as many bytes.
Comparison PutGetVsRawStream(RpcFixture& fixture, const RpcOptions& options,
                             std::vector<Detail>* details);
// Throughput (Adds/s): options.scaling_sessions sessions, one thread each, vs 1 session.
Comparison SessionsThroughputVs1(RpcFixture& fixture, const RpcOptions& options,
                                 std::vector<Detail>* details);
// Latency (us): the 20-64-3 MLP's SGD training step on 512 samples through the server (one
// Run with Grad and SGD) vs the budget 2 x the same step in this process + 3 x Ping
// (train_step.cc; the budget counted the three round trips the step took before Grad).
Comparison TrainStepVsInProcess(RpcFixture& fixture, const RpcOptions& options,
                                std::vector<Detail>* details);
// Where the small Add's time goes, each call kind in turn with Ping: KeepAlive (session lookup
// on the gRPC thread), ResetArena (a hop to the session's strand), Run with no operations, Run
// with one Add. Latencies (us) and their ratios to Ping.
std::vector<Detail> SmallAddBreakdown(RpcFixture& fixture, const RpcOptions& options);

struct RpcComparison {
  const char* name;           // stable name in reports: "rpc_small_add_vs_empty_rpc"
  const char* unit;           // of ours and baseline: "us", "GB/s", "Add/s"
  const char* ours_name;      // what ours measures
  const char* baseline_name;  // what the baseline measures
  double goal;                // the ratio wanted (0: none)
  const char* goal_text;      // the goal as the issue states it
  ComparisonFn run;
};

// The comparisons of the issue, in report order.
const std::vector<RpcComparison>& RpcComparisons();

}  // namespace onemodel::bench
