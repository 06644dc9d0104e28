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
#include "core/kernels/conv_cache.h"
#include "core/kernels/thread_pool.h"
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
  explicit Impl(int capacity) : capacity(capacity) {}

  // The entry for `pass` over these shapes, created on a miss (the least recently used one
  // leaves when the cache is full).
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
    entries.push_front(e);
    if (static_cast<int64_t>(entries.size()) > capacity) {
      entries.pop_back();
      ++stats.evictions;
    }
    return e;
  }

  const int64_t capacity;
  mutable std::mutex mutex;
  std::list<internal::Entry> entries;  // most recently used first
  ConvPrimitiveCacheStats stats;       // without capacity and entries
};

ConvPrimitiveCache::ConvPrimitiveCache(int capacity) : impl_(std::make_unique<Impl>(capacity)) {}

ConvPrimitiveCache::~ConvPrimitiveCache() = default;

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

// How one pass runs over a batch of n images on `threads` threads (docs/kernels.md, measured):
// a batch of fewer images than threads is one primitive on `threads` OpenMP threads; a larger
// one is cut into `threads` contiguous slices of n / threads or n / threads + 1 images, each
// a single-thread primitive run by one task of the kernels' pool. The slices share one
// weights format (oneDNN's choice does not depend on the batch; a plan whose slices would
// disagree runs one primitive instead).
struct Plan {
  int64_t n = 0;
  int slices = 1;
  int omp_threads = 1;          // each primitive's
  Entry small, large;           // primitives for slices of n / slices and n / slices + 1 images
  int64_t weights_buffers = 1;  // blocked weights (the weight gradient: one partial per slice)

  // Slice t is images [Begin(t), Begin(t + 1)).
  int64_t Begin(int64_t t) const { return n * t / slices; }
  const Entry& For(int64_t images) const { return images == n / slices ? small : large; }
  size_t WeightsBytes() const { return Lines(small.weights.get_size()); }
  size_t ScratchpadBytes() const {
    return std::max(Lines(small.scratchpad.get_size()), Lines(large.scratchpad.get_size()));
  }
  // Scratch bytes: the weight buffers, then one scratchpad per slice.
  size_t Bytes() const {
    return static_cast<size_t>(weights_buffers) * WeightsBytes() + slices * ScratchpadBytes();
  }
};

// The plan of `pass` over `slices` slices, each primitive on `omp_threads` OpenMP threads.
Plan Sliced(Pass pass, const ConvDims& d, const Conv2dParams& p, bool bias, int slices,
            int omp_threads) {
  Plan plan;
  plan.n = d.n;
  plan.slices = slices;
  plan.omp_threads = omp_threads;
  plan.weights_buffers = pass == Pass::kBackwardWeight ? slices : 1;
  omp_set_num_threads(omp_threads);
  ConvDims slice = d;
  slice.n = d.n / slices;
  plan.small = Cached(pass, slice, p, bias, omp_threads);
  ++slice.n;
  plan.large = d.n % slices == 0 ? plan.small : Cached(pass, slice, p, bias, omp_threads);
  return plan;
}

// The plan of `pass` over d's batch on `threads` threads; its primitives come from the calling
// thread's cache (ConvCacheScope is per thread), and the thread's OpenMP count is left at the
// plan's, which the weight reorders then use.
Plan PlanOf(Pass pass, const ConvDims& d, const Conv2dParams& p, bool bias, int threads) {
  if (d.n >= threads) {
    Plan split = Sliced(pass, d, p, bias, threads, 1);
    if (split.small.weights == split.large.weights) return split;
  }
  return Sliced(pass, d, p, bias, 1, threads);
}

// The caller's scratch cut as `plan` says, from its first 64-byte line.
class Pieces {
 public:
  Pieces(const Plan& plan, std::span<float> scratch)
      : plan_(plan),
        base_(reinterpret_cast<char*>(Lines(reinterpret_cast<size_t>(scratch.data())))) {}
  void* Weights(int64_t i) const { return base_ + i * plan_.WeightsBytes(); }
  void* Scratchpad(int64_t slice) const {
    return base_ + plan_.weights_buffers * plan_.WeightsBytes() + slice * plan_.ScratchpadBytes();
  }

 private:
  const Plan& plan_;
  char* base_;
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

// Images [begin, end) of a dense NHWC tensor as oneDNN memory.
memory Images(const Tensor& t, int64_t begin, int64_t end) {
  const Shape& s = t.shape();
  return memory({{end - begin, s[1], s[2], s[3]}, kF32, Tag::nhwc}, Engine(),
                Base(t) + begin * t.strides()[0]);
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// Runs run(slice, begin, end, entry) for each of plan's slices (images [begin, end), entry its
// primitive), one pool task per slice on plan.omp_threads OpenMP threads; a slice that starts
// after `cancel` is set does not run.
template <typename Run>
void ForEachSlice(const Plan& plan, ThreadPool& pool, const CancelToken* cancel, const Run& run) {
  pool.ParallelFor(plan.slices, [&](int64_t t) {
    if (Cancelled(cancel)) return;
    omp_set_num_threads(plan.omp_threads);
    const int64_t begin = plan.Begin(t), end = plan.Begin(t + 1);
    run(t, begin, end, plan.For(end - begin));
    Stream().wait();
  });
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
  size_t bytes = 0;
  const std::pair<Pass, bool> passes[] = {{Pass::kForward, false},
                                          {Pass::kForward, true},
                                          {Pass::kBackwardInput, false},
                                          {Pass::kBackwardWeight, false}};
  for (const auto& [pass, bias] : passes) {
    bytes = std::max(bytes, PlanOf(pass, d, p, bias, threads).Bytes());
  }
  return static_cast<int64_t>((bytes + 64) / sizeof(float));
}

void DnnlConv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                Tensor& out, std::span<float> scratch, ThreadPool& pool) {
  const CancelToken* cancel = CurrentCancelToken();
  if (Cancelled(cancel)) return;
  const ConvDims d = ConvDimsOf(x.shape(), w.shape(), p);
  const Plan plan = PlanOf(Pass::kForward, d, p, bias != nullptr, pool.threads());
  const Pieces s(plan, scratch);
  const memory weights = BlockedWeights(w, d, plan.small, s.Weights(0), Stream());
  Stream().wait();
  std::optional<memory> b;
  if (bias) b.emplace(memory::desc({d.k}, kF32, Tag::a), Engine(), Base(*bias));
  ForEachSlice(plan, pool, cancel, [&](int64_t t, int64_t begin, int64_t end, const Entry& e) {
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, Images(x, begin, end)},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, Images(out, begin, end)},
        {DNNL_ARG_SCRATCHPAD, memory(e.scratchpad, Engine(), s.Scratchpad(t))}};
    if (b) args.emplace(DNNL_ARG_BIAS, *b);
    e.primitive.execute(Stream(), args);
  });
}

void DnnlConv2dBackwardInput(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                             Tensor& grad_x, std::span<float> scratch, ThreadPool& pool) {
  const CancelToken* cancel = CurrentCancelToken();
  if (Cancelled(cancel)) return;
  const ConvDims d = ConvDimsOf(grad_x.shape(), w.shape(), p);
  const Plan plan = PlanOf(Pass::kBackwardInput, d, p, false, pool.threads());
  const Pieces s(plan, scratch);
  const memory weights = BlockedWeights(w, d, plan.small, s.Weights(0), Stream());
  Stream().wait();
  ForEachSlice(plan, pool, cancel, [&](int64_t t, int64_t begin, int64_t end, const Entry& e) {
    e.primitive.execute(Stream(),
                        {{DNNL_ARG_DIFF_DST, Images(grad_out, begin, end)},
                         {DNNL_ARG_WEIGHTS, weights},
                         {DNNL_ARG_DIFF_SRC, Images(grad_x, begin, end)},
                         {DNNL_ARG_SCRATCHPAD, memory(e.scratchpad, Engine(), s.Scratchpad(t))}});
  });
}

void DnnlConv2dBackwardWeight(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                              Tensor& grad_w, std::span<float> scratch, ThreadPool& pool) {
  const CancelToken* cancel = CurrentCancelToken();
  if (Cancelled(cancel)) return;
  const ConvDims d = ConvDimsOf(x.shape(), grad_w.shape(), p);
  const Plan plan = PlanOf(Pass::kBackwardWeight, d, p, false, pool.threads());
  const Pieces s(plan, scratch);
  // Each slice's gradient goes to its own buffer in the blocked format; the first buffer
  // then sums them in slice order and is reordered into grad_w.
  ForEachSlice(plan, pool, cancel, [&](int64_t t, int64_t begin, int64_t end, const Entry& e) {
    e.primitive.execute(Stream(),
                        {{DNNL_ARG_DIFF_DST, Images(grad_out, begin, end)},
                         {DNNL_ARG_SRC, Images(x, begin, end)},
                         {DNNL_ARG_DIFF_WEIGHTS, memory(e.weights, Engine(), s.Weights(t))},
                         {DNNL_ARG_SCRATCHPAD, memory(e.scratchpad, Engine(), s.Scratchpad(t))}});
  });
  if (Cancelled(cancel)) return;
  const auto floats = static_cast<int64_t>(plan.small.weights.get_size() / sizeof(float));
  auto* sum = static_cast<float*>(s.Weights(0));
  for (int64_t t = 1; t < plan.slices; ++t) {
    const auto* part = static_cast<const float*>(s.Weights(t));
    for (int64_t i = 0; i < floats; ++i) sum[i] += part[i];
  }
  memory blocked(plan.small.weights, Engine(), sum),
      plain(*PlainWeights(grad_w, d), Engine(), Base(grad_w));
  dnnl::reorder(blocked, plain).execute(Stream(), blocked, plain);
  Stream().wait();
}

}  // namespace onemodel::internal
