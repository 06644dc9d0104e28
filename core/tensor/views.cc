// The view operations of Tensor (spec 4): each makes a new value over the same buffer.
#include <algorithm>
#include <array>
#include <limits>

#include "core/shape/dim_vector.h"
#include "core/tensor/reshape.h"
#include "core/tensor/tensor.h"

namespace onemodel {
namespace {

// `dim` in [-rank, rank) as an index in [0, rank); throws naming the operation.
int NormalizeDim(int dim, int rank, const char* op) {
  if (dim < -rank || dim >= rank) {
    throw TensorShapeException(std::string(op) + ": dimension " + std::to_string(dim) +
                               " is out of range for rank " + std::to_string(rank));
  }
  return dim < 0 ? dim + rank : dim;
}

// A copy of the dimensions of (shape, strides) with dimension `skip` left out (-1: none) and
// (extent, stride) inserted before dimension `insert_at` (-1: none); no heap allocation.
Tensor::ViewDims Edit(const Shape& shape, const Strides& strides, int skip, int insert_at,
                      int64_t extent, int32_t stride) {
  Tensor::ViewDims v;
  for (int d = 0; d <= shape.rank(); ++d) {
    if (d == insert_at) {
      v.extents.push_back(extent);
      v.strides.push_back(stride);
    }
    if (d < shape.rank() && d != skip) {
      v.extents.push_back(shape[d]);
      v.strides.push_back(strides[d]);
    }
  }
  return v;
}

}  // namespace

std::optional<Tensor> Tensor::TryReshape(std::span<const int64_t> shape) const {
  CheckPlain("Reshape");
  const Shape to = InferShape(shape_.ElementCount(), shape);
  const std::optional<Strides> strides = ReshapeStrides(shape_, strides_, to);
  if (!strides) return std::nullopt;
  return WithView(to, *strides, offset_);
}

Tensor Tensor::Reshape(std::span<const int64_t> shape, Allocator& allocator) const {
  if (std::optional<Tensor> view = TryReshape(shape)) return *view;
  return *Contiguous(allocator).TryReshape(shape);  // contiguous data always reshapes
}

Tensor Tensor::Transpose(int d0, int d1) const {
  std::array<int, kMaxRank> perm{};
  for (int d = 0; d < rank(); ++d) perm[static_cast<size_t>(d)] = d;
  std::swap(perm[static_cast<size_t>(NormalizeDim(d0, rank(), "Transpose"))],
            perm[static_cast<size_t>(NormalizeDim(d1, rank(), "Transpose"))]);
  return Permute(std::span<const int>(perm.data(), static_cast<size_t>(rank())));
}

Tensor Tensor::Permute(std::span<const int> perm) const {
  CheckPlain("Permute");
  if (static_cast<int>(perm.size()) != rank()) {
    throw TensorShapeException("Permute: " + std::to_string(perm.size()) +
                               " dimensions given for tensor " + Describe());
  }
  std::array<bool, kMaxRank> seen{};
  std::array<int64_t, kMaxRank> extents{};
  std::array<int32_t, kMaxRank> strides{};
  for (int i = 0; i < rank(); ++i) {
    const int d = NormalizeDim(perm[static_cast<size_t>(i)], rank(), "Permute");
    if (seen[static_cast<size_t>(d)]) {
      throw TensorShapeException("Permute: dimension " + std::to_string(d) +
                                 " appears twice; give each dimension once");
    }
    seen[static_cast<size_t>(d)] = true;
    extents[static_cast<size_t>(i)] = shape_[d];
    strides[static_cast<size_t>(i)] = strides_[d];
  }
  const size_t r = static_cast<size_t>(rank());
  return WithView(Shape(std::span<const int64_t>(extents.data(), r)),
                  Strides(std::span<const int32_t>(strides.data(), r)), offset_);
}

Tensor Tensor::Slice(int dim, int64_t start, int64_t stop, int64_t step) const {
  CheckPlain("Slice");
  const int d = NormalizeDim(dim, rank(), "Slice");
  if (step == 0) throw TensorShapeException("Slice: step must not be 0");
  const int64_t n = shape_[d];
  // numpy's slice.indices(): negative bounds count from the end, then clamp.
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  int64_t count;
  if (step > 0) {
    start = clamp(start, 0, n);
    stop = clamp(stop, 0, n);
    count = stop > start ? 1 + (stop - start - 1) / step : 0;
  } else {
    start = clamp(start, -1, n - 1);
    stop = clamp(stop, -1, n - 1);
    // A step below -n gives one element; clamping it keeps -step from overflowing.
    count = start > stop ? 1 + (start - stop - 1) / -std::max(step, -n - 1) : 0;
  }
  // Multiply only while the product fits in int64 (|step| < 2^32). A dimension of at most one
  // element never moves, so there any step (numpy allows any) keeps the source stride.
  int64_t stride = strides_[d];
  if (step > -(int64_t{1} << 32) && step < (int64_t{1} << 32)) stride *= step;
  if (stride > std::numeric_limits<int32_t>::max() || stride < std::numeric_limits<int32_t>::min()) {
    if (count > 1) {
      throw TensorShapeException("Slice: step " + std::to_string(step) + " makes stride " +
                                 std::to_string(stride) + ", beyond the 32-bit stride limit");
    }
    stride = strides_[d];
  }
  DimVector<int64_t> extents(shape_);
  extents[static_cast<size_t>(d)] = count;
  Strides strides = strides_;
  strides[d] = static_cast<int32_t>(stride);
  const int64_t offset = count > 0 ? offset_ + start * strides_[d] : offset_;
  return WithView(Shape(extents.span()), strides, offset);
}

Tensor Tensor::Expand(const Shape& shape) const {
  CheckPlain("Expand");
  if (shape.rank() < rank()) {
    throw TensorShapeException("Expand: cannot expand tensor " + Describe() + " to " +
                               shape.ToString() + ", which has fewer dimensions");
  }
  std::array<int32_t, kMaxRank> strides{};
  const int lead = shape.rank() - rank();
  for (int d = 0; d < rank(); ++d) {
    const int32_t from = shape_[d], to = shape[lead + d];
    if (from != to && from != 1) {
      throw TensorShapeException("Expand: dimension " + std::to_string(d) + " of tensor " +
                                 Describe() + " has extent " + std::to_string(from) +
                                 ", which cannot broadcast to " + shape.ToString());
    }
    strides[static_cast<size_t>(lead + d)] = from == to ? strides_[d] : 0;
  }
  return WithView(shape, Strides(std::span<const int32_t>(strides.data(), static_cast<size_t>(shape.rank()))),
                  offset_);
}

Tensor Tensor::Squeeze() const {
  CheckPlain("Squeeze");
  ViewDims v;
  for (int d = 0; d < rank(); ++d) {
    if (shape_[d] == 1) continue;
    v.extents.push_back(shape_[d]);
    v.strides.push_back(strides_[d]);
  }
  return WithView(Shape(v.extents.span()), Strides(v.strides.span()), offset_);
}

Tensor Tensor::Squeeze(int dim) const {
  CheckPlain("Squeeze");
  const int d = NormalizeDim(dim, rank(), "Squeeze");
  if (shape_[d] != 1) {
    throw TensorShapeException("Squeeze: dimension " + std::to_string(d) + " of tensor " +
                               Describe() + " has extent " + std::to_string(shape_[d]) +
                               ", not 1");
  }
  const ViewDims v = Edit(shape_, strides_, d, -1, 0, 0);
  return WithView(Shape(v.extents.span()), Strides(v.strides.span()), offset_);
}

Tensor Tensor::Unsqueeze(int dim) const {
  CheckPlain("Unsqueeze");
  const int d = NormalizeDim(dim, rank() + 1, "Unsqueeze");
  if (rank() == kMaxRank) {
    throw TensorShapeException("Unsqueeze: tensor " + Describe() + " already has the maximum rank " +
                               std::to_string(kMaxRank));
  }
  // The stride a contiguous tensor would have there, so contiguity is preserved.
  const int64_t stride = d < rank() ? int64_t{strides_[d]} * shape_[d] : 1;
  const ViewDims v = Edit(shape_, strides_, -1, d, 1,
                          static_cast<int32_t>(std::clamp<int64_t>(
                              stride, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max())));
  return WithView(Shape(v.extents.span()), Strides(v.strides.span()), offset_);
}

}  // namespace onemodel
