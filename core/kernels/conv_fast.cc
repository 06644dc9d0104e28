#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/common/cancellation.h"
#include "core/kernels/internal/conv.h"
#include "core/kernels/internal/conv_dnnl.h"
#include "core/kernels/internal/conv_planes.h"
#include "core/kernels/internal/conv_simd.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::internal {
namespace {

// A float tensor's first element and strides.
struct Strided4 {
  const float* base;
  int64_t s[4];
  explicit Strided4(const Tensor& t) : base(t.Storage<float>().data() + t.offset()) {
    for (int i = 0; i < 4; ++i) s[i] = t.strides()[i];
  }
};

// Dense row-major copy of t into `dense`, or t's own memory when that already is dense.
const float* Dense(const Tensor& t, float* dense) {
  const Strided4 v(t);
  const Shape& e = t.shape();
  if (t.IsContiguous()) return v.base;
  float* o = dense;
  for (int64_t a = 0; a < e[0]; ++a) {
    for (int64_t b = 0; b < e[1]; ++b) {
      for (int64_t c = 0; c < e[2]; ++c) {
        const float* row = v.base + a * v.s[0] + b * v.s[1] + c * v.s[2];
        for (int64_t d = 0; d < e[3]; ++d) *o++ = row[d * v.s[3]];
      }
    }
  }
  return dense;
}

// Copies n floats from `from` to `to` and returns to + n; inline, in 64-byte pieces: the
// planes of small images are short runs (16 floats on the digits CNN's 4x4 layer), for which a
// call to memmove cost more than the copy.
float* CopyRun(const float* from, int64_t n, float* to) {
  constexpr int64_t kPiece = 64 / sizeof(float);
  int64_t e = 0;
  for (; e + kPiece <= n; e += kPiece) std::memcpy(to + e, from + e, sizeof(float) * kPiece);
  for (; e < n; ++e) to[e] = from[e];
  return to + n;
}

// Images [n0, n0 + m) of t (N, K, OH, OW; any strides) as one K x (m * OH * OW) matrix of
// leading dimension ld in `dense`: row k holds channel k of image n0, then of n0 + 1, ...; t's
// own memory when that already is one (a single image of a contiguous t, ld = OH * OW).
const float* GatherImages(const Tensor& t, int64_t n0, int64_t m, int64_t ld, float* dense) {
  const Strided4 v(t);
  const Shape& e = t.shape();
  const int64_t cols = e[2] * e[3];
  if (m == 1 && ld == cols && t.IsContiguous()) return v.base + n0 * v.s[0];
  const bool planes = v.s[3] == 1 && v.s[2] == e[3];  // each plane one run of cols floats
  for (int64_t k = 0; k < e[1]; ++k) {
    float* o = dense + k * ld;
    for (int64_t n = n0; n < n0 + m; ++n) {
      if (planes) {
        const float* plane = v.base + n * v.s[0] + k * v.s[1];
        o = CopyRun(plane, cols, o);
        continue;
      }
      for (int64_t y = 0; y < e[2]; ++y) {
        const float* row = v.base + n * v.s[0] + k * v.s[1] + y * v.s[2];
        if (v.s[3] == 1) {
          o = std::copy(row, row + e[3], o);
        } else {
          for (int64_t x = 0; x < e[3]; ++x) *o++ = row[x * v.s[3]];
        }
      }
    }
  }
  return dense;
}

// a / b rounded up, for a >= 0 and b >= 1; no division for b = 1 (small images unfold many
// taps, each computing its ranges).
int64_t CeilDiv(int64_t a, int64_t b) { return b == 1 ? a : (a + b - 1) / b; }

// The outputs o in [lo, hi) of [0, outputs) whose input index o * stride + offset (offset: a
// tap's dilated position less the leading pad) falls inside [0, size); the others read padding.
struct TapRange {
  int64_t lo, hi;
  TapRange(int64_t outputs, int64_t size, int64_t stride, int64_t offset)
      : lo(offset >= 0 ? 0 : CeilDiv(-offset, stride)),
        hi(std::min(outputs, size - offset <= 0 ? 0 : CeilDiv(size - offset, stride))) {
    lo = std::min(lo, hi);
  }
};

// Zeroes columns [x0, x1) of rows [r.lo, r.hi) of a row-major matrix `width` columns wide,
// one column at a time (the padding's few columns: no memset call per row).
void ZeroColumns(float* m, int64_t width, const TapRange& r, int64_t x0, int64_t x1) {
  for (int64_t x = x0; x < x1; ++x) {
    for (int64_t y = r.lo; y < r.hi; ++y) m[y * width + x] = 0.0f;
  }
}

// Whether consecutive output rows read input rows one output row apart (unit steps along x and
// a row stride of OW per output row, as 3x3 pad 1 stride 1 on dense rows): output position e =
// oy * OW + ox of each tap then reads the input at e + shift. sy, sx: the input's row and
// column strides.
bool OneRun(int64_t sy, int64_t sx, const ConvDims& d, const Conv2dParams& p) {
  return p.stride_w * sx == 1 && sy * p.stride_h == d.ow;
}

// col (Rows x Cols, leading dimension ld) = the unfolded input channels [c0, c0 + cg) of
// image n: row (c, i, j) holds, per output position, the input element tap (i, j) reads there,
// 0 in the padding. Each row's inside run is a copy (contiguous when the input row and
// stride_w allow); all of a tap's rows are one copy when they are one run of the input.
void Im2Col(const Strided4& x, const ConvDims& d, const Conv2dParams& p, int64_t n, int64_t c0,
            float* col, int64_t ld) {
  const int64_t step = p.stride_w * x.s[3];
  // A tap's inside runs are one copy from the input.
  const bool one_run = OneRun(x.s[2], x.s[3], d, p);
  for (int64_t c = 0; c < d.cg; ++c) {
    const float* plane = x.base + n * x.s[0] + (c0 + c) * x.s[1];
    for (int64_t i = 0; i < d.kh; ++i) {
      const int64_t dy = i * p.dilation_h - p.pad_top;
      const TapRange ry(d.oh, d.h, p.stride_h, dy);
      for (int64_t j = 0; j < d.kw; ++j, col += ld) {
        const int64_t dx = j * p.dilation_w - p.pad_left;
        const TapRange rx(d.ow, d.w, p.stride_w, dx);
        std::fill(col, col + ry.lo * d.ow, 0.0f);
        std::fill(col + ry.hi * d.ow, col + d.Cols(), 0.0f);
        if (one_run) {  // the run, then its padding columns zeroed again
          if (ry.lo < ry.hi && rx.lo < rx.hi) {
            const float* in = plane + (ry.lo * p.stride_h + dy) * x.s[2] + rx.lo + dx;
            std::copy(in, in + (ry.hi - 1 - ry.lo) * d.ow + (rx.hi - rx.lo),
                      col + ry.lo * d.ow + rx.lo);
          }
          ZeroColumns(col, d.ow, ry, 0, rx.lo);
          ZeroColumns(col, d.ow, ry, rx.hi, d.ow);
          continue;
        }
        for (int64_t oy = ry.lo; oy < ry.hi; ++oy) {
          float* row = col + oy * d.ow;
          std::fill(row, row + rx.lo, 0.0f);
          std::fill(row + rx.hi, row + d.ow, 0.0f);
          if (rx.lo == rx.hi) continue;
          const float* in =
              plane + (oy * p.stride_h + dy) * x.s[2] + (rx.lo * p.stride_w + dx) * x.s[3];
          if (step == 1) {
            std::copy(in, in + (rx.hi - rx.lo), row + rx.lo);
          } else {
            for (int64_t ox = rx.lo; ox < rx.hi; ++ox) row[ox] = in[(ox - rx.lo) * step];
          }
        }
      }
    }
  }
}

// The transpose of Im2Col: adds each element of col (leading dimension ld) to the input
// position it came from, in Im2Col's row order. grad_x (any strides, no two elements at one
// address); channels [c0, c0 + cg) of image n are zeroed first. When a tap's rows are one run
// of dense grad_x rows (as Im2Col's one copy), col's padding columns are zeroed and the run is
// added at once (the positions between rows get +0).
void Col2Im(float* col, const ConvDims& d, const Conv2dParams& p, int64_t n, int64_t c0,
            const Strided4& grad_x, int64_t ld) {
  float* image = const_cast<float*>(grad_x.base) + n * grad_x.s[0];
  const int64_t sc = grad_x.s[1], sy = grad_x.s[2], sx = grad_x.s[3];
  for (int64_t c = c0; c < c0 + d.cg; ++c) {
    for (int64_t y = 0; y < d.h; ++y) {
      float* row = image + c * sc + y * sy;
      if (sx == 1) {
        std::fill(row, row + d.w, 0.0f);
      } else {
        for (int64_t xx = 0; xx < d.w; ++xx) row[xx * sx] = 0.0f;
      }
    }
  }
  const int64_t step = p.stride_w * sx;
  const bool one_run = sy == d.w && OneRun(sy, sx, d, p);
  for (int64_t c = 0; c < d.cg; ++c) {
    float* plane = image + (c0 + c) * sc;
    for (int64_t i = 0; i < d.kh; ++i) {
      const int64_t dy = i * p.dilation_h - p.pad_top;
      const TapRange ry(d.oh, d.h, p.stride_h, dy);
      for (int64_t j = 0; j < d.kw; ++j, col += ld) {
        const int64_t dx = j * p.dilation_w - p.pad_left;
        const TapRange rx(d.ow, d.w, p.stride_w, dx);
        if (one_run) {
          if (ry.lo == ry.hi || rx.lo == rx.hi) continue;
          ZeroColumns(col, d.ow, ry, 0, rx.lo);
          ZeroColumns(col, d.ow, ry, rx.hi, d.ow);
          const float* in = col + ry.lo * d.ow + rx.lo;
          float* out = plane + (ry.lo * p.stride_h + dy) * sy + rx.lo + dx;
          const int64_t run = (ry.hi - 1 - ry.lo) * d.ow + (rx.hi - rx.lo);
          for (int64_t e = 0; e < run; ++e) out[e] += in[e];
          continue;
        }
        for (int64_t oy = ry.lo; oy < ry.hi; ++oy) {
          if (rx.lo == rx.hi) break;
          const float* row = col + oy * d.ow;
          float* out = plane + (oy * p.stride_h + dy) * sy + (rx.lo * p.stride_w + dx) * sx;
          if (step == 1) {
            for (int64_t ox = rx.lo; ox < rx.hi; ++ox) out[ox - rx.lo] += row[ox];
          } else {
            for (int64_t ox = rx.lo; ox < rx.hi; ++ox) out[(ox - rx.lo) * step] += row[ox];
          }
        }
      }
    }
  }
}

// Unfolded rows of at most this many columns (output positions per image) take the shifted
// path (ShiftedTap) when the convolution allows it.
constexpr int64_t kShiftedCols = 256;

// One tap (i, j) of a convolution whose images are small (Cols <= kShiftedCols) and OneRun:
// the output positions [lo, hi) are the ones between the tap's first and last in-bounds
// positions, position e reading input element e - lo + from when keep[e] is all ones and +0 (a
// padding column) when it is 0; the positions outside [lo, hi) read padding. Built once per
// batch, then applied to every channel of it, all its images at once (conv_simd.cc): no
// per-row copies or range arithmetic for each image.
class ShiftedTap {
 public:
  ShiftedTap(const ConvDims& d, const Conv2dParams& p, int64_t sy, int64_t i, int64_t j) {
    plan_.cols = d.Cols();
    plan_.keep = keep_;
    const int64_t dy = i * p.dilation_h - p.pad_top, dx = j * p.dilation_w - p.pad_left;
    const TapRange ry(d.oh, d.h, p.stride_h, dy), rx(d.ow, d.w, p.stride_w, dx);
    if (ry.lo == ry.hi || rx.lo == rx.hi) return;  // every position reads padding
    plan_.lo = ry.lo * d.ow + rx.lo;
    plan_.hi = (ry.hi - 1) * d.ow + rx.hi;
    plan_.from = (ry.lo * p.stride_h + dy) * sy + rx.lo + dx;
    for (int64_t e = plan_.lo, ox = rx.lo; e < plan_.hi; ++e) {
      keep_[e] = ox >= rx.lo && ox < rx.hi ? ~0u : 0u;
      ox = ox + 1 == d.ow ? 0 : ox + 1;
    }
  }
  const TapPlan& plan() const { return plan_; }

 private:
  TapPlan plan_;
  uint32_t keep_[kShiftedCols] = {};
};

// Im2Col of images [n0, n0 + m), side by side: image i's columns start at col + i * Cols. Small
// OneRun images unfold tap by tap (ShiftedTap), the others image by image.
void Im2ColImages(const ConvSimd& simd, const Strided4& x, const ConvDims& d, const Conv2dParams& p,
                  int64_t n0, int64_t m, int64_t c0, float* col, int64_t ld) {
  if (d.Cols() > kShiftedCols || !OneRun(x.s[2], x.s[3], d, p)) {
    for (int64_t i = 0; i < m; ++i) Im2Col(x, d, p, n0 + i, c0, col + i * d.Cols(), ld);
    return;
  }
  for (int64_t i = 0; i < d.kh; ++i) {
    for (int64_t j = 0; j < d.kw; ++j) {
      const ShiftedTap tap(d, p, x.s[2], i, j);
      for (int64_t c = 0; c < d.cg; ++c) {
        simd.unfold(tap.plan(), x.base + n0 * x.s[0] + (c0 + c) * x.s[1], x.s[0], m,
                    col + ((c * d.kh + i) * d.kw + j) * ld);
      }
    }
  }
}

// Col2Im of images [n0, n0 + m) from col as Im2ColImages lays them out. Small OneRun images
// with dense rows (grad_x's row stride W: the +0 of padding columns lands inside grad_x) fold
// tap by tap; each element's additions keep Col2Im's order (channel, then tap), so the sums
// are the same bits either way.
void Col2ImImages(const ConvSimd& simd, float* col, const ConvDims& d, const Conv2dParams& p,
                  int64_t n0, int64_t m, int64_t c0, const Strided4& grad_x, int64_t ld) {
  const int64_t* s = grad_x.s;
  if (d.Cols() > kShiftedCols || s[2] != d.w || !OneRun(s[2], s[3], d, p)) {
    for (int64_t i = 0; i < m; ++i) Col2Im(col + i * d.Cols(), d, p, n0 + i, c0, grad_x, ld);
    return;
  }
  float* image = const_cast<float*>(grad_x.base);
  const int64_t plane = d.h * d.w;
  for (int64_t n = n0; n < n0 + m; ++n) {  // channels [c0, c0 + cg) zeroed, one run when dense
    if (s[1] == plane) {
      std::fill(image + n * s[0] + c0 * s[1], image + n * s[0] + (c0 + d.cg) * s[1], 0.0f);
      continue;
    }
    for (int64_t c = c0; c < c0 + d.cg; ++c) {
      std::fill(image + n * s[0] + c * s[1], image + n * s[0] + c * s[1] + plane, 0.0f);
    }
  }
  for (int64_t i = 0; i < d.kh; ++i) {
    for (int64_t j = 0; j < d.kw; ++j) {
      const ShiftedTap tap(d, p, s[2], i, j);
      for (int64_t c = 0; c < d.cg; ++c) {
        simd.fold(tap.plan(), col + ((c * d.kh + i) * d.kw + j) * ld, m,
                  image + n0 * s[0] + (c0 + c) * s[1], s[0]);
      }
    }
  }
}

blasint B(int64_t v) { return static_cast<blasint>(v); }

// Small images are unfolded side by side so that one sgemm does up to this many multiply-adds:
// OpenBLAS's cost per call (packing, its threading decision) is then paid per batch, not per
// image (a 256-image batch of 8x8 images made 1 280 calls a training step). OpenBLAS runs a
// product of at most 65536 * 4 multiply-adds on the calling thread (interface/gemm.c,
// GEMM_MULTITHREAD_THRESHOLD 4), so a batch never wakes its threads, whose spinning took a
// core from the kernels' pool.
constexpr int64_t kBatchWork = int64_t{1} << 18;

// How the fast kernels batch images: `images` per sgemm, their columns side by side with
// leading dimension ld, `count` batches in all. Taken from the formula's output extents
// (ConvDimsOf(x, w, p)), which bound the actual ones, so the scratch sized from the shapes
// always holds a batch.
struct Batch {
  int64_t images, ld, count;
};
Batch BatchOf(const Shape& x, const Shape& w, const Conv2dParams& p) {
  const ConvDims f = ConvDimsOf(x, w, p);
  int64_t images = kBatchWork;  // divided step by step: the product may not fit
  for (const int64_t e : {f.kg, f.Rows(), f.Cols()}) images /= std::max<int64_t>(e, 1);
  images = std::clamp<int64_t>(images, 1, std::max<int64_t>(f.n, 1));
  return {images, images * f.Cols(), (f.n + images - 1) / images};
}

// Batches run on several threads, each with its own unfolded batch (a slot of the scratch),
// when a slot is at most this large: small images, whose kernels are short enough that one
// thread's share is worth a hop. Larger problems keep one slot and stay on the caller.
constexpr int64_t kSlotFloats = int64_t{1} << 20;

// The weight gradient sums its batches into at most this many parts (each part's batches in
// order, then the parts in order) so that threads can share it; the parts depend on the shapes
// alone, so the bits do not depend on the number of threads.
constexpr int64_t kWeightParts = 8;

// A slot: one batch unfolded (Rows x ld) and a batch's output or output gradient (K x ld).
int64_t SlotFloats(const ConvDims& d, const Batch& b) { return d.Rows() * b.ld + d.k * b.ld; }

// Whether the batches are small enough to share between threads (a slot of kSlotFloats).
bool SplitsBatches(const ConvDims& d, const Batch& b) { return SlotFloats(d, b) <= kSlotFloats; }

// The slots a problem's batches spread over on `threads` threads (1 when a slot is large).
int64_t SlotsOf(const ConvDims& d, const Batch& b, int threads) {
  return SplitsBatches(d, b) ? std::clamp<int64_t>(threads, 1, std::max<int64_t>(b.count, 1)) : 1;
}

// The parts of the weight gradient: one for a large slot, else up to kWeightParts.
int64_t WeightPartsOf(const ConvDims& d, const Batch& b) {
  return SplitsBatches(d, b) ? std::clamp<int64_t>(b.count, 1, kWeightParts) : 1;
}

// Scratch layout: [weights (or the weight gradient's parts after the first): K x Rows each]
// [slot 0][slot 1]...
struct Scratch {
  float* weights;
  float* slots;
  int64_t slot_floats;
  Scratch(const ConvDims& d, const Batch& b, int64_t weight_blocks, std::span<float> s)
      : weights(s.data()),
        slots(weights + weight_blocks * d.k * d.Rows()),
        slot_floats(SlotFloats(d, b)) {}
  float* Col(int64_t slot) const { return slots + slot * slot_floats; }
  float* Out(const ConvDims& d, const Batch& b, int64_t slot) const {
    return Col(slot) + d.Rows() * b.ld;
  }
  static int64_t Floats(const ConvDims& d, const Batch& b, int threads) {
    const int64_t weight_blocks = std::max<int64_t>(1, WeightPartsOf(d, b) - 1);
    return weight_blocks * d.k * d.Rows() + SlotsOf(d, b, threads) * SlotFloats(d, b);
  }
};

// Runs body(n0, m, slot) for every batch (images [n0, n0 + m)), the batches split into
// contiguous runs over the pool, each run on its own slot; stops between batches once cancel
// is cancelled.
template <typename Body>
void ForEachBatch(ThreadPool& pool, const ConvDims& d, const Batch& b, const CancelToken* cancel,
                  const Body& body) {
  const int64_t slots = SlotsOf(d, b, pool.threads());
  pool.ParallelFor(slots, [&](int64_t slot) {
    for (int64_t k = b.count * slot / slots; k < b.count * (slot + 1) / slots; ++k) {
      if (Cancelled(cancel)) return;
      const int64_t n0 = k * b.images;
      body(n0, std::min(b.images, d.n - n0), slot);
    }
  });
}

// Whether the oneDNN path is built in: the TSan build leaves it out (OpenMP's threads are
// invisible to ThreadSanitizer, which would report libgomp's own synchronization).
#ifdef ONEMODEL_NO_DNNL
constexpr bool kDnnl = false;
#else
constexpr bool kDnnl = true;
#endif

// Output channel k's bias, +0 without one.
float BiasAt(const Tensor* bias, int64_t k) {
  return bias ? bias->Storage<float>()[bias->offset() + k * bias->strides()[0]] : 0;
}

// Sets out (NCHW contiguous or dense NHWC) to the bias of each output channel (0 without one).
void FillBias(const Tensor* bias, const ConvDims& d, bool nhwc, int64_t n, float* po) {
  for (int64_t k = 0; k < d.k; ++k) {
    const float b = BiasAt(bias, k);
    if (nhwc) {
      for (int64_t e = 0; e < d.Cols(); ++e) po[(n * d.Cols() + e) * d.k + k] = b;
    } else {
      std::fill(po + (n * d.k + k) * d.Cols(), po + (n * d.k + k + 1) * d.Cols(), b);
    }
  }
}

// Sets the channels k0, k0 + 1, ... of images [n0, n0 + m) of out (NCHW contiguous) to their
// bias (none: +0) plus the K x (m * Cols) product of those images (leading dimension ld; rows:
// the output channels): the bits of FillBias followed by adding the product.
void BiasPlusImages(const Tensor* bias, const float* product, int64_t ld, const ConvDims& d,
                    int64_t n0, int64_t m, int64_t k0, float* po) {
  for (int64_t k = 0; k < d.kg; ++k) {
    const float b = BiasAt(bias, k0 + k);
    for (int64_t i = 0; i < m; ++i) {
      const float* from = product + k * ld + i * d.Cols();
      float* to = po + ((n0 + i) * d.k + k0 + k) * d.Cols();
      for (int64_t e = 0; e < d.Cols(); ++e) to[e] = b + from[e];
    }
  }
}

}  // namespace

int64_t Conv2dFastScratchFloats(const Shape& x, const Shape& w, const Conv2dParams& p,
                                int threads) {
  const int64_t im2col = Scratch::Floats(ConvDimsOf(x, w, p), BatchOf(x, w, p), threads);
  if (!kDnnl || p.keep_layout == 0) return im2col;
  return std::max(im2col, DnnlConvScratchFloats(x, w, p, threads));
}

void Conv2dFast(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                Tensor& out, std::span<float> scratch, ThreadPool& pool, SimdTarget target) {
  if (kDnnl && DnnlConvApplies(x, w, out, bias, p)) {
    return DnnlConv2d(x, w, bias, p, out, scratch, pool.threads());
  }
  const ConvDims d = ConvDimsOf(x.shape(), w.shape(), out.shape(), p);
  float* po = out.MutableStorage<float>().data() + out.offset();
  if (out.ElementCount() == 0) return;
  const bool nhwc = out.layout() == Layout::kNhwc;
  const Batch batch = BatchOf(x.shape(), w.shape(), p);
  const Scratch s(d, batch, 1, scratch);
  const Strided4 vx(x);
  const ConvSimd& simd = ConvSimdFor(target);
  const float* pw = Dense(w, s.weights);
  if (!nhwc && x.IsContiguous() && ConvPlanesApply(d, target)) {
    return ConvPlanesForward(pool, d, p, vx.base, pw,
                             bias ? bias->Storage<float>().data() + bias->offset() : nullptr,
                             bias ? bias->strides()[0] : 0, po);
  }
  ForEachBatch(pool, d, batch, CurrentCancelToken(), [&](int64_t n0, int64_t m, int64_t slot) {
    const int64_t cols = m * d.Cols();
    float* col = s.Col(slot);
    if (nhwc || m == 1) {  // sgemm adds the product to the bias
      for (int64_t n = n0; n < n0 + m; ++n) FillBias(bias, d, nhwc, n, po);
    }
    for (int64_t g = 0; g < d.groups; ++g) {
      Im2ColImages(simd, vx, d, p, n0, m, g * d.cg, col, batch.ld);
      const float* wg = pw + g * d.kg * d.Rows();
      if (nhwc) {  // out_g^T (cols x kg) += col^T (cols x Rows) x w_g^T (Rows x kg)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, B(cols), B(d.kg), B(d.Rows()), 1.0f, col,
                    B(batch.ld), wg, B(d.Rows()), 1.0f, po + n0 * d.Cols() * d.k + g * d.kg,
                    B(d.k));
      } else if (m == 1) {  // out_g (kg x Cols) += w_g (kg x Rows) x col (Rows x Cols)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B(d.kg), B(cols), B(d.Rows()), 1.0f,
                    wg, B(d.Rows()), col, B(batch.ld), 1.0f, po + (n0 * d.k + g * d.kg) * d.Cols(),
                    B(d.Cols()));
      } else {  // the same for m images into the slot's out, then each image's channels set
        float* product = s.Out(d, batch, slot);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B(d.kg), B(cols), B(d.Rows()), 1.0f,
                    wg, B(d.Rows()), col, B(batch.ld), 0.0f, product, B(batch.ld));
        BiasPlusImages(bias, product, batch.ld, d, n0, m, g * d.kg, po);
      }
    }
  });
}

void Conv2dBackwardInputFast(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                             Tensor& grad_x, std::span<float> scratch, ThreadPool& pool,
                             SimdTarget target) {
  if (kDnnl && DnnlConvApplies(grad_x, w, grad_out, nullptr, p)) {
    return DnnlConv2dBackwardInput(grad_out, w, p, grad_x, scratch, pool.threads());
  }
  const ConvDims d = ConvDimsOf(grad_x.shape(), w.shape(), grad_out.shape(), p);
  const Strided4 vx(grad_x);
  const ConvSimd& simd = ConvSimdFor(target);
  if (grad_x.ElementCount() == 0) return;
  const Batch batch = BatchOf(grad_x.shape(), w.shape(), p);
  const Scratch s(d, batch, 1, scratch);
  const float* pw = Dense(w, s.weights);
  if (grad_x.IsContiguous() && grad_out.IsContiguous() && ConvPlanesApply(d, target)) {
    return ConvPlanesBackwardInput(pool, d, p, Strided4(grad_out).base, pw,
                                   grad_x.MutableStorage<float>().data() + grad_x.offset());
  }
  ForEachBatch(pool, d, batch, CurrentCancelToken(), [&](int64_t n0, int64_t m, int64_t slot) {
    const int64_t cols = m * d.Cols();
    float* col = s.Col(slot);
    const float* pg = GatherImages(grad_out, n0, m, batch.ld, s.Out(d, batch, slot));
    for (int64_t g = 0; g < d.groups; ++g) {
      if (d.kg == 0 || cols == 0) {
        for (int64_t r = 0; r < d.Rows(); ++r) {
          std::fill(col + r * batch.ld, col + r * batch.ld + cols, 0.0f);
        }
      } else {
        // col (Rows x cols) = w_g^T (Rows x kg) x grad_out_g (kg x cols)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, B(d.Rows()), B(cols), B(d.kg), 1.0f,
                    pw + g * d.kg * d.Rows(), B(d.Rows()), pg + g * d.kg * batch.ld, B(batch.ld),
                    0.0f, col, B(batch.ld));
      }
      Col2ImImages(simd, col, d, p, n0, m, g * d.cg, vx, batch.ld);
    }
  });
}

void Conv2dBackwardWeightFast(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                              Tensor& grad_w, std::span<float> scratch, ThreadPool& pool,
                              SimdTarget target) {
  if (kDnnl && DnnlConvApplies(x, grad_w, grad_out, nullptr, p)) {
    return DnnlConv2dBackwardWeight(grad_out, x, p, grad_w, scratch, pool.threads());
  }
  const ConvDims d = ConvDimsOf(x.shape(), grad_w.shape(), grad_out.shape(), p);
  const CancelToken* cancel = CurrentCancelToken();
  if (Cancelled(cancel)) return;
  float* pw = grad_w.MutableStorage<float>().data() + grad_w.offset();
  if (grad_out.IsContiguous() && x.IsContiguous() && ConvPlanesWeightApply(d, target)) {
    return ConvPlanesBackwardWeight(pool, d, p, Strided4(grad_out).base, Strided4(x).base, pw);
  }
  std::fill(pw, pw + grad_w.ElementCount(), 0.0f);
  if (d.Cols() == 0 || d.kg == 0) return;
  const Batch batch = BatchOf(x.shape(), grad_w.shape(), p);
  const int64_t parts = WeightPartsOf(d, batch), size = d.k * d.Rows();
  const Scratch s(d, batch, std::max<int64_t>(1, parts - 1), scratch);
  // Part q's sum: grad_w itself for the first, a block of the scratch for the others.
  const auto part_sum = [&](int64_t q) { return q == 0 ? pw : s.weights + (q - 1) * size; };
  const int64_t slots = SlotsOf(d, batch, pool.threads());
  const Strided4 vx(x);
  const ConvSimd& simd = ConvSimdFor(target);
  pool.ParallelFor(slots, [&](int64_t slot) {
    for (int64_t q = slot; q < parts; q += slots) {
      float* sum = part_sum(q);
      std::fill(sum, sum + size, 0.0f);
      for (int64_t k = batch.count * q / parts; k < batch.count * (q + 1) / parts; ++k) {
        if (Cancelled(cancel)) return;
        const int64_t n0 = k * batch.images, m = std::min(batch.images, d.n - n0);
        const int64_t cols = m * d.Cols();
        float* col = s.Col(slot);
        const float* pg = GatherImages(grad_out, n0, m, batch.ld, s.Out(d, batch, slot));
        for (int64_t g = 0; g < d.groups; ++g) {
          Im2ColImages(simd, vx, d, p, n0, m, g * d.cg, col, batch.ld);
          // sum_g (kg x Rows) += grad_out_g (kg x cols) x col^T (cols x Rows)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B(d.kg), B(d.Rows()), B(cols), 1.0f,
                      pg + g * d.kg * batch.ld, B(batch.ld), col, B(batch.ld), 1.0f,
                      sum + g * d.kg * d.Rows(), B(d.Rows()));
        }
      }
    }
  });
  for (int64_t q = 1; q < parts; ++q) {  // the parts in order: the same bits on any pool
    const float* sum = part_sum(q);
    for (int64_t e = 0; e < size; ++e) pw[e] += sum[e];
  }
}

}  // namespace onemodel::internal
