#include "core/dtype/dtype.h"

#include <array>
#include <string>

#include "core/common/exceptions.h"

namespace onemodel {
namespace {

// Indexed by ONNX code, spelled as in onnx.proto's TensorProto.DataType.
constexpr std::array<std::string_view, kMaxOnnxCode + 1> kOnnxNames = {
    "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",     "INT16",
    "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",    "DOUBLE",
    "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16",   "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",       "FLOAT4E2M1",
    "FLOAT8E8M0",     "UINT2",      "INT2",           "FLOAT6E2M3", "FLOAT6E3M2",
};

}  // namespace

std::string_view OnnxName(int32_t code) {
  if (code < 0 || code > kMaxOnnxCode) return "UNKNOWN";
  return kOnnxNames[static_cast<size_t>(code)];
}

DType FromOnnx(int32_t code) {
  if (code < 0 || code > kMaxOnnxCode) {
    throw TensorTypeException("element type code " + std::to_string(code) +
                              " is not an ONNX TensorProto.DataType (known codes are 0-" +
                              std::to_string(kMaxOnnxCode) + ")");
  }
  const auto t = static_cast<DType>(code);
  if (!IsSupported(t)) {
    throw TensorTypeException(
        "element type " + std::string(OnnxName(code)) + " (code " + std::to_string(code) +
        ") is not supported; use FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, "
        "UINT8, UINT16, UINT32, UINT64 or BOOL");
  }
  return t;
}

}  // namespace onemodel
