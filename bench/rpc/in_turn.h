// Sampling in turn (DESIGN.md section 8): the things compared run alternately in one process,
// and a figure is a median over many repetitions, so drift and other load on the machine fall
// on all of them alike and cancel in their ratio.
//
//   Samples s = RunInTurn(15, {[&] { return RateOfA(); }, [&] { return RateOfB(); }});
//   double a_over_b = MedianRatio(s[0], s[1]);
//   Samples lat = LatencyInTurn(31, 200, {[&] { CallA(); }, [&] { CallB(); }});
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

#include "bench/machine_peaks.h"  // SecondsOf
#include "bench/report.h"

namespace onemodel::bench {

// samples[f][r]: what function f gave in repetition r.
using Samples = std::vector<std::vector<double>>;

// Runs each of `fns` once per repetition and keeps what it returns. The starting function
// rotates and the direction flips every repetition, so each follows each other about equally.
inline Samples RunInTurn(int reps, const std::vector<std::function<double()>>& fns) {
  const size_t n = fns.size();
  Samples samples(n, std::vector<double>(static_cast<size_t>(reps)));
  for (size_t r = 0; r < static_cast<size_t>(reps); ++r) {
    for (size_t k = 0; k < n; ++k) {
      const size_t position = (r / 2 + k) % n;
      const size_t f = r % 2 == 0 ? position : n - 1 - position;
      samples[f][r] = fns[f]();
    }
  }
  return samples;
}

// samples[f][r]: the median seconds of one call of fns[f] in repetition r. A repetition calls
// the functions in turn, one call each, `calls` times over (A B A B ..., B A B A ... in odd
// repetitions), so neighbouring calls of different functions see the same machine.
inline Samples LatencyInTurn(int reps, int calls, const std::vector<std::function<void()>>& fns) {
  const size_t n = fns.size();
  Samples samples(n, std::vector<double>(static_cast<size_t>(reps)));
  std::vector<std::vector<double>> seconds(n, std::vector<double>(static_cast<size_t>(calls)));
  for (size_t r = 0; r < static_cast<size_t>(reps); ++r) {
    for (size_t c = 0; c < static_cast<size_t>(calls); ++c) {
      for (size_t k = 0; k < n; ++k) {
        const size_t f = r % 2 == 0 ? k : n - 1 - k;
        seconds[f][c] = SecondsOf(fns[f]);
      }
    }
    for (size_t f = 0; f < n; ++f) samples[f][r] = Median(seconds[f]);
  }
  return samples;
}

}  // namespace onemodel::bench
