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

// Where the output indices along one axis read: [0, before) and [before + kept, extent) are
// padding, [before, before + kept) copies input elements lo, lo + 1, ... A plain value, so
// that nothing is allocated on the heap (Tile is wrap padding after the axis).
struct AxisSource {
  int64_t extent = 1, before = 0, lo = 0, kept = 1;
  PadMode mode = PadMode::kConstant;

  // The input index output index i copies, or -1 for the constant.
  int64_t operator()(int64_t i) const {
    int64_t t = i - before;  // index into the cropped axis
    if (t >= 0 && t < kept) return lo + t;
    switch (mode) {
      case PadMode::kConstant:
        return -1;
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
    return lo + t;
  }
};
using Sources = std::array<AxisSource, kMaxRank>;

std::string AxisError(std::string_view op, const Shape& shape, int d) {
  return std::string(op) + ": axis " + std::to_string(d) + " of x " + shape.ToString();
}

// Pad's reading of one axis, after checking the pads.
AxisSource PadAxis(const Shape& shape, int d, int64_t begin, int64_t end, PadMode mode) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  if (begin < -kLimit || begin > kLimit || end < -kLimit || end > kLimit) {
    throw TensorShapeException(AxisError("Pad", shape, d) + ": pads " + std::to_string(begin) +
                               ", " + std::to_string(end) + " are out of range (|pad| < 2^31)");
  }
  AxisSource a;
  a.mode = mode;
  a.lo = begin < 0 ? -begin : 0;  // the first element kept by the crop
  a.kept = shape[d] - a.lo - (end < 0 ? -end : 0);
  if (a.kept < 0) {
    throw TensorShapeException(AxisError("Pad", shape, d) + ": pads " + std::to_string(begin) +
                               ", " + std::to_string(end) + " crop more than the axis holds");
  }
  a.before = begin > 0 ? begin : 0;
  const int64_t after = end > 0 ? end : 0;
  if (mode == PadMode::kReflect && (a.before || after) && (a.before >= a.kept || after >= a.kept)) {
    throw TensorShapeException(AxisError("Pad", shape, d) + ": reflect padding " +
                               std::to_string(a.before) + ", " + std::to_string(after) +
                               " must be below the (cropped) extent " + std::to_string(a.kept) +
                               "; use edge or constant padding");
  }
  if ((mode == PadMode::kEdge || mode == PadMode::kWrap) && a.kept == 0 && (a.before || after)) {
    throw TensorShapeException(AxisError("Pad", shape, d) +
                               " is empty, so edge and wrap padding have nothing to repeat; "
                               "use constant padding");
  }
  a.extent = a.kept + a.before + after;
  return a;
}

// The output shape of `sources` over `rank` axes.
Shape ShapeOf(const Sources& sources, int rank) {
  std::array<int64_t, kMaxRank> extents{};
  for (int d = 0; d < rank; ++d)
    extents[static_cast<size_t>(d)] = sources[static_cast<size_t>(d)].extent;
  return Shape(std::span<const int64_t>(extents.data(), static_cast<size_t>(rank)));
}

// Pad's sources; pads must hold 2 * rank values (checked).
Sources PadSources(const Shape& shape, std::span<const int64_t> pads, PadMode mode) {
  const int rank = shape.rank();
  if (pads.size() != static_cast<size_t>(2 * rank)) {
    throw TensorShapeException("Pad: pads has " + std::to_string(pads.size()) + " values; x " +
                               shape.ToString() + " needs 2 * rank = " + std::to_string(2 * rank) +
                               " ([x1_begin, x2_begin, ..., x1_end, x2_end, ...], as ONNX)");
  }
  Sources sources;
  for (int d = 0; d < rank; ++d) {
    sources[static_cast<size_t>(d)] =
        PadAxis(shape, d, pads[static_cast<size_t>(d)], pads[static_cast<size_t>(d + rank)], mode);
  }
  return sources;
}

// Tile's sources: x wrapped to repeats[d] times its extent; one repeat per axis (checked).
Sources TileSources(const Shape& shape, std::span<const int64_t> repeats) {
  const int rank = shape.rank();
  if (repeats.size() != static_cast<size_t>(rank)) {
    throw TensorShapeException("Tile: repeats has " + std::to_string(repeats.size()) +
                               " values; x " + shape.ToString() + " needs one per axis (" +
                               std::to_string(rank) + ")");
  }
  Sources sources;
  for (int d = 0; d < rank; ++d) {
    const int64_t r = repeats[static_cast<size_t>(d)], n = shape[d];
    if (r < 0 || r > std::numeric_limits<int32_t>::max()) {
      throw TensorShapeException(AxisError("Tile", shape, d) + ": repeats " + std::to_string(r) +
                                 " must be from 0 to 2^31 - 1");
    }
    sources[static_cast<size_t>(d)] = {n * r, 0, 0, n, PadMode::kWrap};
  }
  return sources;
}

// Calls fn(o, inside, offset) for each element o of the output of `sources` (`rank` axes,
// row-major): inside is false where an axis reads the constant, else offset is the source
// element's offset under `strides`. Stops early once the thread's CancelToken is cancelled (it
// looks every 2^20 elements).
template <typename Fn>
void ForEachSource(const Sources& sources, int rank, const Strides& strides, const Fn& fn) {
  const int64_t total = ShapeOf(sources, rank).ElementCount();
  const CancelToken* cancel = CurrentCancelToken();
  std::array<int64_t, kMaxRank> index{};
  for (int64_t o = 0; o < total; ++o) {
    if ((o & ((int64_t{1} << 20) - 1)) == 0 && Cancelled(cancel)) return;
    bool inside = true;
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t s = sources[static_cast<size_t>(d)](index[static_cast<size_t>(d)]);
      inside = inside && s >= 0;
      offset += s * strides[d];
    }
    fn(o, inside, offset);
    for (int d = rank; d-- > 0;) {
      const size_t k = static_cast<size_t>(d);
      if (++index[k] < sources[k].extent) break;
      index[k] = 0;
    }
  }
}

// A new tensor whose element o is x at its source, or `fill`.
Tensor Gather(const Tensor& x, const Sources& sources, float fill, const OpContext& ctx) {
  Tensor out = internal::NewFloat(ShapeOf(sources, x.rank()), ctx);
  if (out.shape().IsEmpty()) return out;
  const float* in = x.Storage<float>().data() + x.offset();
  float* o = out.MutableData<float>().data();
  ForEachSource(sources, x.rank(), x.strides(),
                [&](int64_t i, bool inside, int64_t offset) { o[i] = inside ? in[offset] : fill; });
  return out;
}

// The gradient of a Gather: each g element added to its source (in row-major order of g).
Tensor Scatter(const Tensor& g, const Shape& in_shape, const Sources& sources,
               const OpContext& ctx) {
  Tensor grad = internal::NewFloat(in_shape, ctx, /*zero=*/true);
  if (in_shape.IsEmpty() || g.shape().IsEmpty()) return grad;
  const internal::Temporary gc(g.Contiguous(ctx.allocator), g);
  const std::span<const float> gv = gc->Data<float>();
  float* base = grad.MutableData<float>().data();
  ForEachSource(sources, in_shape.rank(), grad.strides(),
                [&](int64_t i, bool inside, int64_t offset) {
                  if (inside) base[offset] += gv[static_cast<size_t>(i)];
                });
  return grad;
}

void PadBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                 std::span<Tensor> grads) {
  const std::span<const int64_t> ints = r.ints();
  grads[0] =
      Scatter(g, r.InputShape(0),
              PadSources(r.InputShape(0), ints.subspan(1), static_cast<PadMode>(ints[0])), ctx);
}

void TileBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                  std::span<Tensor> grads) {
  grads[0] = Scatter(g, r.InputShape(0), TileSources(r.InputShape(0), r.ints()), ctx);
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
  Tensor out = Gather(x, PadSources(x.shape(), pads, mode), value, ctx);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(OpKind::kPad, &PadBackward, {&x});
  std::vector<int64_t> ints{static_cast<int64_t>(mode)};
  ints.insert(ints.end(), pads.begin(), pads.end());
  record->SetInts(std::move(ints));
  return out.WithAutogradNode(std::move(record));
}

Tensor Tile(const Tensor& x, std::span<const int64_t> repeats, const OpContext& ctx) {
  internal::CheckFloat("Tile", "x", x);
  Tensor out = Gather(x, TileSources(x.shape(), repeats), 0.0f, ctx);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(OpKind::kTile, &TileBackward, {&x});
  record->SetInts(std::vector<int64_t>(repeats.begin(), repeats.end()));
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
