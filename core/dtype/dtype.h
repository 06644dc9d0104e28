// Element types (spec 2). The numeric value of DType is the ONNX TensorProto.DataType code,
// so no mapping table exists between the wire and the core.
//
//   DType t = FromOnnx(proto.data_type());   // throws TensorTypeException for STRING etc.
//   int64_t bytes = count * ElementSize(t);
//   if (DTypeOf<float>() == t) { ... }
#pragma once

#include <cstdint>
#include <string_view>

namespace onemodel {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
  kFloat6E2M3 = 27,
  kFloat6E3M2 = 28,
};

// The largest ONNX code this build knows by name.
inline constexpr int32_t kMaxOnnxCode = 28;

// Storage of one IEEE 754 binary16 value (conversions live in core/convert/half.h).
struct Float16 {
  uint16_t bits;
  friend bool operator==(Float16, Float16) = default;
};

// Storage of one bfloat16 value (conversions live in core/convert/half.h).
struct BFloat16 {
  uint16_t bits;
  friend bool operator==(BFloat16, BFloat16) = default;
};

// True for the thirteen element types the core stores and computes with.
constexpr bool IsSupported(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kUint8:
    case DType::kInt8:
    case DType::kUint16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kDouble:
    case DType::kUint32:
    case DType::kUint64:
    case DType::kBFloat16:
      return true;
    default:
      return false;
  }
}

// Bytes per element of a supported type; 0 for any other code.
constexpr int32_t ElementSize(DType t) {
  switch (t) {
    case DType::kUint8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kUint16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUint32:
      return 4;
    case DType::kInt64:
    case DType::kDouble:
    case DType::kUint64:
      return 8;
    default:
      return 0;
  }
}

// True for the supported floating-point types, the only ones that can require gradients.
constexpr bool IsFloatingPoint(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

// True for the supported signed and unsigned integer types (not bool).
constexpr bool IsInteger(DType t) {
  return IsSupported(t) && !IsFloatingPoint(t) && t != DType::kBool;
}

// Only floating-point tensors can require gradients (spec 2).
constexpr bool CanRequireGrad(DType t) { return IsFloatingPoint(t); }

// The ONNX spelling of a code 0-28 ("FLOAT", "BFLOAT16", ...); "UNKNOWN" outside the enum.
std::string_view OnnxName(int32_t code);
inline std::string_view OnnxName(DType t) { return OnnxName(static_cast<int32_t>(t)); }

// The DType of a supported code. Throws TensorTypeException naming the type and its code
// for known but unsupported codes, and naming the number for codes outside the enum.
DType FromOnnx(int32_t code);

// The DType stored as the C++ type T (float, int32_t, Float16, bool, ...).
template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<float>() {
  return DType::kFloat;
}
template <>
constexpr DType DTypeOf<uint8_t>() {
  return DType::kUint8;
}
template <>
constexpr DType DTypeOf<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType DTypeOf<uint16_t>() {
  return DType::kUint16;
}
template <>
constexpr DType DTypeOf<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType DTypeOf<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType DTypeOf<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType DTypeOf<bool>() {
  return DType::kBool;
}
template <>
constexpr DType DTypeOf<Float16>() {
  return DType::kFloat16;
}
template <>
constexpr DType DTypeOf<double>() {
  return DType::kDouble;
}
template <>
constexpr DType DTypeOf<uint32_t>() {
  return DType::kUint32;
}
template <>
constexpr DType DTypeOf<uint64_t>() {
  return DType::kUint64;
}
template <>
constexpr DType DTypeOf<BFloat16>() {
  return DType::kBFloat16;
}

}  // namespace onemodel
