#include "core/convert/cast.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "core/common/exceptions.h"

namespace onemodel {
namespace {

// How a type's elements sit in memory. A BOOL element is a byte read as "!= 0", never as a
// C++ bool (a byte other than 0 or 1 would be undefined behaviour as bool).
template <typename T>
struct Element {
  using Storage = T;
  static T Load(Storage s) { return s; }
  static Storage Store(T v) { return v; }
};
template <>
struct Element<bool> {
  using Storage = uint8_t;
  static bool Load(Storage s) { return s != 0; }
  static Storage Store(bool v) { return v ? 1 : 0; }
};

// The tight loop for one type pair.
template <typename To, typename From>
void CastLoop(const void* src, void* dst, int64_t count) {
  const auto* in = static_cast<const typename Element<From>::Storage*>(src);
  auto* out = static_cast<typename Element<To>::Storage*>(dst);
  for (int64_t i = 0; i < count; ++i) {
    out[i] = Element<To>::Store(CastValue<To>(Element<From>::Load(in[i])));
  }
}

// Calls visit(std::type_identity<T>{}) for the storage type T of t; false if t is unsupported.
template <typename Visit>
bool VisitType(DType t, Visit&& visit) {
  switch (t) {
    case DType::kFloat:
      visit(std::type_identity<float>{});
      return true;
    case DType::kUint8:
      visit(std::type_identity<uint8_t>{});
      return true;
    case DType::kInt8:
      visit(std::type_identity<int8_t>{});
      return true;
    case DType::kUint16:
      visit(std::type_identity<uint16_t>{});
      return true;
    case DType::kInt16:
      visit(std::type_identity<int16_t>{});
      return true;
    case DType::kInt32:
      visit(std::type_identity<int32_t>{});
      return true;
    case DType::kInt64:
      visit(std::type_identity<int64_t>{});
      return true;
    case DType::kBool:
      visit(std::type_identity<bool>{});
      return true;
    case DType::kFloat16:
      visit(std::type_identity<Float16>{});
      return true;
    case DType::kDouble:
      visit(std::type_identity<double>{});
      return true;
    case DType::kUint32:
      visit(std::type_identity<uint32_t>{});
      return true;
    case DType::kUint64:
      visit(std::type_identity<uint64_t>{});
      return true;
    case DType::kBFloat16:
      visit(std::type_identity<BFloat16>{});
      return true;
    default:
      return false;
  }
}

// "FLOAT" for a known code, "UNKNOWN (99)" outside the enum.
std::string TypeName(DType t) {
  const int32_t code = static_cast<int32_t>(t);
  std::string name(OnnxName(code));
  if (code < 0 || code > kMaxOnnxCode) name += " (" + std::to_string(code) + ")";
  return name;
}

}  // namespace

void CastElements(DType from, const void* src, DType to, void* dst, int64_t count) {
  for (DType t : {from, to}) {
    if (!IsSupported(t)) {
      throw TensorTypeException("cannot cast from " + TypeName(from) + " to " + TypeName(to) +
                                ": " + TypeName(t) + " is not a supported element type");
    }
  }
  if (count < 0) {
    throw TensorShapeException("cannot cast a negative count of " + std::to_string(count) +
                               " elements from " + TypeName(from) + " to " + TypeName(to));
  }
  if (count == 0) return;
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(count) * static_cast<size_t>(ElementSize(from)));
    return;
  }
  VisitType(to, [&](auto to_type) {
    VisitType(from, [&](auto from_type) {
      using To = typename decltype(to_type)::type;
      using From = typename decltype(from_type)::type;
      CastLoop<To, From>(src, dst, count);
    });
  });
}

}  // namespace onemodel
