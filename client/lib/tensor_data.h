// TensorData: a tensor's bytes on the client side, and its conversions from and to
// std::span / std::vector and ONNX TensorProto.
//
// The bytes are row-major and little-endian, as TensorProto.raw_data holds them, so a
// TensorData moves into a TensorProto (and back) without copying. Bulk data is only ever
// memcpy'd; ONNX's typed fields (float_data, int32_data, ...) are read for files that use them.
//
//   std::vector<float> values = {1, 2, 3, 4, 5, 6};
//   TensorData t = TensorData::From<float>(values, {2, 3});
//   onnx::TensorProto proto = ToProto(std::move(t));
//   std::vector<float> back = FromProto(std::move(proto)).ToVector<float>();
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "client/lib/error.h"
#include "onnx/onnx.pb.h"

namespace onemodel::client {

static_assert(std::endian::native == std::endian::little,
              "the client copies host memory as little-endian wire bytes");

// The ONNX element type of C++ type T (FLOAT for float, BOOL for bool, ...).
template <typename T>
constexpr int32_t DataTypeOf() {
  using P = onnx::TensorProto;
  if constexpr (std::is_same_v<T, float>)
    return P::FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return P::DOUBLE;
  else if constexpr (std::is_same_v<T, int8_t>)
    return P::INT8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return P::UINT8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return P::INT16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return P::UINT16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return P::INT32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return P::UINT32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return P::INT64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return P::UINT64;
  else if constexpr (std::is_same_v<T, bool>)
    return P::BOOL;
  else
    static_assert(sizeof(T) == 0, "T has no ONNX element type");
}

// Bytes per element of `data_type`, or 0 when the server does not support it.
int64_t ElementBytes(int32_t data_type);
// ONNX's name of `data_type` ("FLOAT", "FLOAT16"), or "type <code>" when unknown.
std::string DataTypeName(int32_t data_type);
// The most bytes one tensor's data may hold (spec 3: 2^31 - 1).
inline constexpr int64_t kMaxTensorBytes = 2147483647;
// The element count of `dims` (1 for a scalar); Error(INVALID_ARGUMENT) on a negative extent.
int64_t NumElements(std::span<const int64_t> dims);

struct TensorData {
  int32_t data_type = onnx::TensorProto::UNDEFINED;
  std::vector<int64_t> dims;
  std::string bytes;  // row-major, little-endian

  // A copy of `values` shaped `dims`; Error(INVALID_ARGUMENT) when the counts differ.
  template <typename T>
  static TensorData From(std::span<const T> values, std::vector<int64_t> dims);

  // The elements as T; Error(INVALID_ARGUMENT) unless T matches data_type. Raw bits are also
  // readable: uint8_t for BOOL, uint16_t for FLOAT16 and BFLOAT16. (std::vector<bool> packs
  // bits, so read BOOL as uint8_t.)
  template <typename T>
  std::vector<T> ToVector() const;

  // Error(INVALID_ARGUMENT) unless data_type is supported and bytes fit dims exactly.
  void Validate() const;
};

// A TensorProto holding `data` in raw_data (the bytes are moved, not copied).
onnx::TensorProto ToProto(TensorData data);
// The tensor of `proto`, from raw_data (moved) or the typed field ONNX assigns its type;
// Error(INVALID_ARGUMENT) for external data, segments, unsupported types or a size mismatch.
TensorData FromProto(onnx::TensorProto proto);

template <typename T>
TensorData TensorData::From(std::span<const T> values, std::vector<int64_t> dims) {
  const int64_t count = NumElements(dims);
  if (count != static_cast<int64_t>(values.size())) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                "TensorData::From: " + std::to_string(values.size()) +
                    " values do not fill dims holding " + std::to_string(count) + " elements");
  }
  TensorData data{DataTypeOf<T>(), std::move(dims), {}};
  data.bytes.resize(values.size_bytes());
  if (!values.empty()) std::memcpy(data.bytes.data(), values.data(), values.size_bytes());
  return data;
}

template <typename T>
std::vector<T> TensorData::ToVector() const {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> packs bits: read BOOL as uint8_t");
  using P = onnx::TensorProto;
  const bool raw_bits =
      (std::is_same_v<T, uint8_t> && data_type == P::BOOL) ||
      (std::is_same_v<T, uint16_t> && (data_type == P::FLOAT16 || data_type == P::BFLOAT16));
  if (data_type != DataTypeOf<T>() && !raw_bits) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT, "tensor holds " + DataTypeName(data_type) +
                                                        ", not " + DataTypeName(DataTypeOf<T>()));
  }
  Validate();
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

}  // namespace onemodel::client
