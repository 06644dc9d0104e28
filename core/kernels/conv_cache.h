// ConvPrimitiveCache: the oneDNN convolution primitives (Conv2d's NHWC path, docs/kernels.md)
// one holder keeps, a bounded LRU. Each server session owns one and makes it current on the
// thread that runs its requests, so a session's primitives are bounded, counted in its
// statistics (SessionStats.conv_cache) and freed when it closes. Without a scope (tests,
// benchmarks, KernelSet::Default() callers) the oneDNN path uses one process-wide cache of
// the same capacity.
//
//   ConvPrimitiveCache cache;                    // a session's
//   { ConvCacheScope scope(&cache); RunOps(); }  // Conv2d's oneDNN path looks up `cache`
//   cache.Stats().entries;                       // <= cache.capacity()
#pragma once

#include <cstdint>
#include <memory>

namespace onemodel {

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

  explicit ConvPrimitiveCache(int capacity = kDefaultCapacity);
  ~ConvPrimitiveCache();
  ConvPrimitiveCache(const ConvPrimitiveCache&) = delete;
  ConvPrimitiveCache& operator=(const ConvPrimitiveCache&) = delete;

  // Any thread.
  ConvPrimitiveCacheStats Stats() const;
  // Frees every primitive (a closing session's); the counters stay.
  void Clear();

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
