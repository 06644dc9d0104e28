#include "server/codec/tensor_codec.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/common/exceptions.h"
#include "core/tensor/layout.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

static_assert(std::endian::native == std::endian::little,
              "raw_data is little-endian and is copied as is: port the codec before building "
              "on a big-endian machine");

// The repeated value fields of a TensorProto, in field-number order.
enum class Field { kFloat, kInt32, kString, kInt64, kDouble, kUint64 };
constexpr std::array<Field, 6> kFields = {Field::kFloat, Field::kInt32,  Field::kString,
                                          Field::kInt64, Field::kDouble, Field::kUint64};

std::string_view FieldName(Field f) {
  constexpr std::array<std::string_view, 6> kNames = {"float_data", "int32_data",  "string_data",
                                                      "int64_data", "double_data", "uint64_data"};
  return kNames[static_cast<size_t>(f)];
}

int64_t FieldSize(const onnx::TensorProto& p, Field f) {
  switch (f) {
    case Field::kFloat:
      return p.float_data_size();
    case Field::kInt32:
      return p.int32_data_size();
    case Field::kString:
      return p.string_data_size();
    case Field::kInt64:
      return p.int64_data_size();
    case Field::kDouble:
      return p.double_data_size();
    case Field::kUint64:
      return p.uint64_data_size();
  }
  return 0;
}

// The one typed field ONNX allows for a supported type (narrow types go one per int32).
Field TypedField(DType t) {
  switch (t) {
    case DType::kFloat:
      return Field::kFloat;
    case DType::kInt64:
      return Field::kInt64;
    case DType::kDouble:
      return Field::kDouble;
    case DType::kUint32:
    case DType::kUint64:
      return Field::kUint64;
    default:
      return Field::kInt32;
  }
}

// The values the typed field may hold for `t`: 16-bit floats as their bit pattern.
struct ValueRange {
  int64_t lo;
  uint64_t hi;
};
ValueRange RangeOf(DType t) {
  switch (t) {
    case DType::kBool:
      return {0, 1};
    case DType::kInt8:
      return {-128, 127};
    case DType::kUint8:
      return {0, 255};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kUint16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return {0, 65535};
    case DType::kUint32:
      return {0, 4294967295u};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<uint64_t>::max()};
  }
}

// "1 byte", "24 bytes".
std::string Count(int64_t n, std::string_view unit) {
  return std::to_string(n) + " " + std::string(unit) + (n == 1 ? "" : "s");
}

// "FLOAT [2, 3]".
std::string Describe(const TensorHeader& h) {
  return std::string(OnnxName(h.dtype)) + " " + h.shape.ToString();
}

// Throws unless every integer value fits `t` (checked only where the values are narrowed).
template <typename Src>
void CheckRange(const google::protobuf::RepeatedField<Src>& values, Field field, DType t) {
  if constexpr (std::is_integral_v<Src>) {
    if (ElementSize(t) == sizeof(Src)) return;
    const ValueRange r = RangeOf(t);
    const auto bad = std::find_if(values.begin(), values.end(), [&](Src v) {
      return std::cmp_less(v, r.lo) || std::cmp_greater(v, r.hi);
    });
    if (bad == values.end()) return;
    std::string message = std::string(FieldName(field)) + "[" +
                          std::to_string(bad - values.begin()) + "] is " + std::to_string(*bad) +
                          ", outside the range of " + std::string(OnnxName(t)) + " (" +
                          std::to_string(r.lo) + " to " + std::to_string(r.hi) + ")";
    if (t == DType::kFloat16 || t == DType::kBFloat16) {
      message += ": each value is the 16-bit pattern of one " + std::string(OnnxName(t)) +
                 " (1.0 is " + (t == DType::kFloat16 ? "15360" : "16256") + ")";
    }
    throw InvalidArgument(message);
  }
}

// Each value's low sizeof(Dst) bytes: its two's-complement pattern once range-checked.
template <typename Dst, typename Src>
void Narrow(const google::protobuf::RepeatedField<Src>& values, std::byte* out) {
  std::transform(values.begin(), values.end(), reinterpret_cast<Dst*>(out),
                 [](Src v) { return static_cast<Dst>(v); });
}

// Writes `values` as elements of `size` bytes in one pass (a memcpy when the widths match).
template <typename Src>
void WriteValues(const google::protobuf::RepeatedField<Src>& values, int size, std::byte* out) {
  if (size == sizeof(Src)) {
    std::memcpy(out, values.data(), values.size() * sizeof(Src));
  } else if constexpr (std::is_integral_v<Src>) {
    switch (size) {
      case 1:
        Narrow<uint8_t>(values, out);
        break;
      case 2:
        Narrow<uint16_t>(values, out);
        break;
      case 4:
        Narrow<uint32_t>(values, out);
        break;
    }
  }
}

// Calls f(repeated field) for one integer or floating field (string_data never gets here).
template <typename F>
void VisitField(const onnx::TensorProto& p, Field field, F&& f) {
  switch (field) {
    case Field::kFloat:
      f(p.float_data());
      break;
    case Field::kInt32:
      f(p.int32_data());
      break;
    case Field::kInt64:
      f(p.int64_data());
      break;
    case Field::kDouble:
      f(p.double_data());
      break;
    case Field::kUint64:
      f(p.uint64_data());
      break;
    case Field::kString:
      break;
  }
}

}  // namespace

TensorHeader DecodeHeader(int32_t data_type, std::span<const int64_t> dims) {
  if (data_type == 0) {
    throw InvalidArgument(
        "data_type is 0 (UNDEFINED): set it to the element type's ONNX code, e.g. 1 for FLOAT");
  }
  // Checked here so a huge dims list is never formatted into the message.
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    throw InvalidArgument("dims has " + std::to_string(dims.size()) +
                          " entries; the maximum rank is " + std::to_string(kMaxRank));
  }
  try {
    const DType dtype = FromOnnx(data_type);
    Shape shape(dims);
    CheckByteSize(shape, dtype);
    return {dtype, shape, shape.ElementCount() * ElementSize(dtype)};
  } catch (const TensorException& e) {
    throw InvalidArgument(e.what());
  }
}

Tensor DecodeTensor(const onnx::TensorProto& proto, Allocator& allocator) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0) {
    throw InvalidArgument(
        "TensorProto uses external data (data_location EXTERNAL or external_data entries), "
        "which the server cannot read: send the values in raw_data, or stream a large tensor "
        "with UploadTensor");
  }
  if (proto.has_segment()) {
    throw InvalidArgument(
        "TensorProto has a segment: split tensors are not supported; send the whole tensor in "
        "one TensorProto, or stream a large tensor with UploadTensor");
  }
  const TensorHeader h = DecodeHeader(
      proto.data_type(), std::span<const int64_t>(proto.dims().data(), proto.dims().size()));
  const Field allowed = TypedField(h.dtype);
  for (Field f : kFields) {
    if (f != allowed && FieldSize(proto, f) > 0) {
      throw InvalidArgument("TensorProto of type " + std::string(OnnxName(h.dtype)) + " has " +
                            std::string(FieldName(f)) + "; " + std::string(OnnxName(h.dtype)) +
                            " values go in raw_data or " + std::string(FieldName(allowed)));
    }
  }
  const int64_t values = FieldSize(proto, allowed);
  if (proto.has_raw_data() && values > 0) {
    throw InvalidArgument("TensorProto has both raw_data and " + std::string(FieldName(allowed)) +
                          ": send the values in only one of them");
  }
  const int64_t count = h.shape.ElementCount();
  if (proto.has_raw_data()) {
    const int64_t raw = static_cast<int64_t>(proto.raw_data().size());
    if (raw != h.bytes) {
      throw InvalidArgument("raw_data has " + Count(raw, "byte") + "; " + Describe(h) + " needs " +
                            std::to_string(h.bytes));
    }
    if (h.dtype == DType::kBool) {
      CheckBoolBytes(std::as_bytes(std::span(proto.raw_data().data(), proto.raw_data().size())),
                     "raw_data");
    }
  } else if (values == 0 && count > 0) {
    throw InvalidArgument("TensorProto has no data: " + Describe(h) + " needs " +
                          Count(h.bytes, "byte") + " in raw_data or " + Count(count, "value") +
                          " in " + std::string(FieldName(allowed)));
  } else if (values != count) {
    throw InvalidArgument(std::string(FieldName(allowed)) + " has " + Count(values, "value") +
                          "; " + Describe(h) + " needs " + std::to_string(count));
  } else {
    VisitField(proto, allowed, [&](const auto& field) { CheckRange(field, allowed, h.dtype); });
  }

  Tensor out = Tensor::Empty(h.shape, h.dtype, allocator);
  if (count == 0) return out;
  std::byte* dst = out.MutableRawData().data();
  if (proto.has_raw_data()) {
    std::memcpy(dst, proto.raw_data().data(), static_cast<size_t>(h.bytes));
  } else {
    VisitField(proto, allowed,
               [&](const auto& field) { WriteValues(field, ElementSize(h.dtype), dst); });
  }
  return out;
}

void CheckBoolBytes(std::span<const std::byte> bytes, std::string_view field) {
  const auto bad = std::find_if(bytes.begin(), bytes.end(),
                                [](std::byte b) { return std::to_integer<uint8_t>(b) > 1; });
  if (bad == bytes.end()) return;
  throw InvalidArgument(std::string(field) + "[" + std::to_string(bad - bytes.begin()) + "] is " +
                        std::to_string(std::to_integer<int>(*bad)) +
                        ", outside the range of BOOL (0 to 1)");
}

void EncodeTensor(const Tensor& tensor, Allocator& scratch, onnx::TensorProto* proto) {
  if (tensor.block_size() != 0) {
    Tensor nchw = tensor.ToLayout(Layout::kNchw, scratch);
    try {
      EncodeTensor(nchw, scratch, proto);
    } catch (...) {
      nchw.Dispose();
      throw;
    }
    nchw.Dispose();
    return;
  }
  // The values first: a released (or null) tensor throws here, before the proto is touched.
  std::string raw(static_cast<size_t>(tensor.ElementCount() * ElementSize(tensor.dtype())), '\0');
  tensor.CopyLogicalBytes(0, std::as_writable_bytes(std::span(raw)));

  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto->clear_dims();
  proto->mutable_dims()->Reserve(tensor.rank());
  for (int32_t e : tensor.shape().extents()) proto->add_dims(e);
  // The proto carries exactly one copy of the values.
  proto->clear_float_data();
  proto->clear_int32_data();
  proto->clear_string_data();
  proto->clear_int64_data();
  proto->clear_double_data();
  proto->clear_uint64_data();
  proto->clear_external_data();
  proto->clear_data_location();
  proto->clear_segment();
  *proto->mutable_raw_data() = std::move(raw);
}

}  // namespace onemodel::server
