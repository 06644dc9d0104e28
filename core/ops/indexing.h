// Indexing and joining along an axis: Embedding (a table lookup, spec 8's convention), Gather
// (ONNX Gather / torch.index_select), Concat and Split. All differentiable in their FLOAT
// inputs; index inputs are INT32 or INT64 of any shape and strides.
//
//   Tensor e = ops::Embedding(table, token_ids, /*skip_id=*/0, ctx);   // ids.shape + [D]
//   Tensor r = ops::Gather(x, rows, /*axis=*/0, ctx);
//   Tensor y = ops::Concat({a, b}, /*axis=*/1, ctx);
//   Tensor p = ops::Split(y, /*axis=*/1, /*split=*/{2, 3}, /*num_outputs=*/0, /*index=*/1, ctx);
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// Rows of the (V, D) FLOAT `table` picked by `indices` (INT32 or INT64, any shape), shape
// indices.shape + [D] (torch.nn.functional.embedding). Every index must be in [0, V): the
// first one that is not (in row-major order) is a TensorException naming its position, its
// value and V, thrown before anything is written. `skip_id` (PyTorch's padding_idx, in
// [0, V)) is looked up like any row but its row gets no gradient. Records (when the table
// requires gradients) the index tensor in Saved slot 0 and the skip id in Ints (-1: none);
// the table's gradient is summed in row-major index order, the same bits on every kernel set.
Tensor Embedding(const Tensor& table, const Tensor& indices, std::optional<int64_t> skip_id,
                 const OpContext& ctx);

// ONNX Gather: the slices of FLOAT `data` along `axis` (negative counts from the end) picked by
// `indices` (INT32 or INT64, any shape; negative counts from the end as ONNX allows), shape
// data.shape[:axis] + indices.shape + data.shape[axis+1:]. An index outside [-n, n) is a
// TensorException naming the first one (position and value) and n, before anything is
// written. Records the index tensor (Saved slot 0) and the axis (Ints); the gradient
// scatter-adds in row-major order.
Tensor Gather(const Tensor& data, const Tensor& indices, int axis, const OpContext& ctx);

// The FLOAT `inputs` (one or more, equal shapes except along `axis`) joined along `axis`
// (negative counts from the end). Records the axis; each input's gradient is its part.
Tensor Concat(std::span<const Tensor> inputs, int axis, const OpContext& ctx);

// Piece `index` of `x` cut along `axis` (a view, recorded as Slice): the pieces have the sizes
// `split` (>= 0, summing to the axis' extent) or, when `split` is empty, `num_outputs` pieces
// of ceil(n / num_outputs) with a shorter last one (ONNX Split). One operation gives one
// piece: a client runs one Split per piece it wants.
Tensor Split(const Tensor& x, int axis, std::span<const int64_t> split, int64_t num_outputs,
             int64_t index, const OpContext& ctx);

}  // namespace onemodel::ops
