#include "server/rpc/session_ops.h"

#include <optional>
#include <unordered_set>
#include <vector>

#include "core/autograd/engine.h"
#include "core/ops/conversion.h"
#include "core/tensor/grad_mode.h"
#include "server/codec/tensor_codec.h"
#include "server/codec/tensor_info.h"
#include "server/observability/logging.h"
#include "server/observability/request_phases.h"
#include "server/ops/grad_op.h"
#include "server/ops/op_registry.h"
#include "server/rpc/request_context.h"
#include "server/rpc/rpc_error.h"
#include "server/rpc/status_mapping.h"

namespace onemodel::server {
namespace {

// The tensor an Input names; `outputs` are the earlier results of the same run (none for
// Backward's grad_output).
Tensor ResolveInput(Session& session, const v1::Input& input, std::span<const Tensor> outputs,
                    const char* where) {
  switch (input.source_case()) {
    case v1::Input::kHandle:
      return session.handles().Find(input.handle()).tensor;
    case v1::Input::kOutput:
      if (input.output() < 0 || static_cast<size_t>(input.output()) >= outputs.size()) {
        throw InvalidArgument(std::string(where) + " refers to output " +
                              std::to_string(input.output()) + ", but only " +
                              std::to_string(outputs.size()) +
                              " earlier outputs exist here (outputs are numbered from 0 in "
                              "request order)");
      }
      return outputs[static_cast<size_t>(input.output())];
    case v1::Input::kTensor: {
      const PhaseTimer timer(Phase::kDecode);
      return DecodeTensor(input.tensor(), session.arena());
    }
    case v1::Input::SOURCE_NOT_SET:
      break;
  }
  throw InvalidArgument(std::string(where) + " has no source: set handle, output or tensor");
}

// Moves `t` into the pool when asked and it lives elsewhere (a view of an arena tensor).
Tensor Place(Session& session, Placement placement, const Tensor& t) {
  if (placement == Placement::kPool && t.buffer()->owner() != &session.ledger()) {
    return ops::Copy(t, session.PoolContext());
  }
  return t;
}

// Whether a pool result owns its buffer: it does unless it shares one with `others`.
bool OwnsBuffer(const Tensor& t, std::span<const Tensor> others) {
  for (const Tensor& o : others) {
    if (!o.is_null() && o.buffer() == t.buffer()) return false;
  }
  return true;
}

// The buffers of tensors a request named or was given, to tell which new results share one
// (as OwnsBuffer does, in constant time per result: a Backward may name 100,000 inputs).
class KnownBuffers {
 public:
  void Add(const Tensor& t) {
    if (!t.is_null()) buffers_.insert(t.buffer());
  }
  // Whether t's buffer is none of those added.
  bool Owns(const Tensor& t) const { return !buffers_.contains(t.buffer()); }

 private:
  std::unordered_set<const Buffer*> buffers_;
};

// Frees the results that will get no handle (a failed run), pool and arena alike.
void DisposeUnnamed(Session& session, std::span<const Tensor> results,
                    const std::vector<bool>& owns) {
  for (size_t i = 0; i < results.size(); ++i) {
    if (owns[i]) DisposeIfOwned(session, results[i]);
  }
}

}  // namespace

Placement PlacementOf(v1::Placement placement, Placement fallback) {
  switch (placement) {
    case v1::PLACEMENT_UNSPECIFIED:
      return fallback;
    case v1::PLACEMENT_POOL:
      return Placement::kPool;
    case v1::PLACEMENT_ARENA:
      return Placement::kArena;
    default:
      break;
  }
  throw InvalidArgument("placement " + std::to_string(placement) +
                        " is not defined; use PLACEMENT_POOL (1) or PLACEMENT_ARENA (2)");
}

void DisposeIfOwned(Session& session, const Tensor& t) {
  if (!session.ledger().ReleaseIfOwned(t.buffer(), t.generation())) {
    session.arena().FreeIfOwned(t.buffer(), t.generation());
  }
}

Allocator& UploadAllocator(Session& session, Placement placement, const std::string& target) {
  if (placement == Placement::kArena && target.empty()) return session.arena();
  return session.ledger();
}

void StoreTensor(Session& session, Tensor value, Placement placement, bool requires_grad,
                 const std::string& target, v1::TensorInfo* reply) {
  try {
    if (!target.empty()) {
      const HandleEntry& entry = session.handles().Find(target);
      if (entry.tensor.dtype() != value.dtype() || !(entry.tensor.shape() == value.shape())) {
        throw InvalidArgument("cannot write " + std::string(OnnxName(value.dtype())) + " " +
                              value.shape().ToString() + " into target '" + target +
                              "', which is " + std::string(OnnxName(entry.tensor.dtype())) + " " +
                              entry.tensor.shape().ToString() + "; send the same type and shape");
      }
      try {
        NoGrad no_grad;
        Tensor destination = entry.tensor;
        destination.CopyFrom(value);
      } catch (...) {
        const grpc::Status status = CurrentExceptionStatus();
        throw RpcError(status.error_code(),
                       "cannot write into target '" + target + "': " + status.error_message());
      }
      value.Dispose();
      FillTensorInfo(target, entry, reply);
      return;
    }
    if (requires_grad) value = value.WithRequiresGrad();
    const std::string handle = session.handles().Add(value, placement, /*owns_buffer=*/true);
    FillTensorInfo(handle, session.handles().Find(handle), reply);
  } catch (...) {
    DisposeIfOwned(session, value);
    throw;
  }
}

void ExecuteRun(Session& session, const v1::RunRequest& request, int64_t max_operations,
                const grpc::CallbackServerContext& ctx, v1::RunReply* reply) {
  const int n = request.operations_size();
  if (n > max_operations) {
    throw ResourceExhausted(
        "the run has " + std::to_string(n) + " operations, more than the server's limit of " +
        std::to_string(max_operations) + " (--max-run-operations); split it into several runs");
  }
  if (request.reset_arena()) session.ResetArena();
  const HandleTable::Reservation room = session.handles().Reserve(n);
  std::optional<NoGrad> no_grad;
  if (request.no_grad()) no_grad.emplace();

  std::vector<Tensor> results;
  std::vector<bool> owns;
  std::vector<Placement> placements;
  results.reserve(static_cast<size_t>(n));
  std::vector<Tensor> inputs;
  GradientCache gradients(session.ArenaContext());
  for (int i = 0; i < n; ++i) {
    const v1::Operation& op = request.operations(i);
    try {
      CheckLive(ctx, "after " + std::to_string(i) + " of " + std::to_string(n) + " operations");
      const OpSpec* spec = &RequireOp(op.op());
      CheckSignature(*spec, op.inputs_size(), op.attributes());
      inputs.clear();
      for (int j = 0; j < op.inputs_size(); ++j) {
        const std::string where = "input " + std::to_string(j);
        inputs.push_back(ResolveInput(session, op.inputs(j), results, where.c_str()));
      }
      const Placement placement = PlacementOf(op.placement(), Placement::kArena);
      const OpContext oc =
          placement == Placement::kPool ? session.PoolContext() : session.ArenaContext();
      const Tensor y = Place(session, placement,
                             spec->run(OpCall(*spec, inputs, op.attributes(), oc, &gradients)));
      owns.push_back(OwnsBuffer(y, inputs));
      placements.push_back(placement);
      results.push_back(y);
      ChargeGraph(y, session.budget());  // the records this operation made
    } catch (...) {
      DisposeUnnamed(session, results, owns);
      const grpc::Status status = CurrentExceptionStatus();
      throw RpcError(status.error_code(), "operation " + std::to_string(i) + " (" +
                                              Printable(op.op(), 64) +
                                              "): " + status.error_message());
    }
  }
  try {
    CheckLive(ctx, "after its last operation");  // a stopped kernel left its result incomplete
  } catch (...) {
    DisposeUnnamed(session, results, owns);
    throw;
  }
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    const std::string handle = session.handles().Add(results[k], placements[k], owns[k]);
    FillTensorInfo(handle, session.handles().Find(handle), reply->add_outputs());
  }
}

void ExecuteBackward(Session& session, const v1::BackwardRequest& request,
                     v1::BackwardReply* reply) {
  const Tensor root = session.handles().Find(request.root()).tensor;
  KnownBuffers known;
  known.Add(root);
  std::optional<Tensor> grad_output;
  if (request.has_grad_output()) {
    grad_output = ResolveInput(session, request.grad_output(), {}, "grad_output");
    known.Add(*grad_output);
  }
  std::vector<Tensor> inputs;
  for (const std::string& h : request.inputs()) {
    inputs.push_back(session.handles().Find(h).tensor);
    known.Add(inputs.back());
  }
  const HandleTable::Reservation room =
      session.handles().Reserve(static_cast<int64_t>(inputs.size()));

  const Placement placement = PlacementOf(request.placement(), Placement::kArena);
  // The engine's seed and intermediate gradients go to the arena whatever the placement, so
  // a backward that fails or finishes leaves nothing behind in the pool; Place() copies the
  // gradients asked for into the pool.
  std::vector<Tensor> grads =
      Backward(root, grad_output ? &*grad_output : nullptr, inputs, session.ArenaContext(),
               {.retain_graph = request.retain_graph()});
  CheckNotStopped("after the backward pass");  // a stopped kernel left a gradient incomplete
  // All or nothing: when placing or naming one gradient fails, the handles and copies made
  // before it go too.
  std::vector<bool> owns;
  std::vector<std::string> handles;
  try {
    for (Tensor& g : grads) {
      g = Place(session, placement, g);
      owns.push_back(known.Owns(g));
      known.Add(g);
    }
    for (size_t i = 0; i < grads.size(); ++i) {
      handles.push_back(session.handles().Add(grads[i], placement, owns[i]));
    }
  } catch (...) {
    for (const std::string& h : handles) session.handles().Remove(h);
    DisposeUnnamed(session, std::span(grads).first(owns.size()), owns);
    throw;
  }
  for (const std::string& h : handles) {
    FillTensorInfo(h, session.handles().Find(h), reply->add_gradients());
  }
}

int64_t ReleaseHandles(Session& session,
                       const google::protobuf::RepeatedPtrField<std::string>& handles) {
  std::unordered_set<std::string_view> seen;
  for (const std::string& h : handles) {
    session.handles().CheckExists(h);
    if (!seen.insert(h).second) {
      throw InvalidArgument("handle '" + Printable(h, 48) +
                            "' is listed twice; nothing was released");
    }
  }
  for (const std::string& h : handles) {
    const HandleEntry entry = session.handles().Remove(h);
    // An arena tensor's memory comes back when the arena is reset.
    if (entry.owns_buffer) {
      session.ledger().ReleaseIfOwned(entry.tensor.buffer(), entry.tensor.generation());
    }
  }
  return handles.size();
}

}  // namespace onemodel::server
