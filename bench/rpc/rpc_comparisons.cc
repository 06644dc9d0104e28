#include "bench/rpc/rpc_comparisons.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <latch>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench/rpc/in_turn.h"

namespace onemodel::bench {

void Check(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return;
  throw std::runtime_error(std::string(what) + " failed: code " +
                           std::to_string(static_cast<int>(status.error_code())) + ": " +
                           status.error_message());
}

void Ping(RpcFixture& f) {
  grpc::ClientContext ctx;
  v1::PingReply reply;
  Check(f.stub().Ping(&ctx, v1::PingRequest(), &reply), "Ping");
}

namespace {

constexpr double kGb = 1e9;
constexpr double kMicro = 1e6;
constexpr int kSmallElements = 16;
constexpr int kBatch = 10;

void Run(RpcFixture& f, const v1::RunRequest& request, v1::RunReply* reply) {
  grpc::ClientContext ctx;
  Check(f.stub().Run(&ctx, request, reply), "Run");
}

// A no_grad Run of `adds` chained Adds: a + b, then (previous output) + b.
v1::RunRequest AddRun(const SmallSession& s, int adds, bool reset_arena) {
  v1::RunRequest request;
  request.set_session_id(s.id);
  request.set_no_grad(true);
  request.set_reset_arena(reset_arena);
  for (int i = 0; i < adds; ++i) {
    v1::Operation* op = request.add_operations();
    op->set_op("Add");
    if (i == 0) {
      op->add_inputs()->set_handle(s.a);
    } else {
      op->add_inputs()->set_output(i - 1);
    }
    op->add_inputs()->set_handle(s.b);
  }
  return request;
}

// Calls each of `fns` `calls` times in turn and forgets the times (connections, pools, caches).
void WarmUp(int calls, const std::vector<std::function<void()>>& fns) {
  LatencyInTurn(1, calls, fns);
}

// ---- Tensor transfer ----------------------------------------------------------------------

// Uploads `bytes` as a FLOAT tensor [bytes / 4] in chunks; returns its handle.
std::string UploadTensor(RpcFixture& f, const std::string& session, std::span<const char> bytes,
                         int64_t chunk) {
  grpc::ClientContext ctx;
  v1::TensorInfo info;
  auto writer = f.stub().UploadTensor(&ctx, &info);
  v1::UploadTensorRequest message;
  v1::UploadHeader* header = message.mutable_header();
  header->set_session_id(session);
  header->set_data_type(onnx::TensorProto::FLOAT);
  header->add_dims(static_cast<int64_t>(bytes.size() / sizeof(float)));
  bool ok = writer->Write(message);
  for (size_t at = 0; ok && at < bytes.size(); at += static_cast<size_t>(chunk)) {
    message.set_data(bytes.data() + at, std::min(bytes.size() - at, static_cast<size_t>(chunk)));
    ok = writer->Write(message);
  }
  writer->WritesDone();
  Check(writer->Finish(), "UploadTensor");
  return info.handle();
}

// Downloads `handle`; copies its bytes to `out` when given. Returns the bytes received.
int64_t DownloadTensor(RpcFixture& f, const std::string& session, const std::string& handle,
                       char* out) {
  grpc::ClientContext ctx;
  v1::DownloadTensorRequest request;
  request.set_session_id(session);
  request.set_handle(handle);
  auto reader = f.stub().DownloadTensor(&ctx, request);
  v1::DownloadTensorReply message;
  int64_t received = 0;
  while (reader->Read(&message)) {
    if (message.part_case() != v1::DownloadTensorReply::kData) continue;
    if (out) std::memcpy(out + received, message.data().data(), message.data().size());
    received += static_cast<int64_t>(message.data().size());
  }
  Check(reader->Finish(), "DownloadTensor");
  return received;
}

void Release(RpcFixture& f, const std::string& session, const std::string& handle) {
  grpc::ClientContext ctx;
  v1::ReleaseTensorsRequest request;
  request.set_session_id(session);
  request.add_handles(handle);
  v1::ReleaseTensorsReply reply;
  Check(f.stub().ReleaseTensors(&ctx, request, &reply), "ReleaseTensors");
}

// RawStream Upload of `bytes` in chunks; returns the bytes the server counted.
int64_t RawUpload(RpcFixture& f, std::span<const char> bytes, int64_t chunk) {
  grpc::ClientContext ctx;
  raw::Ack ack;
  auto writer = f.raw().Upload(&ctx, &ack);
  raw::Chunk message;
  bool ok = true;
  for (size_t at = 0; ok && at < bytes.size(); at += static_cast<size_t>(chunk)) {
    message.set_data(bytes.data() + at, std::min(bytes.size() - at, static_cast<size_t>(chunk)));
    ok = writer->Write(message);
  }
  writer->WritesDone();
  Check(writer->Finish(), "RawStream.Upload");
  return ack.total_bytes();
}

// RawStream Download of `total` bytes; returns the bytes received.
int64_t RawDownload(RpcFixture& f, int64_t total) {
  grpc::ClientContext ctx;
  raw::Size request;
  request.set_total_bytes(total);
  auto reader = f.raw().Download(&ctx, request);
  raw::Chunk message;
  int64_t received = 0;
  while (reader->Read(&message)) received += static_cast<int64_t>(message.data().size());
  Check(reader->Finish(), "RawStream.Download");
  return received;
}

// Voluntary and involuntary context switches of every thread of this process so far.
int64_t ContextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw + usage.ru_nivcsw;
}

void ExpectBytes(int64_t got, int64_t want, std::string_view what) {
  if (got == want) return;
  throw std::runtime_error(std::string(what) + " moved " + std::to_string(got) + " bytes, not " +
                           std::to_string(want));
}

// ---- Sessions -----------------------------------------------------------------------------

// Small Adds per second: one thread per session, each calling Run back to back for about
// `window` seconds; counts every call finished until the last thread stopped.
double AddsPerSecond(RpcFixture& f, std::span<const SmallSession> sessions, double window) {
  const int n = static_cast<int>(sessions.size());
  std::latch ready(n), start(1);
  std::atomic<bool> stop{false};
  std::vector<int64_t> counts(sessions.size());
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      const v1::RunRequest request = AddRun(sessions[static_cast<size_t>(i)], 1, true);
      v1::RunReply reply;
      ready.count_down();
      start.wait();
      try {
        while (!stop.load(std::memory_order_relaxed)) {
          Run(f, request, &reply);
          ++counts[static_cast<size_t>(i)];
        }
      } catch (...) {
        std::lock_guard guard(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  ready.wait();
  const auto t0 = std::chrono::steady_clock::now();
  start.count_down();
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  stop = true;
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (error) std::rethrow_exception(error);
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  return static_cast<double>(total) / seconds;
}

}  // namespace

RpcOptions RpcOptions::Quick() {
  RpcOptions o;
  o.latency_reps = 3;
  o.latency_calls = 20;
  o.transfer_reps = 2;
  o.transfer_bytes = int64_t{16} << 20;
  o.scaling_reps = 2;
  o.scaling_window_seconds = 0.05;
  return o;
}

// ---- Fixture ------------------------------------------------------------------------------

RpcFixture::RpcFixture(const RpcOptions& options)
    : workers_(options.workers > 0
                   ? options.workers
                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
  spdlog::set_level(spdlog::level::warn);
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "";
  config.log_level = "warn";
  config.workers = workers_;  // Server takes it as given: 0 would mean no worker at all
  config.inline_max_bytes = options.inline_max_bytes;
  server_ = std::make_unique<server::Server>(config, std::vector<grpc::Service*>{&raw_service_});
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  channel_ =
      grpc::CreateCustomChannel(server_->grpc_address(), grpc::InsecureChannelCredentials(), args);
  if (!channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    throw std::runtime_error("cannot connect to the in-process server at " +
                             server_->grpc_address());
  }
  stub_ = v1::OneModel::NewStub(channel_);
  raw_ = raw::RawStream::NewStub(channel_);
}

RpcFixture::~RpcFixture() {
  raw_.reset();
  stub_.reset();
  channel_.reset();
  server_->Shutdown(std::chrono::seconds(1));
}

SmallSession RpcFixture::NewSmallSession() {
  SmallSession s;
  {
    grpc::ClientContext ctx;
    v1::CreateSessionRequest request;
    request.set_client_name("rpc_bench");
    v1::CreateSessionReply reply;
    Check(stub_->CreateSession(&ctx, request, &reply), "CreateSession");
    s.id = reply.session_id();
  }
  float values[kSmallElements];
  for (int i = 0; i < kSmallElements; ++i) values[i] = 0.5f * static_cast<float>(i);
  for (std::string* handle : {&s.a, &s.b}) {
    grpc::ClientContext ctx;
    v1::PutTensorRequest request;
    request.set_session_id(s.id);
    onnx::TensorProto* t = request.mutable_tensor();
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(kSmallElements);
    t->set_raw_data(values, sizeof values);
    v1::TensorInfo info;
    Check(stub_->PutTensor(&ctx, request, &info), "PutTensor");
    *handle = info.handle();
  }
  return s;
}

void RpcFixture::Close(const SmallSession& session) {
  grpc::ClientContext ctx;
  v1::CloseSessionRequest request;
  request.set_session_id(session.id);
  v1::CloseSessionReply reply;
  Check(stub_->CloseSession(&ctx, request, &reply), "CloseSession");
}

// ---- Comparisons --------------------------------------------------------------------------

Comparison SmallAddVsEmptyRpc(RpcFixture& f, const RpcOptions& o, std::vector<Detail>*) {
  const SmallSession s = f.NewSmallSession();
  const v1::RunRequest add = AddRun(s, 1, /*reset_arena=*/true);
  v1::RunReply reply;
  const std::vector<std::function<void()>> fns = {[&] { Run(f, add, &reply); }, [&] { Ping(f); }};
  WarmUp(o.latency_calls, fns);
  const Samples lat = LatencyInTurn(o.latency_reps, o.latency_calls, fns);
  f.Close(s);
  return {Median(lat[0]) * kMicro, Median(lat[1]) * kMicro, MedianRatio(lat[1], lat[0])};
}

Comparison Batch10Vs10Single(RpcFixture& f, const RpcOptions& o, std::vector<Detail>*) {
  const SmallSession s = f.NewSmallSession();
  const v1::RunRequest batch = AddRun(s, kBatch, /*reset_arena=*/true);
  const v1::RunRequest first = AddRun(s, 1, /*reset_arena=*/true);
  v1::RunRequest next = AddRun(s, 1, /*reset_arena=*/false);
  v1::RunReply reply;
  const std::vector<std::function<void()>> fns = {
      [&] { Run(f, batch, &reply); },
      [&] {
        Run(f, first, &reply);
        for (int i = 1; i < kBatch; ++i) {
          next.mutable_operations(0)->mutable_inputs(0)->set_handle(reply.outputs(0).handle());
          Run(f, next, &reply);
        }
      }};
  WarmUp(std::max(1, o.latency_calls / kBatch), fns);
  const Samples lat = LatencyInTurn(o.latency_reps, std::max(1, o.latency_calls / kBatch), fns);
  f.Close(s);
  return {Median(lat[0]) * kMicro, Median(lat[1]) * kMicro, MedianRatio(lat[1], lat[0])};
}

Comparison PutGetVsRawStream(RpcFixture& f, const RpcOptions& o, std::vector<Detail>* details) {
  const SmallSession s = f.NewSmallSession();
  const int64_t total = o.transfer_bytes / 4 * 4;
  std::vector<char> source(static_cast<size_t>(total)), sink(static_cast<size_t>(total));
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<char>(i * 131 + (i >> 20));

  // A round trip of each, checked (and every page touched on both sides).
  {
    const std::string handle = UploadTensor(f, s.id, source, o.chunk_bytes);
    ExpectBytes(DownloadTensor(f, s.id, handle, sink.data()), total, "DownloadTensor");
    if (std::memcmp(source.data(), sink.data(), source.size()) != 0) {
      throw std::runtime_error("DownloadTensor returned other bytes than UploadTensor sent");
    }
    Release(f, s.id, handle);
    ExpectBytes(RawUpload(f, source, o.chunk_bytes), total, "RawStream.Upload");
    ExpectBytes(RawDownload(f, total), total, "RawStream.Download");
  }

  std::vector<double> up[2], down[2];  // seconds: [0] ours, [1] raw
  const double moved = 2.0 * static_cast<double>(total);
  const Samples rate = RunInTurn(
      o.transfer_reps,
      {[&] {
         std::string handle;
         up[0].push_back(SecondsOf([&] { handle = UploadTensor(f, s.id, source, o.chunk_bytes); }));
         down[0].push_back(SecondsOf(
             [&] { ExpectBytes(DownloadTensor(f, s.id, handle, nullptr), total, "Download"); }));
         Release(f, s.id, handle);
         return moved / (up[0].back() + down[0].back()) / kGb;
       },
       [&] {
         up[1].push_back(SecondsOf(
             [&] { ExpectBytes(RawUpload(f, source, o.chunk_bytes), total, "RawStream.Upload"); }));
         down[1].push_back(
             SecondsOf([&] { ExpectBytes(RawDownload(f, total), total, "RawStream.Download"); }));
         return moved / (up[1].back() + down[1].back()) / kGb;
       },
       [&] {
         const double seconds =
             SecondsOf([&] { std::memcpy(sink.data(), source.data(), source.size()); });
         return static_cast<double>(total) / seconds / kGb;
       }});
  f.Close(s);
  if (details) {
    const auto rates = [&](const std::vector<double>& seconds) {
      std::vector<double> r;
      for (double x : seconds) r.push_back(static_cast<double>(total) / x / kGb);
      return r;
    };
    details->push_back({"UploadTensor", Median(rates(up[0])), "GB/s", "RawStream Upload",
                        MedianRatio(rates(up[0]), rates(up[1]))});
    details->push_back({"DownloadTensor", Median(rates(down[0])), "GB/s", "RawStream Download",
                        MedianRatio(rates(down[0]), rates(down[1]))});
    details->push_back({"RawStream Upload + Download", Median(rate[1]), "GB/s",
                        "memcpy of the same bytes (1 thread, payload GB/s)",
                        MedianRatio(rate[1], rate[2])});
    details->push_back({"memcpy of the same bytes (1 thread)", Median(rate[2]), "GB/s", "", 0});
  }
  return {Median(rate[0]), Median(rate[1]), MedianRatio(rate[0], rate[1])};
}

Comparison SessionsThroughputVs1(RpcFixture& f, const RpcOptions& o, std::vector<Detail>* details) {
  std::vector<SmallSession> sessions;
  for (int i = 0; i < o.scaling_sessions; ++i) sessions.push_back(f.NewSmallSession());
  const std::span<const SmallSession> all(sessions), one = all.first(1);
  AddsPerSecond(f, all, o.scaling_window_seconds / 4);  // warm-up
  AddsPerSecond(f, one, o.scaling_window_seconds / 4);
  const Samples rate =
      RunInTurn(o.scaling_reps, {[&] { return AddsPerSecond(f, all, o.scaling_window_seconds); },
                                 [&] { return AddsPerSecond(f, one, o.scaling_window_seconds); }});
  for (const SmallSession& s : sessions) f.Close(s);
  if (details) {
    details->push_back({"server worker threads", static_cast<double>(f.workers()), "", "", 0});
    details->push_back(
        {"CPU cores", static_cast<double>(std::thread::hardware_concurrency()), "", "", 0});
  }
  return {Median(rate[0]), Median(rate[1]), MedianRatio(rate[0], rate[1])};
}

std::vector<Detail> SmallAddBreakdown(RpcFixture& f, const RpcOptions& o) {
  const SmallSession s = f.NewSmallSession();
  const v1::RunRequest add = AddRun(s, 1, /*reset_arena=*/true);
  const v1::RunRequest empty = AddRun(s, 0, /*reset_arena=*/true);
  const v1::RunRequest ten = AddRun(s, kBatch, /*reset_arena=*/true);
  v1::RunReply reply;
  v1::KeepAliveRequest keep_alive;
  keep_alive.set_session_id(s.id);
  v1::ResetArenaRequest reset;
  reset.set_session_id(s.id);
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"Ping (empty RPC)", [&] { Ping(f); }},
      {"KeepAlive (session lookup, on the gRPC thread)",
       [&] {
         grpc::ClientContext ctx;
         v1::KeepAliveReply r;
         Check(f.stub().KeepAlive(&ctx, keep_alive, &r), "KeepAlive");
       }},
      {"ResetArena (a task on the session's strand)",
       [&] {
         grpc::ClientContext ctx;
         v1::ResetArenaReply r;
         Check(f.stub().ResetArena(&ctx, reset, &r), "ResetArena");
       }},
      {"Run, no operations, reset_arena", [&] { Run(f, empty, &reply); }},
      {"Run, one Add [16] + [16], reset_arena", [&] { Run(f, add, &reply); }},
      {"Run, 10 chained Adds, reset_arena", [&] { Run(f, ten, &reply); }}};
  std::vector<std::function<void()>> fns;
  for (const auto& call : calls) fns.push_back(call.second);
  WarmUp(o.latency_calls, fns);
  const Samples lat = LatencyInTurn(o.latency_reps, o.latency_calls, fns);
  std::vector<Detail> details;
  for (size_t i = 0; i < calls.size(); ++i) {
    details.push_back({calls[i].first, Median(lat[i]) * kMicro, "us", i ? calls[0].first : "",
                       i ? MedianRatio(lat[i], lat[0]) : 0});
  }
  // Thread wake-ups are what a round trip costs most on a small VM: count them per call.
  for (const auto& [name, fn] : calls) {
    const int64_t before = ContextSwitches();
    for (int c = 0; c < o.latency_calls; ++c) fn();
    details.push_back({name + ": context switches per call (whole process)",
                       static_cast<double>(ContextSwitches() - before) / o.latency_calls, "", "",
                       0});
  }
  f.Close(s);
  return details;
}

const std::vector<RpcComparison>& RpcComparisons() {
  static const std::vector<RpcComparison> list = {
      {"rpc_small_add_vs_empty_rpc", "us", "Run: Add [16]+[16] by handle, no_grad, reset_arena",
       "Ping (empty RPC)", 1 / 1.5, "Add latency <= 1.5 x Ping", SmallAddVsEmptyRpc},
      {"rpc_batch10_vs_10_single", "us", "1 Run of 10 chained Adds", "10 Runs of 1 Add each", 5,
       "batch >= 5 x faster", Batch10Vs10Single},
      {"rpc_put_get_256m_vs_raw_stream", "GB/s", "UploadTensor + DownloadTensor (1 MiB chunks)",
       "RawStream Upload + Download, same bytes", 0.8, ">= 0.8 of the raw stream",
       PutGetVsRawStream},
      {"sessions_32_throughput_vs_1", "Add/s", "32 sessions, 1 thread each, small Adds",
       "1 session, 1 thread", 1.6, "32 sessions >= 1.6 x 1", SessionsThroughputVs1},
      {"train_step_rpc_vs_inprocess", "us",
       "MLP 20-64-3 SGD step on 512 samples: one Run (forward + CrossEntropy, Grad, SGD)",
       "2 x the same step in-process + 3 x Ping (same run)", 1,
       "RPC step <= 2 x in-process + 3 Pings", TrainStepVsInProcess},
  };
  return list;
}

}  // namespace onemodel::bench
