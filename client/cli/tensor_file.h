// Tensor files the CLI reads and writes, chosen by extension: .npy (NumPy) or .pb (one
// serialized onnx.TensorProto, raw_data or typed fields).
//
//   TensorData x = ReadTensorFile("x.npy");
//   WriteTensorFile("x.pb", x);
#pragma once

#include <string>

#include "client/lib/tensor_data.h"

namespace onemodel::cli {

// Whether `path` names a tensor file by its extension (.npy or .pb).
bool IsTensorFileName(const std::string& path);
// The tensor in `path`; Error(INVALID_ARGUMENT) when unreadable or malformed.
client::TensorData ReadTensorFile(const std::string& path);
// Writes `data` to `path` in the format its extension names.
void WriteTensorFile(const std::string& path, const client::TensorData& data);

}  // namespace onemodel::cli
