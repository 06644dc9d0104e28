// The direct small-MatMul tiles, compiled once per SIMD target by Highway (foreach_target) and
// picked at run time through MatMulSimdFor() (docs/kernels.md, "MatMul").
//
// A tile is kRows rows of out by kVecs vectors of columns, its accumulators in registers for
// the whole inner dimension: for each k, kVecs vectors of b's row k are loaded and multiplied
// by a broadcast of a[i, k] for each of the tile's rows (a fused multiply-add where the target
// has one), so every element is summed in order of k from zero. Nothing is allocated; b's rows
// are read in place (unit column stride), a one element at a time (any strides). The last
// column block's last vector may be partial: it reads and writes only the columns that exist.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/matmul_simd.cc"
// Highway needs this order: foreach_target, then highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/kernels/internal/matmul.h"
#include "core/kernels/internal/simd_tables.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace matmul {
using internal::MatMulPlan;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

// Tiles are up to kMaxVecs vectors wide and RowsFor(vecs) rows tall: about 24 accumulators
// with 32 vector registers (AVX-512), 12 with 16 (AVX2; 12 measured faster than 8), leaving
// room for b's vectors and a's broadcast. A plan uses one height, that of its widest tile, so
// narrow products get tall tiles (n = 16: 16 rows of one vector on AVX-512).
constexpr bool kWide = HWY_TARGET == HWY_AVX3;
constexpr size_t kMaxVecs = kWide ? 4 : 2;
constexpr size_t RowsFor(size_t vecs) {
  if (kWide) return vecs == 1 ? 16 : 24 / vecs;
  return 12 / vecs;
}
constexpr size_t kMaxRows = RowsFor(1);

// The first `count` lanes at p, zeros after; reads nothing past them.
HWY_INLINE V LoadFirst(D d, M mask, const float* p, size_t count) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
  (void)count;
  return hn::MaskedLoad(mask, d, p);  // fault-suppressing on x86
#else
  (void)mask;
  HWY_ALIGN float lanes[hn::MaxLanes(D())] = {};
  std::copy(p, p + count, lanes);
  return hn::Load(d, lanes);
#endif
}

// A partial last vector of b is copied, kChunk rows at a time, into a zero-padded stack
// buffer that the multiply loop reads whole: a masked load inside that loop would make GCC
// keep the accumulators in memory.
constexpr int64_t kChunk = 128;

// out[i0 .. i0 + kRows, j0 .. j0 + (kVecs - 1) * N + last) = a x b over those rows and
// columns; `last` (1..N) is how many lanes of the last vector are columns (N unless kPartial).
// The loops over the tile's rows and vectors are unrolled early (HWY_UNROLL): otherwise GCC
// keeps `acc` as a stack array and stores it on every step of k.
template <size_t kRows, size_t kVecs, bool kPartial>
HWY_INLINE void TileFor(const MatMulPlan& p, int64_t i0, int64_t j0, size_t last) {
  const D d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t sam = p.sam, sak = p.sak, sbk = p.sbk, som = p.som, depth = p.k;
  const float* HWY_RESTRICT a = p.a + i0 * sam;
  const float* HWY_RESTRICT b = p.b + j0;
  const int64_t tail = static_cast<int64_t>(kVecs - 1) * n;  // the last vector's first column
  HWY_ALIGN float packed[kPartial ? kChunk * hn::MaxLanes(D()) : 1];
  V acc[kRows][kVecs];
  HWY_UNROLL(16)
  for (size_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(16)
    for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::Zero(d);
  }
  const int64_t chunk = kPartial ? kChunk : std::max<int64_t>(depth, 1);
  for (int64_t k0 = 0; k0 < depth; k0 += chunk) {
    const int64_t k1 = std::min(depth, k0 + chunk);
    if constexpr (kPartial) {
      const M mask = hn::FirstN(d, last);
      for (int64_t k = k0; k < k1; ++k) {
        hn::Store(LoadFirst(d, mask, b + k * sbk + tail, last), d, packed + (k - k0) * n);
      }
    }
    for (int64_t k = k0; k < k1; ++k) {
      const float* brow = b + k * sbk;
      V bv[kVecs];
      HWY_UNROLL(16)
      for (size_t v = 0; v < kVecs; ++v) {
        bv[v] = kPartial && v + 1 == kVecs ? hn::Load(d, packed + (k - k0) * n)
                                           : hn::LoadU(d, brow + static_cast<int64_t>(v) * n);
      }
      const float* acol = a + k * sak;
      HWY_UNROLL(16)
      for (size_t r = 0; r < kRows; ++r) {
        const V av = hn::Set(d, acol[static_cast<int64_t>(r) * sam]);
        HWY_UNROLL(16)
        for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
      }
    }
  }
  float* HWY_RESTRICT out = p.out + i0 * som + j0;
  HWY_UNROLL(16)
  for (size_t r = 0; r < kRows; ++r) {
    float* orow = out + static_cast<int64_t>(r) * som;
    HWY_UNROLL(16)
    for (size_t v = 0; v + 1 < kVecs; ++v) {
      hn::StoreU(acc[r][v], d, orow + static_cast<int64_t>(v) * n);
    }
    if constexpr (kPartial) {
      hn::BlendedStore(acc[r][kVecs - 1], hn::FirstN(d, last), d, orow + tail);
    } else {
      hn::StoreU(acc[r][kVecs - 1], d, orow + tail);
    }
  }
}

// `count` tiles of kRows rows, stacked from row i0, of the block from column j0.
template <size_t kRows, size_t kVecs>
void Tiles(const MatMulPlan& p, int64_t i0, int64_t count, int64_t j0, size_t last) {
  const int64_t rows = static_cast<int64_t>(kRows);
  if (last < hn::Lanes(D())) {
    for (int64_t t = 0; t < count; ++t) TileFor<kRows, kVecs, true>(p, i0 + t * rows, j0, last);
  } else {
    for (int64_t t = 0; t < count; ++t) TileFor<kRows, kVecs, false>(p, i0 + t * rows, j0, last);
  }
}

// kTiles[vecs - 1][rows - 1] is Tiles<rows, vecs> for rows up to RowsFor(vecs), else null.
using TilesFn = void (*)(const MatMulPlan&, int64_t, int64_t, int64_t, size_t);
template <size_t kVecs, size_t... kR>
constexpr std::array<TilesFn, kMaxRows> TilesOfWidth(std::index_sequence<kR...>) {
  return {
      (kR + 1 <= RowsFor(kVecs) ? &Tiles<std::min(kR + 1, RowsFor(kVecs)), kVecs> : nullptr)...};
}
template <size_t... kV>
constexpr auto AllTiles(std::index_sequence<kV...>) {
  return std::array<std::array<TilesFn, kMaxRows>, kMaxVecs>{
      TilesOfWidth<kV + 1>(std::make_index_sequence<kMaxRows>())...};
}
constexpr auto kTiles = AllTiles(std::make_index_sequence<kMaxVecs>());

// How a plan is cut into tiles: blocks of `width` columns, `rows` rows per tile.
struct Grid {
  int64_t width, rows, row_tiles;
};
Grid GridOf(const MatMulPlan& p) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(D()));
  const int64_t vecs = std::min<int64_t>(kMaxVecs, (p.n + n - 1) / n);
  const int64_t rows =
      static_cast<int64_t>(RowsFor(static_cast<size_t>(std::max<int64_t>(vecs, 1))));
  return {vecs * n, rows, (p.m + rows - 1) / rows};
}

// Units [begin, end) of the plan: unit u is row tile u % row_tiles of column block
// u / row_tiles, so consecutive units share the block's columns of b. The full-height tiles
// of one block go in one call, the block's short last tile in another.
void Units(const MatMulPlan& p, int64_t begin, int64_t end) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(D()));
  const Grid g = GridOf(p);
  for (int64_t u = begin; u < end;) {
    const int64_t block = u / g.row_tiles, first = u % g.row_tiles;
    const int64_t stop = std::min(end, (block + 1) * g.row_tiles);  // this block's units
    const int64_t j0 = block * g.width;
    const int64_t cols = std::min(p.n - j0, g.width);
    const int64_t vecs = (cols + n - 1) / n;
    const size_t last = static_cast<size_t>(cols - (vecs - 1) * n);
    const auto& tiles = kTiles[static_cast<size_t>(vecs - 1)];
    const int64_t i0 = first * g.rows, i1 = std::min(p.m, (first + stop - u) * g.rows);
    const int64_t full = (i1 - i0) / g.rows;
    if (full > 0) tiles[static_cast<size_t>(g.rows - 1)](p, i0, full, j0, last);
    const int64_t rest = i1 - i0 - full * g.rows;
    if (rest > 0) tiles[static_cast<size_t>(rest - 1)](p, i0 + full * g.rows, 1, j0, last);
    u = stop;
  }
}

int64_t UnitCount(const MatMulPlan& p) {
  if (p.m == 0 || p.n == 0) return 0;
  const Grid g = GridOf(p);
  return g.row_tiles * ((p.n + g.width - 1) / g.width);
}

}  // namespace matmul

const internal::MatMulSimd* GetMatMulSimd() {
  static const internal::MatMulSimd table = {&matmul::UnitCount, &matmul::Units};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(MatMulSimd, GetMatMulSimd)
}  // namespace onemodel::internal
#endif
