// Inline cost: how much work a session request is, estimated before it runs, so the service
// can run a small one on gRPC's callback thread when its session is idle (no hop to a worker)
// and send anything larger to the worker pool (docs/operations.md#inline-requests).
//
// The cost is the bytes a request touches: the tensors it decodes, reads, writes and encodes,
// from the sizes of its inputs (handles, inline tensors and earlier outputs of the same run)
// and the shape rules of the operations; MatMul adds one per multiply-add. Operations whose
// output this file cannot bound from their inputs (and any operation it does not list) cost
// kNotInline, so a new operation runs on a worker until it is added here.
//
// Call these on the session's strand (they read its handle table). A request that will fail
// (an unknown handle or operation, a malformed tensor) costs what it has read until then: it
// fails before doing any work.
//
//   if (RunCost(session, request) <= config.inline_max_bytes) { /* run it here */ }
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "onemodel/v1/onemodel.pb.h"
#include "server/sessions/session.h"

namespace onemodel::server {

// The cost of a request that must not run inline (unbounded or unknown work).
inline constexpr int64_t kNotInline = std::numeric_limits<int64_t>::max();

// Bytes a Run touches: for each operation, its inputs and its output, plus MatMul's
// multiply-adds. kNotInline when an operation's output is not bounded by the rules above.
int64_t RunCost(Session& session, const v1::RunRequest& request);

// Bytes decoding `proto` writes (its declared dims times its element size).
int64_t TensorProtoCost(const onnx::TensorProto& proto);

// Bytes of the tensor `handle` names (GetTensor encodes them); 0 for an unknown handle.
int64_t HandleCost(Session& session, const std::string& handle);

}  // namespace onemodel::server
