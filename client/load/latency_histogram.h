// LatencyHistogram: request latencies in fixed memory (about 1.6% relative precision), merged
// across threads, with the percentiles a load report shows.
//
//   LatencyHistogram h;
//   h.Record(std::chrono::microseconds(850));
//   h.Merge(other_thread_histogram);
//   double p99_us = h.PercentileMicros(99.0);
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace onemodel::load {

class LatencyHistogram {
 public:
  // Values below this many nanoseconds have a bucket each; above, each power of two is split
  // into kSubBuckets buckets.
  static constexpr int kSubBuckets = 64;
  static constexpr int kExactNanos = 2 * kSubBuckets;
  // Latencies from 0 to 2^40 ns (about 18 minutes); longer ones count in the last bucket.
  static constexpr int kMaxExponent = 40;
  static constexpr int kBuckets = kExactNanos + (kMaxExponent - 7) * kSubBuckets;

  // Adds one latency (negative values count as 0).
  void Record(std::chrono::nanoseconds latency);
  // Adds every latency `other` holds.
  void Merge(const LatencyHistogram& other);

  int64_t count() const { return count_; }
  // Mean, smallest and largest latency in microseconds (0 when empty).
  double MeanMicros() const;
  double MinMicros() const { return count_ ? static_cast<double>(min_nanos_) / 1e3 : 0; }
  double MaxMicros() const { return static_cast<double>(max_nanos_) / 1e3; }
  // The latency that `percent` percent of the requests did not exceed (0 < percent <= 100), in
  // microseconds: the upper edge of its bucket, capped at the largest latency; 0 when empty.
  double PercentileMicros(double percent) const;

  // The bucket holding `nanos`, and the largest value that bucket holds.
  static int BucketOf(int64_t nanos);
  static int64_t BucketUpperNanos(int bucket);

 private:
  std::array<int64_t, kBuckets> counts_{};
  int64_t count_ = 0;
  int64_t sum_nanos_ = 0;
  int64_t min_nanos_ = INT64_MAX;
  int64_t max_nanos_ = 0;
};

}  // namespace onemodel::load
