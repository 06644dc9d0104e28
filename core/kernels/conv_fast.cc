#include <cblas.h>

#include <algorithm>

#include "core/common/cancellation.h"
#include "core/kernels/internal/conv.h"
#include "core/kernels/internal/conv_dnnl.h"

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

// Dense row-major copy of t[i0] (i0 < 0: all of t) into `dense`, or t's own memory when
// that already is dense.
const float* Dense(const Tensor& t, int64_t i0, float* dense) {
  const Strided4 v(t);
  const Shape& e = t.shape();
  if (t.IsContiguous()) return v.base + std::max<int64_t>(i0, 0) * v.s[0];
  const int64_t first = i0 < 0 ? 0 : i0, last = i0 < 0 ? e[0] : i0 + 1;
  float* o = dense;
  for (int64_t a = first; a < last; ++a) {
    for (int64_t b = 0; b < e[1]; ++b) {
      for (int64_t c = 0; c < e[2]; ++c) {
        const float* row = v.base + a * v.s[0] + b * v.s[1] + c * v.s[2];
        for (int64_t d = 0; d < e[3]; ++d) *o++ = row[d * v.s[3]];
      }
    }
  }
  return dense;
}

// col (Rows x Cols) = the unfolded input channels [c0, c0 + cg) of image n: row (c, i, j)
// holds, per output position, the input element tap (i, j) reads there, 0 in the padding.
void Im2Col(const Strided4& x, const ConvDims& d, const Conv2dParams& p, int64_t n, int64_t c0,
            float* col) {
  for (int64_t c = 0; c < d.cg; ++c) {
    const float* plane = x.base + n * x.s[0] + (c0 + c) * x.s[1];
    for (int64_t i = 0; i < d.kh; ++i) {
      for (int64_t j = 0; j < d.kw; ++j, col += d.Cols()) {
        for (int64_t oy = 0; oy < d.oh; ++oy) {
          float* row = col + oy * d.ow;
          const int64_t y = oy * p.stride_h - p.pad_top + i * p.dilation_h;
          if (y < 0 || y >= d.h) {
            std::fill(row, row + d.ow, 0.0f);
            continue;
          }
          const float* in = plane + y * x.s[2];
          for (int64_t ox = 0; ox < d.ow; ++ox) {
            const int64_t xx = ox * p.stride_w - p.pad_left + j * p.dilation_w;
            row[ox] = xx >= 0 && xx < d.w ? in[xx * x.s[3]] : 0.0f;
          }
        }
      }
    }
  }
}

// The transpose of Im2Col: adds each element of col to the input position it came from.
// grad_x (any strides, no two elements at one address); channels [c0, c0 + cg) of image n
// are zeroed first.
void Col2Im(const float* col, const ConvDims& d, const Conv2dParams& p, int64_t n, int64_t c0,
            const Strided4& grad_x) {
  float* image = const_cast<float*>(grad_x.base) + n * grad_x.s[0];
  const int64_t sc = grad_x.s[1], sy = grad_x.s[2], sx = grad_x.s[3];
  for (int64_t c = c0; c < c0 + d.cg; ++c) {
    for (int64_t y = 0; y < d.h; ++y) {
      for (int64_t xx = 0; xx < d.w; ++xx) image[c * sc + y * sy + xx * sx] = 0.0f;
    }
  }
  for (int64_t c = 0; c < d.cg; ++c) {
    float* plane = image + (c0 + c) * sc;
    for (int64_t i = 0; i < d.kh; ++i) {
      for (int64_t j = 0; j < d.kw; ++j, col += d.Cols()) {
        for (int64_t oy = 0; oy < d.oh; ++oy) {
          const int64_t y = oy * p.stride_h - p.pad_top + i * p.dilation_h;
          if (y < 0 || y >= d.h) continue;
          const float* row = col + oy * d.ow;
          for (int64_t ox = 0; ox < d.ow; ++ox) {
            const int64_t xx = ox * p.stride_w - p.pad_left + j * p.dilation_w;
            if (xx >= 0 && xx < d.w) plane[y * sy + xx * sx] += row[ox];
          }
        }
      }
    }
  }
}

blasint B(int64_t v) { return static_cast<blasint>(v); }

// Scratch layout: [col: Rows x Cols][weights: K x Rows][one image's grad_out: K x Cols].
struct Scratch {
  float* col;
  float* weights;
  float* grad_out;
  Scratch(const ConvDims& d, std::span<float> s)
      : col(s.data()), weights(col + d.Rows() * d.Cols()), grad_out(weights + d.k * d.Rows()) {}
};

// Whether the oneDNN path is built in: the TSan build leaves it out (OpenMP's threads are
// invisible to ThreadSanitizer, which would report libgomp's own synchronization).
#ifdef ONEMODEL_NO_DNNL
constexpr bool kDnnl = false;
#else
constexpr bool kDnnl = true;
#endif

// Sets out (NCHW contiguous or dense NHWC) to the bias of each output channel (0 without one).
void FillBias(const Tensor* bias, const ConvDims& d, bool nhwc, int64_t n, float* po) {
  for (int64_t k = 0; k < d.k; ++k) {
    const float b = bias ? bias->Storage<float>()[bias->offset() + k * bias->strides()[0]] : 0;
    if (nhwc) {
      for (int64_t e = 0; e < d.Cols(); ++e) po[(n * d.Cols() + e) * d.k + k] = b;
    } else {
      std::fill(po + (n * d.k + k) * d.Cols(), po + (n * d.k + k + 1) * d.Cols(), b);
    }
  }
}

}  // namespace

int64_t Conv2dFastScratchFloats(const Shape& x, const Shape& w, const Conv2dParams& p,
                                int threads) {
  const ConvDims d = ConvDimsOf(x, w, p);
  const int64_t im2col = d.Rows() * d.Cols() + d.k * d.Rows() + d.k * d.Cols();
  if (!kDnnl || p.keep_layout == 0) return im2col;
  return std::max(im2col, DnnlConvScratchFloats(x, w, p, threads));
}

void Conv2dFast(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                Tensor& out, std::span<float> scratch, int threads) {
  if (kDnnl && DnnlConvApplies(x, w, out, bias, p)) {
    return DnnlConv2d(x, w, bias, p, out, scratch, threads);
  }
  const ConvDims d = ConvDimsOf(x.shape(), w.shape(), out.shape(), p);
  float* po = out.MutableStorage<float>().data() + out.offset();
  if (out.ElementCount() == 0) return;
  const bool nhwc = out.layout() == Layout::kNhwc;
  const Scratch s(d, scratch);
  const Strided4 vx(x);
  const float* pw = Dense(w, -1, s.weights);
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t n = 0; n < d.n; ++n) {
    if (Cancelled(cancel)) return;
    FillBias(bias, d, nhwc, n, po);
    for (int64_t g = 0; g < d.groups; ++g) {
      Im2Col(vx, d, p, n, g * d.cg, s.col);
      const float* wg = pw + g * d.kg * d.Rows();
      if (nhwc) {  // out_g^T (Cols x kg) += col^T (Cols x Rows) x w_g^T (Rows x kg)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, B(d.Cols()), B(d.kg), B(d.Rows()), 1.0f,
                    s.col, B(d.Cols()), wg, B(d.Rows()), 1.0f, po + n * d.Cols() * d.k + g * d.kg,
                    B(d.k));
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B(d.kg), B(d.Cols()), B(d.Rows()),
                    1.0f, wg, B(d.Rows()), s.col, B(d.Cols()), 1.0f,
                    po + (n * d.k + g * d.kg) * d.Cols(), B(d.Cols()));
      }
    }
  }
}

void Conv2dBackwardInputFast(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                             Tensor& grad_x, std::span<float> scratch, int threads) {
  if (kDnnl && DnnlConvApplies(grad_x, w, grad_out, nullptr, p)) {
    return DnnlConv2dBackwardInput(grad_out, w, p, grad_x, scratch, threads);
  }
  const ConvDims d = ConvDimsOf(grad_x.shape(), w.shape(), grad_out.shape(), p);
  const Strided4 vx(grad_x);
  if (grad_x.ElementCount() == 0) return;
  const Scratch s(d, scratch);
  const float* pw = Dense(w, -1, s.weights);
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t n = 0; n < d.n; ++n) {
    if (Cancelled(cancel)) return;
    const float* pg = Dense(grad_out, n, s.grad_out);
    for (int64_t g = 0; g < d.groups; ++g) {
      if (d.kg == 0 || d.Cols() == 0) {
        std::fill(s.col, s.col + d.Rows() * d.Cols(), 0.0f);
      } else {
        // col (Rows x Cols) = w_g^T (Rows x kg) x grad_out_g (kg x Cols)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, B(d.Rows()), B(d.Cols()), B(d.kg),
                    1.0f, pw + g * d.kg * d.Rows(), B(d.Rows()), pg + g * d.kg * d.Cols(),
                    B(d.Cols()), 0.0f, s.col, B(d.Cols()));
      }
      Col2Im(s.col, d, p, n, g * d.cg, vx);
    }
  }
}

void Conv2dBackwardWeightFast(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                              Tensor& grad_w, std::span<float> scratch, int threads) {
  if (kDnnl && DnnlConvApplies(x, grad_w, grad_out, nullptr, p)) {
    return DnnlConv2dBackwardWeight(grad_out, x, p, grad_w, scratch, threads);
  }
  const ConvDims d = ConvDimsOf(x.shape(), grad_w.shape(), grad_out.shape(), p);
  const CancelToken* cancel = CurrentCancelToken();
  if (Cancelled(cancel)) return;
  float* pw = grad_w.MutableStorage<float>().data() + grad_w.offset();
  std::fill(pw, pw + grad_w.ElementCount(), 0.0f);
  if (d.Cols() == 0 || d.kg == 0) return;
  const Scratch s(d, scratch);
  const Strided4 vx(x);
  for (int64_t n = 0; n < d.n; ++n) {
    if (Cancelled(cancel)) return;
    const float* pg = Dense(grad_out, n, s.grad_out);
    for (int64_t g = 0; g < d.groups; ++g) {
      Im2Col(vx, d, p, n, g * d.cg, s.col);
      // grad_w_g (kg x Rows) += grad_out_g (kg x Cols) x col^T (Cols x Rows)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B(d.kg), B(d.Rows()), B(d.Cols()), 1.0f,
                  pg + g * d.kg * d.Cols(), B(d.Cols()), s.col, B(d.Cols()), 1.0f,
                  pw + g * d.kg * d.Rows(), B(d.Rows()));
    }
  }
}

}  // namespace onemodel::internal
