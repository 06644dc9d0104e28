#include <algorithm>
#include <cstdint>

#include "core/common/cancellation.h"
#include "core/kernels/internal/avgpool.h"

namespace onemodel::internal {

void AvgPool2dReference(const Tensor& x, const AvgPool2dParams& p, Tensor& out) {
  const float* in = x.Storage<float>().data();
  float* o = out.MutableStorage<float>().data();
  const int64_t n_ = x.shape()[0], c_ = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oh = out.shape()[2], ow = out.shape()[3];
  const Strides& s = x.strides();
  const Strides& so = out.strides();
  const CancelToken* cancel = CurrentCancelToken();
  const CancelToken* window_cancel = LongWindowToken(cancel, int64_t{p.kernel_h} * p.kernel_w);
  for (int64_t n = 0; n < n_; ++n) {
    for (int64_t c = 0; c < c_; ++c) {
      const float* plane = in + x.offset() + n * s[0] + c * s[1];
      for (int64_t oy = 0; oy < oh; ++oy) {
        const AvgSpan ys = AvgClip(oy, p.stride_h, p.pad_h, p.kernel_h, h, p.count_include_pad);
        for (int64_t ox = 0; ox < ow; ++ox) {
          if (Cancelled(cancel)) return;
          const AvgSpan xs = AvgClip(ox, p.stride_w, p.pad_w, p.kernel_w, w, p.count_include_pad);
          float sum = 0.0f;
          for (int64_t y = ys.lo; y < ys.hi; ++y) {
            if (Cancelled(window_cancel)) return;
            ForEachChunk(window_cancel, xs.hi - xs.lo, [&](int64_t begin, int64_t end) {
              for (int64_t xx = xs.lo + begin; xx < xs.lo + end; ++xx) {
                sum += plane[y * s[2] + xx * s[3]];
              }
            });
          }
          o[out.offset() + n * so[0] + c * so[1] + oy * so[2] + ox * so[3]] =
              sum / static_cast<float>(ys.count * xs.count);
        }
      }
    }
  }
}

void AvgPool2dBackwardPlanes(const Tensor& grad_out, const AvgPool2dParams& p, const Shape& x_shape,
                             float* gx, int64_t begin, int64_t end) {
  const float* g = grad_out.Storage<float>().data() + grad_out.offset();
  const int64_t c_ = x_shape[1], h = x_shape[2], w = x_shape[3];
  const int64_t oh = grad_out.shape()[2], ow = grad_out.shape()[3];
  const Strides& s = grad_out.strides();
  const CancelToken* cancel = CurrentCancelToken();
  const CancelToken* window_cancel = LongWindowToken(cancel, int64_t{p.kernel_h} * p.kernel_w);
  for (int64_t plane = begin; plane < end; ++plane) {
    float* dst = gx + plane * h * w;
    std::fill(dst, dst + h * w, 0.0f);
    const float* gp = g + (plane / c_) * s[0] + (plane % c_) * s[1];
    for (int64_t oy = 0; oy < oh; ++oy) {
      if (Cancelled(cancel)) return;
      const AvgSpan ys = AvgClip(oy, p.stride_h, p.pad_h, p.kernel_h, h, p.count_include_pad);
      for (int64_t ox = 0; ox < ow; ++ox) {
        if (Cancelled(window_cancel)) return;
        const AvgSpan xs = AvgClip(ox, p.stride_w, p.pad_w, p.kernel_w, w, p.count_include_pad);
        const float v = gp[oy * s[2] + ox * s[3]] / static_cast<float>(ys.count * xs.count);
        for (int64_t y = ys.lo; y < ys.hi; ++y) {
          for (int64_t xx = xs.lo; xx < xs.hi; ++xx) dst[y * w + xx] += v;
        }
      }
    }
  }
}

void AvgPool2dBackwardReference(const Tensor& grad_out, const AvgPool2dParams& p, Tensor& grad_x) {
  AvgPool2dBackwardPlanes(grad_out, p, grad_x.shape(), grad_x.MutableData<float>().data(), 0,
                          grad_x.shape()[0] * grad_x.shape()[1]);
}

}  // namespace onemodel::internal
