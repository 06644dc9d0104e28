// ConvPrimitiveCache: the oneDNN convolution primitives (Conv2d's NHWC path, docs/kernels.md)
// one holder keeps, a bounded LRU. Each server session owns one and makes it current on the
// thread that runs its requests, so a session's primitives are bounded, charged to its memory
// budget (EntryBytes each), counted in its statistics (SessionStats.conv_cache) and freed when
// it closes. Without a scope (tests, benchmarks, KernelSet::Default() callers) the oneDNN path
// uses one process-wide cache of the same capacity, charged to nothing.
//
//   ConvPrimitiveCache cache(kDefaultCapacity, &session_budget);  // a session's
//   { ConvCacheScope scope(&cache); RunOps(); }  // Conv2d's oneDNN path looks up `cache`
//   cache.Stats().entries;                       // <= cache.capacity()
#pragma once

#include <cstdint>
#include <memory>

namespace onemodel {

class MemoryBudget;

struct ConvPrimitiveCacheStats {
  int64_t capacity = 0;
  int64_t entries = 0;    // primitives held, at most capacity
  int64_t hits = 0;       // lookups that found their primitive
  int64_t misses = 0;     // lookups that created one
  int64_t evictions = 0;  // least recently used primitives dropped to stay within capacity
};

class ConvPrimitiveCache {
 public:
  // One layer shape takes up to four entries (forward with and without bias, input gradient,
  // weight gradient; sizing the scratch looks up all four), so 64 hold 16 layer shapes.
  static constexpr int kDefaultCapacity = 64;

  // Each primitive created is charged to `budget` (when given) while the cache holds it; when
  // the charge does not fit, the least recently used primitives leave first, and with none
  // left the primitive serves only the call that made it. Charges come from the thread that
  // runs the convolution (a session's strand), so the budget may reclaim.
  explicit ConvPrimitiveCache(int capacity = kDefaultCapacity, MemoryBudget* budget = nullptr);
  // Gives the charges back.
  ~ConvPrimitiveCache();
  ConvPrimitiveCache(const ConvPrimitiveCache&) = delete;
  ConvPrimitiveCache& operator=(const ConvPrimitiveCache&) = delete;

  // Any thread.
  ConvPrimitiveCacheStats Stats() const;
  // Frees every primitive (a closing session's) and gives their charges back; the counters
  // stay.
  void Clear();

  // What one primitive of a convolution with a kh x kw kernel is charged: the upper envelope of
  // oneDNN 2.6's heap growth per primitive measured over 3x3 to 255x255 kernels and 1 to 1024
  // channels (28-424 KiB at kernels up to 31x31, 2.6 MiB at 255x255: docs/kernels.md).
  static int64_t EntryBytes(int64_t kh, int64_t kw);

  // The entries and their lock, defined where oneDNN is (conv_dnnl.cc).
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// The cache the oneDNN path uses on this thread: the innermost ConvCacheScope's, else the
// process-wide one.
ConvPrimitiveCache& CurrentConvCache();

// Makes `cache` current on this thread while it lives, then restores the previous one.
class ConvCacheScope {
 public:
  explicit ConvCacheScope(ConvPrimitiveCache* cache);
  ~ConvCacheScope();
  ConvCacheScope(const ConvCacheScope&) = delete;
  ConvCacheScope& operator=(const ConvCacheScope&) = delete;

 private:
  ConvPrimitiveCache* previous_;
};

}  // namespace onemodel
