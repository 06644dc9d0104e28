#include "core/ops/pad_tile.h"

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/common/cancellation.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

// Per output index along one axis, the input index it copies, or -1 for Pad's constant.
using AxisMap = std::vector<int64_t>;

std::string AxisError(std::string_view op, const Shape& shape, int d) {
  return std::string(op) + ": axis " + std::to_string(d) + " of x " + shape.ToString();
}

// The output extent of Pad along one axis (after checking it), and its map when `map`.
int64_t PadAxis(const Shape& shape, int d, int64_t begin, int64_t end, PadMode mode,
                AxisMap* map) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  if (begin < -kLimit || begin > kLimit || end < -kLimit || end > kLimit) {
    throw TensorShapeException(AxisError("Pad", shape, d) + ": pads " + std::to_string(begin) +
                               ", " + std::to_string(end) + " are out of range (|pad| < 2^31)");
  }
  const int64_t n = shape[d];
  const int64_t lo = begin < 0 ? -begin : 0;  // the first element kept by the crop
  const int64_t kept = n - lo - (end < 0 ? -end : 0);
  if (kept < 0) {
    throw TensorShapeException(AxisError("Pad", shape, d) + ": pads " + std::to_string(begin) +
                               ", " + std::to_string(end) + " crop more than the axis holds");
  }
  const int64_t before = begin > 0 ? begin : 0, after = end > 0 ? end : 0;
  if (mode == PadMode::kReflect && (before >= kept || after >= kept) && (before || after)) {
    throw TensorShapeException(AxisError("Pad", shape, d) + ": reflect padding " +
                               std::to_string(before) + ", " + std::to_string(after) +
                               " must be below the (cropped) extent " + std::to_string(kept) +
                               "; use edge or constant padding");
  }
  if ((mode == PadMode::kEdge || mode == PadMode::kWrap) && kept == 0 && (before || after)) {
    throw TensorShapeException(AxisError("Pad", shape, d) +
                               " is empty, so edge and wrap padding have nothing to repeat; "
                               "use constant padding");
  }
  const int64_t out = kept + before + after;
  if (!map) return out;
  map->resize(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    int64_t t = i - before;  // index into the cropped axis
    if (t < 0 || t >= kept) {
      switch (mode) {
        case PadMode::kConstant:
          t = -1 - lo;
          break;
        case PadMode::kReflect:
          t = t < 0 ? -t : 2 * (kept - 1) - t;
          break;
        case PadMode::kEdge:
          t = t < 0 ? 0 : kept - 1;
          break;
        case PadMode::kWrap:
          t = ((t % kept) + kept) % kept;
          break;
      }
    }
    (*map)[static_cast<size_t>(i)] = lo + t;
  }
  return out;
}

// Pad's output shape, and its maps when `maps`. pads has 2 * rank values (checked).
Shape PadShape(const Shape& shape, std::span<const int64_t> pads, PadMode mode,
               std::vector<AxisMap>* maps) {
  const int rank = shape.rank();
  if (pads.size() != static_cast<size_t>(2 * rank)) {
    throw TensorShapeException("Pad: pads has " + std::to_string(pads.size()) + " values; x " +
                               shape.ToString() + " needs 2 * rank = " +
                               std::to_string(2 * rank) +
                               " ([x1_begin, x2_begin, ..., x1_end, x2_end, ...], as ONNX)");
  }
  if (maps) maps->resize(static_cast<size_t>(rank));
  std::array<int64_t, kMaxRank> extents{};
  for (int d = 0; d < rank; ++d) {
    extents[static_cast<size_t>(d)] =
        PadAxis(shape, d, pads[static_cast<size_t>(d)], pads[static_cast<size_t>(d + rank)], mode,
                maps ? &(*maps)[static_cast<size_t>(d)] : nullptr);
  }
  return Shape(std::span<const int64_t>(extents.data(), static_cast<size_t>(rank)));
}

// Tile's output shape, and its maps when `maps`. repeats has rank values (checked).
Shape TileShape(const Shape& shape, std::span<const int64_t> repeats, std::vector<AxisMap>* maps) {
  const int rank = shape.rank();
  if (repeats.size() != static_cast<size_t>(rank)) {
    throw TensorShapeException("Tile: repeats has " + std::to_string(repeats.size()) +
                               " values; x " + shape.ToString() + " needs one per axis (" +
                               std::to_string(rank) + ")");
  }
  if (maps) maps->resize(static_cast<size_t>(rank));
  std::array<int64_t, kMaxRank> extents{};
  for (int d = 0; d < rank; ++d) {
    const int64_t r = repeats[static_cast<size_t>(d)], n = shape[d];
    if (r < 0 || r > std::numeric_limits<int32_t>::max()) {
      throw TensorShapeException(AxisError("Tile", shape, d) + ": repeats " + std::to_string(r) +
                                 " must be from 0 to 2^31 - 1");
    }
    extents[static_cast<size_t>(d)] = n * r;
    if (!maps || n * r > std::numeric_limits<int32_t>::max()) continue;  // Shape refuses it
    AxisMap& map = (*maps)[static_cast<size_t>(d)];
    map.resize(static_cast<size_t>(n * r));
    for (int64_t i = 0; i < n * r; ++i) map[static_cast<size_t>(i)] = i % n;
  }
  return Shape(std::span<const int64_t>(extents.data(), static_cast<size_t>(rank)));
}

// Calls fn(o, inside, offset) for each output element o, row-major over the maps' extents:
// inside is false where a map gives -1, else offset is the source element's offset under
// `strides`. Stops early once the thread's CancelToken is cancelled (it looks every 2^20).
template <typename Fn>
void ForEachSource(const std::vector<AxisMap>& maps, const Strides& strides, const Fn& fn) {
  const size_t rank = maps.size();
  int64_t total = 1;
  for (const AxisMap& m : maps) total *= static_cast<int64_t>(m.size());
  const CancelToken* cancel = CurrentCancelToken();
  std::array<size_t, kMaxRank> index{};
  for (int64_t o = 0; o < total; ++o) {
    if ((o & ((int64_t{1} << 20) - 1)) == 0 && Cancelled(cancel)) return;
    bool inside = true;
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t s = maps[d][index[d]];
      inside = inside && s >= 0;
      offset += s * strides[static_cast<int>(d)];
    }
    fn(o, inside, offset);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < maps[d].size()) break;
      index[d] = 0;
    }
  }
}

// out[o] = x at the maps' source, or `fill`; out is contiguous, of the maps' extents.
void GatherInto(const Tensor& x, const std::vector<AxisMap>& maps, float fill, Tensor& out) {
  const float* in = x.Storage<float>().data() + x.offset();
  float* o = out.MutableData<float>().data();
  ForEachSource(maps, x.strides(), [&](int64_t i, bool inside, int64_t offset) {
    o[i] = inside ? in[offset] : fill;
  });
}

// The gradient of a Gather: each g element added to its source (in row-major order of g).
Tensor Scatter(const Tensor& g, const Shape& in_shape, const std::vector<AxisMap>& maps,
               const OpContext& ctx) {
  Tensor grad = internal::NewFloat(in_shape, ctx, /*zero=*/true);
  if (in_shape.IsEmpty() || g.shape().IsEmpty()) return grad;
  const internal::Temporary gc(g.Contiguous(ctx.allocator), g);
  const std::span<const float> gv = gc->Data<float>();
  float* base = grad.MutableData<float>().data();
  ForEachSource(maps, grad.strides(), [&](int64_t i, bool inside, int64_t offset) {
    if (inside) base[offset] += gv[static_cast<size_t>(i)];
  });
  return grad;
}

void PadBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                 std::span<Tensor> grads) {
  const std::span<const int64_t> ints = r.ints();
  std::vector<AxisMap> maps;
  PadShape(r.InputShape(0), ints.subspan(1), static_cast<PadMode>(ints[0]), &maps);
  grads[0] = Scatter(g, r.InputShape(0), maps, ctx);
}

void TileBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                  std::span<Tensor> grads) {
  std::vector<AxisMap> maps;
  TileShape(r.InputShape(0), r.ints(), &maps);
  grads[0] = Scatter(g, r.InputShape(0), maps, ctx);
}

}  // namespace

PadMode ParsePadMode(std::string_view name) {
  if (name == "constant") return PadMode::kConstant;
  if (name == "reflect") return PadMode::kReflect;
  if (name == "edge") return PadMode::kEdge;
  if (name == "wrap") return PadMode::kWrap;
  throw TensorException("Pad: mode '" + std::string(name) +
                        "' is unknown; use constant, reflect, edge or wrap");
}

Tensor Pad(const Tensor& x, std::span<const int64_t> pads, PadMode mode, float value,
           const OpContext& ctx) {
  internal::CheckFloat("Pad", "x", x);
  const Shape shape = PadShape(x.shape(), pads, mode, nullptr);
  // The output is allocated (within the memory limit) before the maps, which are as long as
  // its extents.
  Tensor out = internal::NewFloat(shape, ctx);
  if (!shape.IsEmpty()) {
    std::vector<AxisMap> maps;
    PadShape(x.shape(), pads, mode, &maps);
    GatherInto(x, maps, value, out);
  }
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(OpKind::kPad, &PadBackward, {&x});
  std::vector<int64_t> ints{static_cast<int64_t>(mode)};
  ints.insert(ints.end(), pads.begin(), pads.end());
  record->SetInts(std::move(ints));
  return out.WithAutogradNode(std::move(record));
}

Tensor Tile(const Tensor& x, std::span<const int64_t> repeats, const OpContext& ctx) {
  internal::CheckFloat("Tile", "x", x);
  const Shape shape = TileShape(x.shape(), repeats, nullptr);
  Tensor out = internal::NewFloat(shape, ctx);  // before the maps, as in Pad
  if (!shape.IsEmpty()) {
    std::vector<AxisMap> maps;
    TileShape(x.shape(), repeats, &maps);
    GatherInto(x, maps, 0.0f, out);
  }
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(OpKind::kTile, &TileBackward, {&x});
  record->SetInts(std::vector<int64_t>(repeats.begin(), repeats.end()));
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
