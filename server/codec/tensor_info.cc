#include "server/codec/tensor_info.h"

#include "core/autograd/backward_record.h"
#include "core/dtype/dtype.h"
#include "core/tensor/layout.h"

namespace onemodel::server {

v1::Placement ToProto(Placement placement) {
  return placement == Placement::kArena ? v1::PLACEMENT_ARENA : v1::PLACEMENT_POOL;
}

void FillTensorInfo(const std::string& handle, const HandleEntry& entry, v1::TensorInfo* info) {
  const Tensor& t = entry.tensor;
  info->set_handle(handle);
  info->set_data_type(static_cast<int32_t>(t.dtype()));
  info->set_data_type_name(std::string(OnnxName(static_cast<int32_t>(t.dtype()))));
  for (int d = 0; d < t.rank(); ++d) {
    info->add_dims(t.shape()[d]);
    info->add_strides(t.strides()[d]);
  }
  info->set_offset(t.offset());
  info->set_layout(std::string(LayoutName(t.layout())));
  info->set_block_size(t.block_size());
  info->set_buffer_id(t.buffer()->id());
  info->set_generation(t.generation());
  info->set_version(t.version());
  info->set_requires_grad(t.requires_grad());
  info->set_placement(ToProto(entry.placement));
  if (const BackwardRecord* record = GradFn(t)) {
    info->set_grad_fn(std::string(OpKindName(record->op())));
  } else if (t.requires_grad()) {
    info->set_grad_fn("leaf");
  }
  info->set_buffer_bytes(t.buffer()->length());
}

}  // namespace onemodel::server
