// TensorInfo: what DescribeTensor, PutTensor, Run and Backward tell a client about a handle.
//
//   FillTensorInfo(handle, entry, reply.add_outputs());
#pragma once

#include <string>

#include "onemodel/v1/onemodel.pb.h"
#include "server/sessions/handle_table.h"

namespace onemodel::server {

// Every TensorInfo field from the entry's tensor (dtype, shape, strides, offset, layout,
// buffer identity, version, gradient tracking) and its placement.
void FillTensorInfo(const std::string& handle, const HandleEntry& entry, v1::TensorInfo* info);

// The proto's placement enum for ours.
v1::Placement ToProto(Placement placement);

}  // namespace onemodel::server
