#include "client/load/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace onemodel::load {

int LatencyHistogram::BucketOf(int64_t nanos) {
  if (nanos < kExactNanos) return static_cast<int>(std::max<int64_t>(nanos, 0));
  const int exponent = std::bit_width(static_cast<uint64_t>(nanos)) - 1;  // >= 7
  if (exponent >= kMaxExponent) return kBuckets - 1;
  const int sub = static_cast<int>(nanos >> (exponent - 6)) - kSubBuckets;
  return kExactNanos + (exponent - 7) * kSubBuckets + sub;
}

int64_t LatencyHistogram::BucketUpperNanos(int bucket) {
  if (bucket < kExactNanos) return bucket;
  const int exponent = 7 + (bucket - kExactNanos) / kSubBuckets;
  const int64_t sub = (bucket - kExactNanos) % kSubBuckets;
  return ((kSubBuckets + sub + 1) << (exponent - 6)) - 1;
}

void LatencyHistogram::Record(std::chrono::nanoseconds latency) {
  const int64_t nanos = std::max<int64_t>(latency.count(), 0);
  ++counts_[BucketOf(nanos)];
  ++count_;
  sum_nanos_ += nanos;
  min_nanos_ = std::min(min_nanos_, nanos);
  max_nanos_ = std::max(max_nanos_, nanos);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_nanos_ += other.sum_nanos_;
  min_nanos_ = std::min(min_nanos_, other.min_nanos_);
  max_nanos_ = std::max(max_nanos_, other.max_nanos_);
}

double LatencyHistogram::MeanMicros() const {
  return count_ ? static_cast<double>(sum_nanos_) / static_cast<double>(count_) / 1e3 : 0;
}

double LatencyHistogram::PercentileMicros(double percent) const {
  if (count_ == 0) return 0;
  // The rank of the answer, from 1; the small slack keeps 99.9% of 1000 at 999, not 1000.
  const double exact = percent / 100.0 * static_cast<double>(count_);
  const int64_t rank =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(exact - 1e-9)), 1, count_);
  int64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen < rank) continue;
    // The last bucket is open-ended: the largest latency bounds it.
    const int64_t upper =
        i == kBuckets - 1 ? max_nanos_ : std::min(BucketUpperNanos(i), max_nanos_);
    return static_cast<double>(upper) / 1e3;
  }
  return MaxMicros();
}

}  // namespace onemodel::load
