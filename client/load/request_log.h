// RequestLog: what one session's thread saw during one phase of a load run: each request's
// latency and status code, and the steps that completed. Merged across threads at the end.
//
//   RequestLog log;
//   RunResult out = log.Time([&] { return session.Run(run); });   // rethrows client::Error
//   ++log.steps;
//   log.requests();  log.errors();  log.latency.PercentileMicros(99);
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <numeric>

#include "client/lib/error.h"
#include "client/load/latency_histogram.h"
#include "proto/status_code_name.h"

namespace onemodel::load {

struct RequestLog {
  LatencyHistogram latency;                         // every request, failed ones included
  std::array<int64_t, kStatusCodeCount> by_code{};  // requests by gRPC status code, OK first
  int64_t steps = 0;                                // steps whose requests all succeeded

  // Calls `call` (one request), logging its latency and status; rethrows a client::Error.
  template <typename Call>
  auto Time(Call&& call) -> decltype(call()) {
    const auto start = std::chrono::steady_clock::now();
    try {
      auto result = call();
      Log(start, grpc::StatusCode::OK);
      return result;
    } catch (const client::Error& e) {
      Log(start, e.code());
      throw;
    }
  }

  int64_t requests() const { return std::accumulate(by_code.begin(), by_code.end(), int64_t{0}); }
  int64_t errors() const { return requests() - by_code[grpc::StatusCode::OK]; }

  // Adds everything `other` logged.
  void Merge(const RequestLog& other) {
    latency.Merge(other.latency);
    for (size_t i = 0; i < by_code.size(); ++i) by_code[i] += other.by_code[i];
    steps += other.steps;
  }

 private:
  void Log(std::chrono::steady_clock::time_point start, grpc::StatusCode code) {
    latency.Record(std::chrono::steady_clock::now() - start);
    const int index = code >= 0 && code < kStatusCodeCount ? code : grpc::StatusCode::UNKNOWN;
    ++by_code[index];
  }
};

}  // namespace onemodel::load
