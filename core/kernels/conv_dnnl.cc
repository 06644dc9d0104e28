#include "core/kernels/internal/conv_dnnl.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/common/cancellation.h"
#include "core/common/exceptions.h"
#include "core/kernels/conv_cache.h"
#include "core/memory/memory_budget.h"
#include "dnnl.hpp"

// libdnnl (Debian's) runs on OpenMP (libgomp); omp.h is GCC's and not on clang's path.
extern "C" void omp_set_num_threads(int threads);

namespace onemodel::internal {
namespace {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
constexpr int kOneDnnGlobalCacheCapacity = 64;

enum class Pass : int64_t { kForward, kBackwardInput, kBackwardWeight };

// The CPU engine; first use bounds oneDNN's own process-wide primitive cache (which the
// weight reorders go through, docs/kernels.md) to kOneDnnGlobalCacheCapacity.
dnnl::engine& Engine() {
  static dnnl::engine engine = [] {
    dnnl::set_primitive_cache_capacity(kOneDnnGlobalCacheCapacity);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

// The convolution's geometry as oneDNN spells it.
struct Geometry {
  Dims src, dst, weights, strides, dilates, pad_l, pad_r;
};

Geometry GeometryOf(const ConvDims& d, const Conv2dParams& p) {
  Geometry g;
  g.src = {d.n, d.c, d.h, d.w};
  g.dst = {d.n, d.k, d.oh, d.ow};
  g.weights = d.groups > 1 ? Dims{d.groups, d.kg, d.cg, d.kh, d.kw} : Dims{d.k, d.cg, d.kh, d.kw};
  g.strides = {p.stride_h, p.stride_w};
  g.dilates = {p.dilation_h - 1, p.dilation_w - 1};
  g.pad_l = {p.pad_top, p.pad_left};
  g.pad_r = {p.pad_bottom, p.pad_right};
  return g;
}

// One cached primitive: the weights format it wants (for the gradient: writes) and its
// scratchpad.
struct Entry {
  std::array<int64_t, 20> key;
  dnnl::primitive primitive;
  memory::desc weights;
  memory::desc scratchpad;
  int64_t charged = 0;  // bytes charged to the cache's budget while the cache holds it
};

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The forward primitive descriptor (also the backward passes' hint).
dnnl::convolution_forward::primitive_desc ForwardDesc(const Geometry& g, bool bias) {
  const memory::desc src(g.src, kF32, Tag::nhwc), dst(g.dst, kF32, Tag::nhwc);
  const memory::desc w(g.weights, kF32, Tag::any);
  const memory::desc b = bias ? memory::desc({g.dst[1]}, kF32, Tag::a) : memory::desc();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training,
                                             dnnl::algorithm::convolution_direct, src, w, b, dst,
                                             g.strides, g.dilates, g.pad_l, g.pad_r);
  return {desc, UserScratchpad(), Engine()};
}

Entry Create(Pass pass, const Geometry& g, bool bias) {
  const auto fwd = ForwardDesc(g, bias);
  Entry e{};
  const memory::desc src(g.src, kF32, Tag::nhwc), dst(g.dst, kF32, Tag::nhwc);
  const memory::desc w(g.weights, kF32, Tag::any);
  switch (pass) {
    case Pass::kForward:
      e.primitive = dnnl::convolution_forward(fwd);
      e.weights = fwd.weights_desc();
      e.scratchpad = fwd.scratchpad_desc();
      break;
    case Pass::kBackwardInput: {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, src, w,
                                                       dst, g.strides, g.dilates, g.pad_l, g.pad_r);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, UserScratchpad(), Engine(),
                                                               fwd);
      e.primitive = dnnl::convolution_backward_data(pd);
      e.weights = pd.weights_desc();
      e.scratchpad = pd.scratchpad_desc();
      break;
    }
    case Pass::kBackwardWeight: {
      const dnnl::convolution_backward_weights::desc desc(
          dnnl::algorithm::convolution_direct, src, w, dst, g.strides, g.dilates, g.pad_l, g.pad_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, UserScratchpad(), Engine(),
                                                                  fwd);
      e.primitive = dnnl::convolution_backward_weights(pd);
      e.weights = pd.diff_weights_desc();
      e.scratchpad = pd.scratchpad_desc();
      break;
    }
  }
  return e;
}

using Key = std::array<int64_t, 20>;

Key KeyOf(Pass pass, const ConvDims& d, const Conv2dParams& p, bool bias, int threads) {
  return {static_cast<int64_t>(pass),
          d.n,
          d.c,
          d.h,
          d.w,
          d.k,
          d.kh,
          d.kw,
          d.oh,
          d.ow,
          p.stride_h,
          p.stride_w,
          p.pad_top,
          p.pad_left,
          p.pad_bottom,
          p.pad_right,
          p.dilation_h,
          p.dilation_w,
          p.groups,
          (bias ? 1 : 0) + 2 * threads};
}

}  // namespace
}  // namespace onemodel::internal

namespace onemodel {

struct ConvPrimitiveCache::Impl {
  Impl(int capacity, MemoryBudget* budget) : capacity(capacity), budget(budget) {}

  // The entry for `pass` over these shapes, created on a miss (the least recently used one
  // leaves when the cache is full, or when the budget refuses the new one's charge).
  internal::Entry Get(internal::Pass pass, const internal::ConvDims& d, const Conv2dParams& p,
                      bool bias, int threads) {
    const internal::Key key = internal::KeyOf(pass, d, p, bias, threads);
    {
      const std::lock_guard lock(mutex);
      for (auto it = entries.begin(); it != entries.end(); ++it) {
        if (it->key != key) continue;
        entries.splice(entries.begin(), entries, it);
        ++stats.hits;
        return entries.front();
      }
    }
    // Outside the lock: creating a primitive compiles code.
    internal::Entry e = internal::Create(pass, internal::GeometryOf(d, p), bias);
    e.key = key;
    const std::lock_guard lock(mutex);
    ++stats.misses;
    const int64_t bytes = EntryBytes(d.kh, d.kw);
    if (!Admit(bytes)) return e;  // serves this call only
    e.charged = bytes;
    entries.push_front(e);
    if (static_cast<int64_t>(entries.size()) > capacity) EvictOldest();
    return e;
  }

  // Under the lock: charges `bytes` to the budget, evicting the least recently used entries
  // while it refuses; false when it refuses with none left.
  bool Admit(int64_t bytes) {
    if (!budget) return true;
    for (;;) {
      try {
        budget->Charge(bytes);
        return true;
      } catch (const MemoryLimitException&) {
        if (entries.empty()) return false;
        EvictOldest();
      }
    }
  }

  // Under the lock: drops the least recently used entry and gives its charge back.
  void EvictOldest() {
    if (budget) budget->Refund(entries.back().charged);
    entries.pop_back();
    ++stats.evictions;
  }

  const int64_t capacity;
  MemoryBudget* const budget;
  mutable std::mutex mutex;
  std::list<internal::Entry> entries;  // most recently used first
  ConvPrimitiveCacheStats stats;       // without capacity and entries
};

ConvPrimitiveCache::ConvPrimitiveCache(int capacity, MemoryBudget* budget)
    : impl_(std::make_unique<Impl>(capacity, budget)) {}

ConvPrimitiveCache::~ConvPrimitiveCache() { Clear(); }

int64_t ConvPrimitiveCache::EntryBytes(int64_t kh, int64_t kw) {
  constexpr int64_t kKiB = 1024;
  return 128 * kKiB + 16 * kKiB * (kh + kw);
}

ConvPrimitiveCacheStats ConvPrimitiveCache::Stats() const {
  const std::lock_guard lock(impl_->mutex);
  ConvPrimitiveCacheStats s = impl_->stats;
  s.capacity = impl_->capacity;
  s.entries = static_cast<int64_t>(impl_->entries.size());
  return s;
}

void ConvPrimitiveCache::Clear() {
  std::list<internal::Entry> gone;
  const std::lock_guard lock(impl_->mutex);
  gone.swap(impl_->entries);
  if (!impl_->budget) return;
  for (const internal::Entry& e : gone) impl_->budget->Refund(e.charged);
}

namespace {
thread_local ConvPrimitiveCache* t_current = nullptr;
}  // namespace

ConvPrimitiveCache& CurrentConvCache() {
  static ConvPrimitiveCache process_wide;
  return t_current ? *t_current : process_wide;
}

ConvCacheScope::ConvCacheScope(ConvPrimitiveCache* cache) : previous_(t_current) {
  t_current = cache;
}

ConvCacheScope::~ConvCacheScope() { t_current = previous_; }

}  // namespace onemodel

namespace onemodel::internal {
namespace {

// The current cache's entry (CurrentConvCache).
Entry Cached(Pass pass, const ConvDims& d, const Conv2dParams& p, bool bias, int threads) {
  return CurrentConvCache().impl().Get(pass, d, p, bias, threads);
}

// Bytes rounded up to whole 64-byte lines.
size_t Lines(size_t bytes) { return (bytes + 63) / 64 * 64; }

// The caller's scratch cut into the scratchpad and the blocked weights, 64-byte aligned.
struct Split {
  void* scratchpad;
  void* weights;
  Split(const Entry& e, std::span<float> scratch) {
    const auto at = reinterpret_cast<uintptr_t>(scratch.data());
    scratchpad = reinterpret_cast<void*>((at + 63) / 64 * 64);
    weights = static_cast<char*>(scratchpad) + Lines(e.scratchpad.get_size());
  }
};

// The plain weights (K, C / groups, KH, KW) as oneDNN describes them (grouped: (groups,
// K / groups, C / groups, KH, KW)), extent-1 dimensions given the outermost stride; no value
// when oneDNN cannot describe them (negative or overlapping strides).
std::optional<memory::desc> PlainWeights(const Tensor& w, const ConvDims& d) {
  const auto& t = w.strides();
  Dims dims{d.k, d.cg, d.kh, d.kw}, strides{t[0], t[1], t[2], t[3]};
  if (d.groups > 1) {
    dims = {d.groups, d.kg, d.cg, d.kh, d.kw};
    strides = {d.kg * t[0], t[0], t[1], t[2], t[3]};
  }
  std::vector<std::pair<int64_t, int64_t>> used;  // (stride, extent) of extents above 1
  int64_t outer = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (strides[i] < 1) return std::nullopt;
    used.emplace_back(strides[i], dims[i]);
    outer = std::max(outer, strides[i] * dims[i]);
  }
  std::sort(used.begin(), used.end());
  for (size_t i = 1; i < used.size(); ++i) {
    if (used[i].first < used[i - 1].first * used[i - 1].second) return std::nullopt;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) strides[i] = outer;
  }
  return memory::desc(dims, kF32, strides);
}

float* Base(const Tensor& t) { return const_cast<float*>(t.Storage<float>().data()) + t.offset(); }

// The weights in the format `e` wants: w's own memory when it already is, else reordered
// into the scratch. (Pre-blocked weights will skip this.)
memory BlockedWeights(const Tensor& w, const ConvDims& d, const Entry& e, void* scratch,
                      dnnl::stream& stream) {
  memory plain(*PlainWeights(w, d), Engine(), Base(w));
  if (e.weights == plain.get_desc()) return plain;
  memory blocked(e.weights, Engine(), scratch);
  dnnl::reorder(plain, blocked).execute(stream, plain, blocked);
  return blocked;
}

// A dense NHWC image tensor as oneDNN memory.
memory Nhwc(const Tensor& t) {
  const Shape& s = t.shape();
  return memory({{s[0], s[1], s[2], s[3]}, kF32, Tag::nhwc}, Engine(), Base(t));
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

}  // namespace

// Whether oneDNN can describe the geometry: it refuses (INTERNAL "could not create a
// descriptor") padded or dilated extents past 32 bits, which pads near 2^31 make; im2col
// computes those.
bool DescribableGeometry(const ConvDims& d, const Conv2dParams& p) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  return d.h + p.pad_top + p.pad_bottom <= kMax && d.w + p.pad_left + p.pad_right <= kMax &&
         (d.kh - 1) * p.dilation_h + 1 <= kMax && (d.kw - 1) * p.dilation_w + 1 <= kMax;
}

bool DnnlConvApplies(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor* bias,
                     const Conv2dParams& p) {
  const ConvDims d = ConvDimsOf(x.shape(), w.shape(), p);
  return x.layout() == Layout::kNhwc && y.layout() == Layout::kNhwc && y.shape()[2] == d.oh &&
         y.shape()[3] == d.ow && (!bias || bias->strides()[0] == 1) && y.ElementCount() > 0 &&
         x.ElementCount() > 0 && DescribableGeometry(d, p) && PlainWeights(w, d).has_value();
}

int64_t DnnlConvScratchFloats(const Shape& x, const Shape& w, const Conv2dParams& p, int threads) {
  const ConvDims d = ConvDimsOf(x, w, p);
  if (d.oh < 1 || d.ow < 1 || d.k == 0 || x.ElementCount() == 0 || !DescribableGeometry(d, p)) {
    return 0;
  }
  omp_set_num_threads(threads);
  size_t bytes = 0;
  const std::pair<Pass, bool> passes[] = {{Pass::kForward, false},
                                          {Pass::kForward, true},
                                          {Pass::kBackwardInput, false},
                                          {Pass::kBackwardWeight, false}};
  for (const auto& [pass, bias] : passes) {
    const Entry e = Cached(pass, d, p, bias, threads);
    bytes = std::max(bytes, Lines(e.scratchpad.get_size()) + Lines(e.weights.get_size()));
  }
  return static_cast<int64_t>((bytes + 64) / sizeof(float));
}

void DnnlConv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                Tensor& out, std::span<float> scratch, int threads) {
  if (Cancelled(CurrentCancelToken())) return;
  const ConvDims d = ConvDimsOf(x.shape(), w.shape(), p);
  omp_set_num_threads(threads);
  const Entry e = Cached(Pass::kForward, d, p, bias != nullptr, threads);
  const Split s(e, scratch);
  dnnl::stream& stream = Stream();
  const memory weights = BlockedWeights(w, d, e, s.weights, stream);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, Nhwc(x)},
      {DNNL_ARG_WEIGHTS, weights},
      {DNNL_ARG_DST, Nhwc(out)},
      {DNNL_ARG_SCRATCHPAD, memory(e.scratchpad, Engine(), s.scratchpad)}};
  if (bias) args.emplace(DNNL_ARG_BIAS, memory({{d.k}, kF32, Tag::a}, Engine(), Base(*bias)));
  e.primitive.execute(stream, args);
  stream.wait();
}

void DnnlConv2dBackwardInput(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                             Tensor& grad_x, std::span<float> scratch, int threads) {
  if (Cancelled(CurrentCancelToken())) return;
  const ConvDims d = ConvDimsOf(grad_x.shape(), w.shape(), p);
  omp_set_num_threads(threads);
  const Entry e = Cached(Pass::kBackwardInput, d, p, false, threads);
  const Split s(e, scratch);
  dnnl::stream& stream = Stream();
  const memory weights = BlockedWeights(w, d, e, s.weights, stream);
  e.primitive.execute(stream,
                      {{DNNL_ARG_DIFF_DST, Nhwc(grad_out)},
                       {DNNL_ARG_WEIGHTS, weights},
                       {DNNL_ARG_DIFF_SRC, Nhwc(grad_x)},
                       {DNNL_ARG_SCRATCHPAD, memory(e.scratchpad, Engine(), s.scratchpad)}});
  stream.wait();
}

void DnnlConv2dBackwardWeight(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                              Tensor& grad_w, std::span<float> scratch, int threads) {
  if (Cancelled(CurrentCancelToken())) return;
  const ConvDims d = ConvDimsOf(x.shape(), grad_w.shape(), p);
  omp_set_num_threads(threads);
  const Entry e = Cached(Pass::kBackwardWeight, d, p, false, threads);
  const Split s(e, scratch);
  dnnl::stream& stream = Stream();
  memory plain(*PlainWeights(grad_w, d), Engine(), Base(grad_w));
  const bool direct = e.weights == plain.get_desc();
  memory blocked = direct ? plain : memory(e.weights, Engine(), s.weights);
  e.primitive.execute(stream,
                      {{DNNL_ARG_DIFF_DST, Nhwc(grad_out)},
                       {DNNL_ARG_SRC, Nhwc(x)},
                       {DNNL_ARG_DIFF_WEIGHTS, blocked},
                       {DNNL_ARG_SCRATCHPAD, memory(e.scratchpad, Engine(), s.scratchpad)}});
  if (!direct) dnnl::reorder(blocked, plain).execute(stream, blocked, plain);
  stream.wait();
}

}  // namespace onemodel::internal
