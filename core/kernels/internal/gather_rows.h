// GatherRows (TensorKernels::GatherRows): the row copy of Embedding and Gather. Both variants
// copy the same rows with memcpy, so they are equal bit for bit; the fast one splits the rows
// over the thread pool.
#pragma once

#include <cstdint>

#include "core/tensor/tensor.h"

namespace onemodel::internal {

// One GatherRows call as raw pointers: out[o, j, :] = table[o, indices[j], :] for table
// (outer, v, width), indices (count) in [-v, v) (negative: from the end), out (outer, count,
// width).
struct GatherRowsCall {
  const float* table;
  const int32_t* indices32;  // one of the two is set
  const int64_t* indices64;
  float* out;
  int64_t v, count, width;
  int64_t rows;  // outer * count: out's rows
};

// The call for contiguous tensors as TensorKernels::GatherRows takes them; bumps out's version
// once (threads then write through the pointer).
GatherRowsCall GatherRowsOf(const Tensor& table, const Tensor& indices, Tensor& out);

// Copies rows [begin, end) of the call's out.
void GatherRowRange(const GatherRowsCall& call, int64_t begin, int64_t end);

}  // namespace onemodel::internal
