#include "client/cli/tensor_file.h"

#include <fstream>

#include "client/cli/npy.h"

namespace onemodel::cli {
namespace {

using client::Error;

bool EndsWith(const std::string& path, const std::string& suffix) {
  return path.size() > suffix.size() && path.ends_with(suffix);
}

Error FileError(const std::string& path, const std::string& message) {
  return Error(grpc::StatusCode::INVALID_ARGUMENT, "'" + path + "': " + message);
}

}  // namespace

bool IsTensorFileName(const std::string& path) {
  return EndsWith(path, ".npy") || EndsWith(path, ".pb");
}

client::TensorData ReadTensorFile(const std::string& path) {
  if (!IsTensorFileName(path)) throw FileError(path, "expected a .npy or .pb file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open for reading");
  if (EndsWith(path, ".npy")) return ReadNpy(in, path);
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in)) throw FileError(path, "not a serialized onnx.TensorProto");
  if (proto.data_type() == onnx::TensorProto::UNDEFINED) {
    throw FileError(path,
                    "holds no tensor: its data_type is UNDEFINED (an empty file, or a "
                    "message other than an onnx.TensorProto, such as a ModelProto)");
  }
  try {
    return client::FromProto(std::move(proto));
  } catch (const Error& e) {
    throw FileError(path, e.what());
  }
}

void WriteTensorFile(const std::string& path, const client::TensorData& data) {
  if (!IsTensorFileName(path)) throw FileError(path, "expected a .npy or .pb file");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FileError(path, "cannot open for writing");
  if (EndsWith(path, ".npy")) {
    WriteNpy(out, data);
  } else if (!client::ToProto(data).SerializeToOstream(&out)) {
    throw FileError(path, "cannot serialize the tensor");
  }
  out.close();
  if (!out) throw FileError(path, "write failed");
}

}  // namespace onemodel::cli
