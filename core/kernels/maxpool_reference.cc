#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/common/cancellation.h"
#include "core/kernels/internal/maxpool.h"

namespace onemodel::internal {

void MaxPool2dReference(const Tensor& x, const MaxPool2dParams& p, Tensor& out, Tensor* indices) {
  const float* in = x.Storage<float>().data();
  float* o = out.MutableStorage<float>().data();
  int32_t* idx = indices ? indices->MutableStorage<int32_t>().data() : nullptr;
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
        for (int64_t ox = 0; ox < ow; ++ox) {
          if (Cancelled(cancel)) return;
          // relu: the scan starts from a +0 at index -1, which wins ties.
          float best = 0.0f;
          int64_t at = -1;
          bool first = !p.relu;
          for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
            if (Cancelled(window_cancel)) return;
            const int64_t y = oy * p.stride_h - p.pad_h + ky * p.dilation_h;
            if (y < 0 || y >= h) continue;
            ForEachChunk(window_cancel, p.kernel_w, [&](int64_t begin, int64_t end) {
              for (int64_t kx = begin; kx < end; ++kx) {
                const int64_t xx = ox * p.stride_w - p.pad_w + kx * p.dilation_w;
                if (xx < 0 || xx >= w) continue;
                const float v = plane[y * s[2] + xx * s[3]];
                // The first element, a first NaN, or a strictly larger value wins.
                if (first || (!std::isnan(best) && (std::isnan(v) || v > best))) {
                  best = v;
                  at = y * w + xx;
                  first = false;
                }
              }
            });
          }
          const int64_t dst = out.offset() + n * so[0] + c * so[1] + oy * so[2] + ox * so[3];
          o[dst] = best;
          if (idx) {
            const Strides& si = indices->strides();
            idx[indices->offset() + n * si[0] + c * si[1] + oy * si[2] + ox * si[3]] =
                static_cast<int32_t>(at);
          }
        }
      }
    }
  }
}

void MaxPool2dBackwardReference(const Tensor& grad_out, const Tensor& indices, Tensor& grad_x) {
  const std::span<float> gx = grad_x.MutableData<float>();
  std::fill(gx.begin(), gx.end(), 0.0f);
  const float* g = grad_out.Storage<float>().data();
  const int32_t* idx = indices.Storage<int32_t>().data();
  const int64_t n_ = grad_out.shape()[0], c_ = grad_out.shape()[1];
  const int64_t oh = grad_out.shape()[2], ow = grad_out.shape()[3];
  const int64_t plane = grad_x.shape()[2] * grad_x.shape()[3];
  const Strides& s = grad_out.strides();
  const Strides& si = indices.strides();
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t n = 0; n < n_; ++n) {
    for (int64_t c = 0; c < c_; ++c) {
      float* dst = gx.data() + (n * c_ + c) * plane;
      for (int64_t oy = 0; oy < oh; ++oy) {
        if (Cancelled(cancel)) return;
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int32_t k = idx[indices.offset() + n * si[0] + c * si[1] + oy * si[2] + ox * si[3]];
          if (k >= 0) dst[k] += g[grad_out.offset() + n * s[0] + c * s[1] + oy * s[2] + ox * s[3]];
        }
      }
    }
  }
}

}  // namespace onemodel::internal
