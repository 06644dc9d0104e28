// The work of the session-scoped RPCs, run on the session's strand: storing uploads, runs of
// operations, backward and releasing handles. The service (service.cc) and the streamed
// upload (stream_reactors.cc) call these; they hold no gRPC state besides the call context
// they check for cancellation.
//
//   session->strand().Post([&] { ExecuteRun(*session, request, limits, ctx, &reply); });
#pragma once

#include <grpcpp/server_context.h>

#include <cstdint>
#include <string>

#include "core/tensor/tensor.h"
#include "onemodel/v1/onemodel.pb.h"
#include "server/sessions/session.h"

namespace onemodel::server {

// Our placement for the proto's; `fallback` for PLACEMENT_UNSPECIFIED. Throws RpcError
// INVALID_ARGUMENT for a value the proto does not define.
Placement PlacementOf(v1::Placement placement, Placement fallback);

// Where an upload's bytes go before StoreTensor: the arena or the pool (a temporary for an
// in-place write into `target`).
Allocator& UploadAllocator(Session& session, Placement placement, const std::string& target);

// Gives `t`'s memory back when this session's pool or arena holds it and it is still live: for
// a tensor no handle names (a failed upload or run). An arena tensor's slice is reused at once
// when nothing allocated after it is live (Arena::Free); a tensor of anyone else is untouched.
void DisposeIfOwned(Session& session, const Tensor& t);

// Keeps `value` (from UploadAllocator) as a new handle, or writes it into `target` in place
// (same type and shape; no recording; the target's version increases) and frees it. Fills
// `reply` with the resulting handle's description.
void StoreTensor(Session& session, Tensor value, Placement placement, bool requires_grad,
                 const std::string& target, v1::TensorInfo* reply);

// Runs the request's operations in order (see RunRequest); every output gets a handle.
// Stops with CANCELLED or DEADLINE_EXCEEDED between operations once the call is over. On
// failure nothing gets a handle and the error names the failing operation.
void ExecuteRun(Session& session, const v1::RunRequest& request, int64_t max_operations,
                const grpc::CallbackServerContext& ctx, v1::RunReply* reply);

// Gradients of the root with respect to the named inputs (see BackwardRequest).
void ExecuteBackward(Session& session, const v1::BackwardRequest& request,
                     v1::BackwardReply* reply);

// Forgets every handle (all are checked first: one bad handle releases none); a handle that
// owns its pool buffer returns it. Returns how many were released.
int64_t ReleaseHandles(Session& session,
                       const google::protobuf::RepeatedPtrField<std::string>& handles);

}  // namespace onemodel::server
