// Scalar elementwise maps over broadcast operands, for gradient formulas: Map(shape, fn, ins...)
// is a new FLOAT tensor whose element i is fn(in0[i], in1[i], ...), each input expanded to
// `shape`. Used by backward passes, where clarity beats hand-written SIMD; rows whose operands
// all have unit strides take a loop the compiler vectorizes (the same bits). Stops early (out
// incomplete) once the thread's CancelToken is cancelled.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

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
        [&]<size_t... K>(std::index_sequence<K...>) {
          if (((s[K + 1] == 1) && ... && (s[0] == 1))) {  // unit strides: a loop that vectorizes
            for (int64_t i = 0; i < n; ++i) p[0][i] = fn(p[K + 1][i]...);
            return;
          }
          for (int64_t i = 0; i < n; ++i) p[0][i * s[0]] = fn(p[K + 1][i * s[K + 1]]...);
        }
        (std::make_index_sequence<N - 1>());
      });
  return out;
}

}  // namespace onemodel::ops::internal

namespace onemodel::ops::internal {

// The storage element type MapInto reads and writes for T: BOOL as its bytes, so that any
// nonzero byte counts as true (core/convert/cast.h).
template <typename T>
using MapStorage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// out[i] = fn(in0[i], in1[i], ...) for every element of `out` (stored as Out, any strides);
// input k is an In_k tensor already expanded to out's shape. For the ops whose inputs or output
// are not all FLOAT (comparisons to BOOL, Where's BOOL condition). Stops early (out incomplete)
// once the thread's CancelToken is cancelled.
template <typename Out, typename... In, typename Fn, typename... Ts>
void MapInto(Tensor& out, const Fn& fn, const Ts&... ins) {
  static_assert(sizeof...(In) == sizeof...(Ts), "one element type per input");
  constexpr int N = 1 + sizeof...(In);
  const int64_t total = out.shape().ElementCount();
  if (total == 0) return;
  using OutStore = MapStorage<Out>;
  OutStore* o = reinterpret_cast<OutStore*>(out.MutableStorage<Out>().data()) + out.offset();
  const std::tuple<const MapStorage<In>*...> in{
      (reinterpret_cast<const MapStorage<In>*>(ins.template Storage<In>().data()) +
       ins.offset())...};
  const auto walk = onemodel::internal::WalkOf<N>(out.shape(), {&out.strides(), &ins.strides()...});
  std::array<int64_t, N> rs;
  for (int k = 0; k < N; ++k) rs[static_cast<size_t>(k)] = walk.RowStride(k);
  ForEachChunk(CurrentCancelToken(), total, [&](int64_t begin, int64_t end) {
    walk.ForEachRow(begin, end, [&](int64_t n, const auto& off) {
      for (int64_t i = 0; i < n; ++i) {
        [&]<size_t... K>(std::index_sequence<K...>) {
          o[off[0] + i * rs[0]] = static_cast<OutStore>(
              fn(static_cast<In>(std::get<K>(in)[off[K + 1] + i * rs[K + 1]])...));
        }(std::make_index_sequence<N - 1>());
      }
    });
  });
}

}  // namespace onemodel::ops::internal
