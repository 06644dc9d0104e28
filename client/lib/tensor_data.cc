#include "client/lib/tensor_data.h"

namespace onemodel::client {
namespace {

using P = onnx::TensorProto;

Error Invalid(const std::string& message) {
  return Error(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// `field` as little-endian Dst values: one memcpy when the widths agree, else narrowed (ONNX
// stores 8- and 16-bit types and FLOAT16 bit patterns in int32_data).
template <typename Dst, typename Field>
std::string Pack(const Field& field) {
  using Src = typename Field::value_type;
  std::string bytes(field.size() * sizeof(Dst), '\0');
  if constexpr (sizeof(Src) == sizeof(Dst)) {
    if (!bytes.empty()) std::memcpy(bytes.data(), field.data(), bytes.size());
  } else {
    char* out = bytes.data();
    for (const Src value : field) {
      const auto narrowed = static_cast<Dst>(value);
      std::memcpy(out, &narrowed, sizeof(Dst));
      out += sizeof(Dst);
    }
  }
  return bytes;
}

// The bytes of the typed field ONNX assigns to `proto`'s data_type.
std::string PackTypedField(const P& proto) {
  switch (proto.data_type()) {
    case P::FLOAT:
      return Pack<float>(proto.float_data());
    case P::DOUBLE:
      return Pack<double>(proto.double_data());
    case P::INT64:
      return Pack<int64_t>(proto.int64_data());
    case P::UINT64:
      return Pack<uint64_t>(proto.uint64_data());
    case P::UINT32:
      return Pack<uint32_t>(proto.uint64_data());
    case P::INT32:
      return Pack<int32_t>(proto.int32_data());
    case P::INT16:
      return Pack<int16_t>(proto.int32_data());
    case P::INT8:
      return Pack<int8_t>(proto.int32_data());
    case P::UINT16:
    case P::FLOAT16:
    case P::BFLOAT16:
      return Pack<uint16_t>(proto.int32_data());
    case P::UINT8:
    case P::BOOL:
      return Pack<uint8_t>(proto.int32_data());
    default:
      throw Invalid("unsupported tensor element type " + DataTypeName(proto.data_type()));
  }
}

// The typed field ONNX assigns to `data_type`'s values; "" for a type this client lacks.
std::string TypedFieldName(int32_t data_type) {
  switch (data_type) {
    case P::FLOAT:
      return "float_data";
    case P::DOUBLE:
      return "double_data";
    case P::INT64:
      return "int64_data";
    case P::UINT64:
    case P::UINT32:
      return "uint64_data";
    default:
      return ElementBytes(data_type) > 0 ? "int32_data" : "";
  }
}

// Refuses, as the server does, values in a typed field that is not `proto`'s type's own, or in
// both raw_data and that field (one of them would be dropped unseen).
void CheckOneTypedField(const P& proto) {
  const std::string own = TypedFieldName(proto.data_type());
  if (own.empty()) return;  // an unsupported type: PackTypedField or Validate says so
  const std::pair<const char*, int> fields[] = {
      {"float_data", proto.float_data_size()},   {"double_data", proto.double_data_size()},
      {"int32_data", proto.int32_data_size()},   {"int64_data", proto.int64_data_size()},
      {"uint64_data", proto.uint64_data_size()}, {"string_data", proto.string_data_size()}};
  for (const auto& [name, size] : fields) {
    if (size == 0) continue;
    if (name != own) {
      throw Invalid("tensor of " + DataTypeName(proto.data_type()) + " has " + name + "; its " +
                    "values go in raw_data or " + own);
    }
    if (proto.has_raw_data()) {
      throw Invalid("tensor has both raw_data and " + own + ": keep the values in only one");
    }
  }
}

}  // namespace

int64_t ElementBytes(int32_t data_type) {
  switch (data_type) {
    case P::UINT8:
    case P::INT8:
    case P::BOOL:
      return 1;
    case P::UINT16:
    case P::INT16:
    case P::FLOAT16:
    case P::BFLOAT16:
      return 2;
    case P::FLOAT:
    case P::INT32:
    case P::UINT32:
      return 4;
    case P::INT64:
    case P::DOUBLE:
    case P::UINT64:
      return 8;
    default:
      return 0;
  }
}

std::string DataTypeName(int32_t data_type) {
  if (!P::DataType_IsValid(data_type)) return "type " + std::to_string(data_type);
  return P::DataType_Name(static_cast<P::DataType>(data_type));
}

int64_t NumElements(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (const int64_t d : dims) {
    if (d < 0) throw Invalid("negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(count, d, &count)) throw Invalid("element count overflows");
  }
  return count;
}

void TensorData::Validate() const {
  const int64_t element_bytes = ElementBytes(data_type);
  if (element_bytes == 0) {
    throw Invalid("unsupported tensor element type " + DataTypeName(data_type));
  }
  const int64_t expected = NumElements(dims) * element_bytes;
  if (static_cast<int64_t>(bytes.size()) != expected) {
    throw Invalid("tensor of " + DataTypeName(data_type) + " has " + std::to_string(bytes.size()) +
                  " bytes; its dims need " + std::to_string(expected));
  }
}

onnx::TensorProto ToProto(TensorData data) {
  P proto;
  proto.set_data_type(data.data_type);
  proto.mutable_dims()->Add(data.dims.begin(), data.dims.end());
  proto.set_raw_data(std::move(data.bytes));
  return proto;
}

TensorData FromProto(onnx::TensorProto proto) {
  if (proto.data_location() == P::EXTERNAL || proto.external_data_size() > 0) {
    throw Invalid("tensor '" + proto.name() + "' keeps its data in an external file");
  }
  if (proto.has_segment()) throw Invalid("tensor '" + proto.name() + "' is a segment");
  CheckOneTypedField(proto);
  TensorData data;
  data.data_type = proto.data_type();
  data.dims.assign(proto.dims().begin(), proto.dims().end());
  data.bytes = proto.has_raw_data() ? std::move(*proto.mutable_raw_data()) : PackTypedField(proto);
  data.Validate();
  return data;
}

}  // namespace onemodel::client
