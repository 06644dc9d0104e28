// TensorProto codec: ONNX `onnx::TensorProto` <-> `onemodel::Tensor`, for PutTensor/GetTensor
// and the header of a streamed upload (spec 2 and 3 limits, ONNX's typed data fields).
//
// Decoding checks everything (element type, dims, limits, which data field is used, its length
// and value ranges) before it allocates, and throws RpcError INVALID_ARGUMENT with a message
// that says what is wrong. Encoding always writes raw_data: row-major, little-endian.
//
//   BufferPool pool;
//   Tensor t = DecodeTensor(request.tensor(), pool);  // from raw_data or e.g. float_data
//   onnx::TensorProto reply;
//   EncodeTensor(t.Transpose(0, 1), pool, &reply);    // the view's values in row-major order
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/dtype/dtype.h"
#include "core/memory/allocator.h"
#include "core/shape/shape.h"
#include "core/tensor/tensor.h"
#include "onnx/onnx.pb.h"

namespace onemodel::server {

// What a TensorProto or a streamed-upload header declares.
struct TensorHeader {
  DType dtype;
  Shape shape;
  int64_t bytes;  // ElementCount() x ElementSize(dtype), at most 2^31-1
};

// Validates a data_type code and dims against spec 2 and 3; throws RpcError INVALID_ARGUMENT.
TensorHeader DecodeHeader(int32_t data_type, std::span<const int64_t> dims);

// Throws RpcError INVALID_ARGUMENT naming the first byte that is neither 0 nor 1 (BOOL data).
void CheckBoolBytes(std::span<const std::byte> bytes, std::string_view field);

// A new contiguous tensor from `allocator` holding proto's values; throws RpcError
// INVALID_ARGUMENT, before allocating anything, for a malformed or unsupported proto.
Tensor DecodeTensor(const onnx::TensorProto& proto, Allocator& allocator);

// Writes data_type, dims and raw_data (row-major, little-endian) of any plain or blocked tensor
// (blocked ones unblocked through `scratch`); clears the other data fields, keeps name.
void EncodeTensor(const Tensor& tensor, Allocator& scratch, onnx::TensorProto* proto);

}  // namespace onemodel::server
