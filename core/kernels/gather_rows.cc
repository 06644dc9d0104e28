#include "core/kernels/internal/gather_rows.h"

#include <cstring>

namespace onemodel::internal {
namespace {

template <typename Index>
void CopyRows(const GatherRowsCall& c, const Index* indices, int64_t begin, int64_t end) {
  const size_t bytes = static_cast<size_t>(c.width) * sizeof(float);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t o = r / c.count;
    const int64_t i = indices[r - o * c.count];
    std::memcpy(c.out + r * c.width, c.table + (o * c.v + (i < 0 ? i + c.v : i)) * c.width,
                bytes);
  }
}

}  // namespace

GatherRowsCall GatherRowsOf(const Tensor& table, const Tensor& indices, Tensor& out) {
  const bool int32 = indices.dtype() == DType::kInt32;
  return {table.Data<float>().data(),
          int32 ? indices.Data<int32_t>().data() : nullptr,
          int32 ? nullptr : indices.Data<int64_t>().data(),
          out.MutableData<float>().data(),
          table.shape()[1],
          indices.shape()[0],
          table.shape()[2],
          int64_t{out.shape()[0]} * out.shape()[1]};
}

void GatherRowRange(const GatherRowsCall& call, int64_t begin, int64_t end) {
  if (call.indices32) {
    CopyRows(call, call.indices32, begin, end);
  } else {
    CopyRows(call, call.indices64, begin, end);
  }
}

}  // namespace onemodel::internal
