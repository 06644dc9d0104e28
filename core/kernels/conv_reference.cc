#include "core/common/cancellation.h"
#include "core/kernels/internal/conv.h"

namespace onemodel::internal {
namespace {

// Element (i0, i1, i2, i3) of a rank-4 float tensor with any strides.
struct View4 {
  const float* base;
  int64_t s0, s1, s2, s3;
  explicit View4(const Tensor& t)
      : base(t.Storage<float>().data() + t.offset()),
        s0(t.strides()[0]),
        s1(t.strides()[1]),
        s2(t.strides()[2]),
        s3(t.strides()[3]) {}
  double operator()(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return base[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3];
  }
};

// The writable counterpart: the output's storage and strides.
struct Out4 {
  float* base;
  int64_t s0, s1, s2, s3;
  explicit Out4(Tensor& t)
      : base(t.MutableStorage<float>().data() + t.offset()),
        s0(t.strides()[0]),
        s1(t.strides()[1]),
        s2(t.strides()[2]),
        s3(t.strides()[3]) {}
  float& operator()(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return base[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3];
  }
};

// The kernels look at their cancellation token before each output element, and also before
// each kernel row (each output row in the weight gradient) once one element takes at least
// this many multiply-adds (stride-0 views make such elements out of no memory).
constexpr int64_t kCheckWork = int64_t{1} << 20;

// Input coordinate that kernel tap `tap` of output position `o` reads (may be out of range).
int64_t InputAt(int64_t o, int64_t tap, int32_t stride, int32_t pad, int32_t dilation) {
  return o * stride - pad + tap * dilation;
}

}  // namespace

ConvDims ConvDimsOf(const Shape& x, const Shape& w, const Conv2dParams& p) {
  ConvDims d{};
  d.n = x[0], d.c = x[1], d.h = x[2], d.w = x[3];
  d.k = w[0], d.kh = w[2], d.kw = w[3];
  d.groups = p.groups, d.cg = w[1], d.kg = d.k / p.groups;
  d.oh = ConvOutputExtent(d.h, static_cast<int32_t>(d.kh), p.stride_h, p.pad_top, p.pad_bottom,
                          p.dilation_h);
  d.ow = ConvOutputExtent(d.w, static_cast<int32_t>(d.kw), p.stride_w, p.pad_left, p.pad_right,
                          p.dilation_w);
  return d;
}

ConvDims ConvDimsOf(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p) {
  ConvDims d = ConvDimsOf(x, w, p);
  d.oh = y[2], d.ow = y[3];
  return d;
}

void Conv2dReference(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                     Tensor& out) {
  const ConvDims d = ConvDimsOf(x.shape(), w.shape(), out.shape(), p);
  const View4 vx(x), vw(w);
  const Out4 vo(out);
  const CancelToken* cancel = CurrentCancelToken();
  const bool long_elements = d.cg * d.kh * d.kw >= kCheckWork;
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t k = 0; k < d.k; ++k) {
      const int64_t c0 = k / d.kg * d.cg;
      const double b = bias ? bias->Storage<float>()[bias->offset() + k * bias->strides()[0]] : 0;
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          if (Cancelled(cancel)) return;
          double acc = b;
          for (int64_t c = 0; c < d.cg; ++c) {
            for (int64_t i = 0; i < d.kh; ++i) {
              if (long_elements && Cancelled(cancel)) return;
              const int64_t y = InputAt(oy, i, p.stride_h, p.pad_top, p.dilation_h);
              if (y < 0 || y >= d.h) continue;
              for (int64_t j = 0; j < d.kw; ++j) {
                const int64_t xx = InputAt(ox, j, p.stride_w, p.pad_left, p.dilation_w);
                if (xx < 0 || xx >= d.w) continue;
                acc += vx(n, c0 + c, y, xx) * vw(k, c, i, j);
              }
            }
          }
          vo(n, k, oy, ox) = static_cast<float>(acc);
        }
      }
    }
  }
}

void Conv2dBackwardInputReference(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                                  Tensor& grad_x) {
  const ConvDims d = ConvDimsOf(grad_x.shape(), w.shape(), grad_out.shape(), p);
  const View4 vg(grad_out), vw(w);
  const Out4 vo(grad_x);
  const CancelToken* cancel = CurrentCancelToken();
  // Output row oy reads input row y through tap i when y + pad - i * dilation = oy * stride.
  auto source = [](int64_t y, int64_t tap, int32_t stride, int32_t pad, int32_t dilation,
                   int64_t extent) -> int64_t {
    const int64_t s = y + pad - tap * dilation;
    if (s < 0 || s % stride != 0 || s / stride >= extent) return -1;
    return s / stride;
  };
  const bool long_elements = d.kg * d.kh * d.kw >= kCheckWork;
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t c = 0; c < d.c; ++c) {
      const int64_t g = c / d.cg, cc = c % d.cg;
      for (int64_t y = 0; y < d.h; ++y) {
        for (int64_t xx = 0; xx < d.w; ++xx) {
          if (Cancelled(cancel)) return;
          double acc = 0;
          for (int64_t k = g * d.kg; k < (g + 1) * d.kg; ++k) {
            for (int64_t i = 0; i < d.kh; ++i) {
              if (long_elements && Cancelled(cancel)) return;
              const int64_t oy = source(y, i, p.stride_h, p.pad_top, p.dilation_h, d.oh);
              if (oy < 0) continue;
              for (int64_t j = 0; j < d.kw; ++j) {
                const int64_t ox = source(xx, j, p.stride_w, p.pad_left, p.dilation_w, d.ow);
                if (ox < 0) continue;
                acc += vg(n, k, oy, ox) * vw(k, cc, i, j);
              }
            }
          }
          vo(n, c, y, xx) = static_cast<float>(acc);
        }
      }
    }
  }
}

void Conv2dBackwardWeightReference(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                                   Tensor& grad_w) {
  const ConvDims d = ConvDimsOf(x.shape(), grad_w.shape(), grad_out.shape(), p);
  const View4 vg(grad_out), vx(x);
  const Out4 vo(grad_w);
  const CancelToken* cancel = CurrentCancelToken();
  const bool long_elements = d.n * d.oh * d.ow >= kCheckWork;
  for (int64_t k = 0; k < d.k; ++k) {
    const int64_t c0 = k / d.kg * d.cg;
    for (int64_t c = 0; c < d.cg; ++c) {
      for (int64_t i = 0; i < d.kh; ++i) {
        for (int64_t j = 0; j < d.kw; ++j) {
          if (Cancelled(cancel)) return;
          double acc = 0;
          for (int64_t n = 0; n < d.n; ++n) {
            for (int64_t oy = 0; oy < d.oh; ++oy) {
              if (long_elements && Cancelled(cancel)) return;
              const int64_t y = InputAt(oy, i, p.stride_h, p.pad_top, p.dilation_h);
              if (y < 0 || y >= d.h) continue;
              for (int64_t ox = 0; ox < d.ow; ++ox) {
                const int64_t xx = InputAt(ox, j, p.stride_w, p.pad_left, p.dilation_w);
                if (xx < 0 || xx >= d.w) continue;
                acc += vg(n, k, oy, ox) * vx(n, c0 + c, y, xx);
              }
            }
          }
          vo(k, c, i, j) = static_cast<float>(acc);
        }
      }
    }
  }
}

}  // namespace onemodel::internal
