// TensorHandle: a tensor that lives on the server, named by an opaque handle string that is
// valid only in its own session, with the TensorInfo the server last reported for it.
//
//   TensorHandle x = session.Put<float>(values, {2, 3});
//   x.id();      // "p12.9f3c..."
//   x.dims();    // {2, 3}
//   TensorHandle again(x.id());   // only the id: dims and type unknown until Describe
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/lib/tensor_data.h"
#include "onemodel/v1/onemodel.pb.h"

namespace onemodel::client {

class TensorHandle {
 public:
  TensorHandle() = default;
  // A handle known only by its id.
  explicit TensorHandle(std::string id) { info_.set_handle(std::move(id)); }
  // A handle with the server's description of it.
  explicit TensorHandle(v1::TensorInfo info) : info_(std::move(info)) {}

  const std::string& id() const { return info_.handle(); }
  // What the server last said about the tensor (only the handle when constructed from an id).
  const v1::TensorInfo& info() const { return info_; }
  // Whether info() describes the tensor (false for a handle made from an id).
  bool has_info() const { return info_.data_type() != onnx::TensorProto::UNDEFINED; }
  int32_t data_type() const { return info_.data_type(); }
  std::vector<int64_t> dims() const { return {info_.dims().begin(), info_.dims().end()}; }
  // The tensor's data size in bytes (row-major); -1 without info.
  int64_t DataBytes() const {
    return has_info() ? NumElements(dims()) * ElementBytes(data_type()) : -1;
  }

 private:
  v1::TensorInfo info_;
};

}  // namespace onemodel::client
