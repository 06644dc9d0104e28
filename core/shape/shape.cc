#include "core/shape/shape.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "core/common/exceptions.h"

namespace onemodel {

template <typename Int>
void Shape::Assign(std::span<const Int> extents) {
  auto describe = [&] {
    std::vector<int64_t> wide(extents.begin(), extents.end());
    return "shape " + FormatExtents(wide);
  };
  if (extents.size() > static_cast<size_t>(kMaxRank)) {
    throw TensorShapeException(describe() + " has rank " + std::to_string(extents.size()) +
                               "; the maximum rank is " + std::to_string(kMaxRank));
  }
  int64_t product = 1;
  for (size_t d = 0; d < extents.size(); ++d) {
    const int64_t e = static_cast<int64_t>(extents[d]);
    if (e < 0) {
      throw TensorShapeException(describe() + " has negative extent " + std::to_string(e) +
                                 " in dimension " + std::to_string(d));
    }
    if (e > std::numeric_limits<int32_t>::max()) {
      throw TensorShapeException(describe() + " has extent " + std::to_string(e) +
                                 " in dimension " + std::to_string(d) +
                                 ", above the 32-bit limit 2147483647");
    }
    product *= e;  // both factors < 2^31, so this cannot overflow int64
    if (product > kMaxElements) {
      throw TensorShapeException(describe() + " is too large: the product of its first " +
                                 std::to_string(d + 1) + " extents is " + std::to_string(product) +
                                 ", above the limit of " + std::to_string(kMaxElements) +
                                 " elements");
    }
    extents_[d] = static_cast<int32_t>(e);
  }
  rank_ = static_cast<int32_t>(extents.size());
  count_ = product;
}

Shape::Shape(std::initializer_list<int64_t> extents) {
  Assign(std::span<const int64_t>(extents.begin(), extents.size()));
}
Shape::Shape(std::span<const int64_t> extents) { Assign(extents); }
Shape::Shape(std::span<const int32_t> extents) { Assign(extents); }

std::string FormatExtents(std::span<const int64_t> extents) {
  // Twice the largest rank: a longer list is a client's mistake.
  constexpr size_t kListed = 2 * static_cast<size_t>(kMaxRank);
  std::string s = "[";
  for (size_t i = 0; i < std::min(extents.size(), kListed); ++i) {
    if (i) s += ", ";
    s += std::to_string(extents[i]);
  }
  if (extents.size() > kListed) s += ", ... (" + std::to_string(extents.size()) + " in all)";
  return s + "]";
}

std::string Shape::ToString() const {
  std::vector<int64_t> wide(extents().begin(), extents().end());
  return FormatExtents(wide);
}

Shape Shape::Broadcast(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::array<int64_t, kMaxRank> out{};
  for (int i = 0; i < rank; ++i) {
    // i counts from the right; a missing dimension acts as extent 1.
    const int da = a.rank() - 1 - i, db = b.rank() - 1 - i;
    const int64_t ea = da >= 0 ? a[da] : 1;
    const int64_t eb = db >= 0 ? b[db] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      throw TensorShapeException("shapes " + a.ToString() + " and " + b.ToString() +
                                 " do not broadcast: extents " + std::to_string(ea) + " and " +
                                 std::to_string(eb) + " differ and neither is 1");
    }
    out[static_cast<size_t>(rank - 1 - i)] = ea == 1 ? eb : ea;
  }
  try {
    return Shape(std::span<const int64_t>(out.data(), static_cast<size_t>(rank)));
  } catch (const TensorShapeException& e) {
    // Name the inputs: the caller never wrote the result shape.
    throw TensorShapeException("broadcasting shapes " + a.ToString() + " and " + b.ToString() +
                               ": " + e.what());
  }
}

void CheckByteSize(const Shape& shape, DType dtype) {
  const int64_t bytes = shape.ElementCount() * ElementSize(dtype);
  if (bytes > kMaxBufferBytes) {
    throw TensorShapeException("shape " + shape.ToString() + " of " + std::string(OnnxName(dtype)) +
                               " needs " + std::to_string(bytes) +
                               " bytes, above the buffer limit of " +
                               std::to_string(kMaxBufferBytes) + " bytes");
  }
}

Shape InferShape(int64_t count, std::span<const int64_t> requested) {
  if (requested.size() > static_cast<size_t>(kMaxRank)) {
    return Shape(requested);  // throws, naming the rank
  }
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < requested.size(); ++d) {
    const int64_t e = requested[d];
    if (e == -1) {
      if (inferred >= 0) {
        throw TensorShapeException("reshape to " + FormatExtents(requested) +
                                   ": only one extent may be -1");
      }
      inferred = static_cast<int>(d);
    } else if (e < 0) {
      throw TensorShapeException("reshape to " + FormatExtents(requested) + ": extent " +
                                 std::to_string(e) + " in dimension " + std::to_string(d) +
                                 " is negative (only -1 is allowed)");
    } else {
      // Saturate: any product above the limit is already a mismatch.
      known = (e != 0 && known > kMaxElements / e) ? kMaxElements + 1 : known * e;
    }
  }
  std::array<int64_t, kMaxRank> extents{};  // no heap: reshapes run on hot paths
  std::copy(requested.begin(), requested.end(), extents.begin());
  if (inferred >= 0) {
    if (known == 0 || count % known != 0) {
      throw TensorShapeException("reshape of " + std::to_string(count) + " elements to " +
                                 FormatExtents(requested) +
                                 ": the -1 extent cannot be inferred (the other extents "
                                 "multiply to " +
                                 std::to_string(known) + ")");
    }
    extents[static_cast<size_t>(inferred)] = count / known;
  } else if (known != count) {
    throw TensorShapeException(
        "reshape of " + std::to_string(count) + " elements to " + FormatExtents(requested) +
        ", which holds " +
        (known > kMaxElements ? std::string("too many") : std::to_string(known)) + " elements");
  }
  return Shape(std::span<const int64_t>(extents.data(), requested.size()));
}

}  // namespace onemodel
