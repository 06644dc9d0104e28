// Scalar elementwise maps over broadcast operands, for gradient formulas: Map(shape, fn, ins...)
// is a new FLOAT tensor whose element i is fn(in0[i], in1[i], ...), each input expanded to
// `shape`. Used by backward passes, where clarity beats SIMD. Stops early (out incomplete)
// once the thread's CancelToken is cancelled.
#pragma once

#include <array>

#include "core/autograd/op_context.h"
#include "core/kernels/elementwise_loop.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops::internal {

template <typename Fn, typename... In>
Tensor Map(const Shape& shape, const OpContext& ctx, const Fn& fn, const In&... ins) {
  constexpr int N = 1 + sizeof...(In);
  Tensor out = NewFloat(shape, ctx);
  if (shape.IsEmpty()) return out;
  const std::array<Tensor, N - 1> expanded{ins.Expand(shape)...};
  std::array<float*, N> bases{onemodel::internal::BaseForWrite(out)};
  std::array<const Strides*, N> strides{&out.strides()};
  for (int k = 1; k < N; ++k) {
    bases[static_cast<size_t>(k)] = onemodel::internal::Base(expanded[static_cast<size_t>(k - 1)]);
    strides[static_cast<size_t>(k)] = &expanded[static_cast<size_t>(k - 1)].strides();
  }
  onemodel::internal::RunRows<N>(
      shape, bases, strides,
      [&](int64_t n, const std::array<float*, N>& p, const std::array<int64_t, N>& s) {
        for (int64_t i = 0; i < n; ++i) {
          [&]<size_t... K>(std::index_sequence<K...>) {
            p[0][i * s[0]] = fn(p[K + 1][i * s[K + 1]]...);
          }
          (std::make_index_sequence<N - 1>());
        }
      });
  return out;
}

}  // namespace onemodel::ops::internal
