// RequestLog: what one session's thread saw during one phase of a load run: each request's
// latency (all together and by RPC) and status code, each step's latency, and the steps that
// completed. Merged across threads at the end.
//
//   RequestLog log;
//   log.TimeStep(clock.Now(), [&] {                     // open loop: the intended send time
//     RunResult out = log.Time(Rpc::kRun, [&] { return session.Run(run); });  // rethrows
//     log.Time(Rpc::kBackward, [&] { return session.Backward(...); });
//   });
//   log.requests();  log.errors();  log.latency.PercentileMicros(99);
//   log.by_rpc[RpcIndex(Rpc::kRun)].PercentileMicros(99);  log.step_latency.count();
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>

#include "client/lib/error.h"
#include "client/load/latency_histogram.h"
#include "client/load/load_clock.h"
#include "proto/status_code_name.h"

namespace onemodel::load {

// The RPCs the steps make, each timed on its own.
enum class Rpc { kRun, kBackward, kPut, kGet };
inline constexpr int kRpcCount = 4;
inline constexpr std::array<std::string_view, kRpcCount> kRpcNames = {"Run", "Backward", "Put",
                                                                      "Get"};
constexpr int RpcIndex(Rpc rpc) { return static_cast<int>(rpc); }

struct RequestLog {
  LatencyHistogram latency;                          // every request, failed ones included
  std::array<LatencyHistogram, kRpcCount> by_rpc{};  // the same requests, by RPC
  LatencyHistogram step_latency;         // steps whose requests all succeeded, start to end
  LatencyHistogram failed_step_latency;  // steps a failed request ended, start to the failure
  std::array<int64_t, kStatusCodeCount> by_code{};   // requests by gRPC status code, OK first
  int64_t steps = 0;                                 // steps whose requests all succeeded
  LoadClock* clock = &SteadyLoadClock();             // what the latencies are read from

  // Calls `call` (one request of `rpc`), logging its latency and status; rethrows a
  // client::Error. The latency counts from the step's start for its first request, else from
  // now.
  template <typename Call>
  auto Time(Rpc rpc, Call&& call) -> decltype(call()) {
    const LoadClock::TimePoint start = next_start_.value_or(clock->Now());
    next_start_.reset();
    try {
      auto result = call();
      Log(rpc, start, grpc::StatusCode::OK);
      return result;
    } catch (const client::Error& e) {
      Log(rpc, start, e.code());
      throw;
    }
  }

  // Runs `step` (the requests of one step) as if it started at `start`: the step's latency and
  // its first request's latency count from there, so that in an open loop a step sent late
  // (every session was busy) includes the wait (no coordinated omission). A client::Error
  // ends the step, which then does not count in `steps`. Returns the step's latency.
  template <typename Step>
  std::chrono::nanoseconds TimeStep(LoadClock::TimePoint start, Step&& step) {
    next_start_ = start;
    bool ok = true;
    try {
      step();
      ++steps;
    } catch (const client::Error&) {
      ok = false;  // logged by the request; the next step starts afresh (it resets the arena)
    }
    next_start_.reset();
    const std::chrono::nanoseconds elapsed = clock->Now() - start;
    (ok ? step_latency : failed_step_latency).Record(elapsed);
    return elapsed;
  }

  int64_t requests() const { return std::accumulate(by_code.begin(), by_code.end(), int64_t{0}); }
  int64_t errors() const { return requests() - by_code[grpc::StatusCode::OK]; }

  // Adds everything `other` logged.
  void Merge(const RequestLog& other) {
    latency.Merge(other.latency);
    for (int i = 0; i < kRpcCount; ++i) by_rpc[i].Merge(other.by_rpc[i]);
    step_latency.Merge(other.step_latency);
    failed_step_latency.Merge(other.failed_step_latency);
    for (size_t i = 0; i < by_code.size(); ++i) by_code[i] += other.by_code[i];
    steps += other.steps;
  }

 private:
  void Log(Rpc rpc, LoadClock::TimePoint start, grpc::StatusCode code) {
    const auto elapsed = clock->Now() - start;
    latency.Record(elapsed);
    by_rpc[RpcIndex(rpc)].Record(elapsed);
    const int index = code >= 0 && code < kStatusCodeCount ? code : grpc::StatusCode::UNKNOWN;
    ++by_code[index];
  }

  std::optional<LoadClock::TimePoint> next_start_;  // set by TimeStep until the first request
};

}  // namespace onemodel::load
