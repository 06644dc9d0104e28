#include "core/kernels/internal/normalize.h"

#include <array>
#include <cmath>

#include "core/common/cancellation.h"

namespace onemodel::internal {
namespace {

constexpr int kLanes = 8;
using Lanes = std::array<double, kLanes>;

double Total(const Lanes& s) {
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

// Adds term(k, i) for every element of group k's blocks (k's first element at `base`) into
// lanes, in the fixed order the header describes.
template <typename Term>
double SumGroup(const NormGroups& l, int64_t base, const Term& term) {
  Lanes s{};
  for (int64_t b = 0; b < l.blocks; ++b) {
    const int64_t at = base + b * l.block_stride;
    int64_t i = 0;
    for (; i + kLanes <= l.block; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) s[j] += term(at + i + j, i + j);
    }
    for (; i < l.block; ++i) s[static_cast<size_t>(i % kLanes)] += term(at + i, i);
  }
  return Total(s);
}

// Calls fn(element index, position i in the block) for every element of the group.
template <typename Fn>
void EachElement(const NormGroups& l, int64_t base, const Fn& fn) {
  for (int64_t b = 0; b < l.blocks; ++b) {
    const int64_t at = base + b * l.block_stride;
    for (int64_t i = 0; i < l.block; ++i) fn(at + i, i);
  }
}

}  // namespace

void NormalizeGroups(const NormForwardArgs& a, int64_t begin, int64_t end) {
  const NormGroups& l = a.layout;
  const double count = static_cast<double>(l.blocks * l.block);
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    const int64_t base = k * l.group_stride;
    const float* x = a.x;
    double mean = 0, var;
    if (a.mean) {
      mean = a.mean[k];
      var = a.var[k];
    } else if (a.center) {
      mean = SumGroup(l, base, [x](int64_t e, int64_t) { return double{x[e]}; }) / count;
      var = SumGroup(l, base,
                     [x, mean](int64_t e, int64_t) {
                       const double d = x[e] - mean;
                       return d * d;
                     }) /
            count;
    } else {
      var = SumGroup(l, base, [x](int64_t e, int64_t) { return double{x[e]} * x[e]; }) / count;
    }
    const double rstd = 1.0 / std::sqrt(var + double{a.eps});
    if (a.rstd) a.rstd[k] = static_cast<float>(rstd);
    if (a.running_mean) {
      const double m = a.momentum;
      a.running_mean[k] = static_cast<float>(m * mean + (1 - m) * a.running_mean[k]);
      a.running_var[k] =
          static_cast<float>(m * var * count / (count - 1) + (1 - m) * a.running_var[k]);
    }
    const bool per_group = l.affine_per_group;
    EachElement(l, base, [&](int64_t e, int64_t i) {
      const int64_t p = per_group ? k : i;
      const double xhat = (x[e] - mean) * rstd;
      if (a.xhat) a.xhat[e] = static_cast<float>(xhat);
      const double scaled = a.scale ? xhat * a.scale[p] : xhat;
      a.y[e] = static_cast<float>(a.bias ? scaled + a.bias[p] : scaled);
    });
  }
}

void NormalizeBackwardGroups(const NormBackwardArgs& a, int64_t begin, int64_t end) {
  const NormGroups& l = a.layout;
  const double count = static_cast<double>(l.blocks * l.block);
  const bool per_group = l.affine_per_group;
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    const int64_t base = k * l.group_stride;
    const float *g = a.g, *scale = a.scale, *xhat = a.xhat;
    const auto gh = [&](int64_t e, int64_t i) {
      return scale ? double{g[e]} * scale[per_group ? k : i] : double{g[e]};
    };
    double mean_gh = 0, mean_ghx = 0;
    if (!a.fixed_stats) {
      if (a.center) mean_gh = SumGroup(l, base, gh) / count;
      mean_ghx =
          SumGroup(l, base, [&](int64_t e, int64_t i) { return gh(e, i) * xhat[e]; }) / count;
    }
    const double rstd = a.rstd[k];
    EachElement(l, base, [&](int64_t e, int64_t i) {
      a.dx[e] = static_cast<float>(rstd * (gh(e, i) - mean_gh - xhat[e] * mean_ghx));
    });
  }
}

}  // namespace onemodel::internal
