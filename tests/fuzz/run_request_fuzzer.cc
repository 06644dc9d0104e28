// libFuzzer target for Run requests (issue 7): bytes -> onemodel.v1.RunRequest -> ExecuteRun,
// the validation and execution the Run RPC does, with the server's default limits (operations
// per run, handles) on a fresh Session per input with a 2 MiB memory limit.
//
// Each session starts with ten known tensors. Their real handles carry a random tag, so an
// input names them as "$0".."$9" (see Preload); any other handle is passed on as it is. The
// session_id "exact" picks the reference kernels, anything else the fast ones.
//
// Properties: a failed run maps to a status other than INTERNAL or UNKNOWN, adds no handle and
// leaves the session's pool memory as it was; a run that succeeds has one output per operation,
// and releasing those outputs gives back all the pool memory they hold without touching the
// known tensors; closing the session returns every byte to the pool.
//
//   scripts/fuzz                        runs build/fuzz/tests/fuzz/run_request_fuzzer
//   ctest -R fuzz_run_request_replay    replays tests/fuzz/corpus/run_request
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/server_context.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/kernel_set.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_ledger.h"
#include "core/memory/buffer_pool.h"
#include "core/memory/memory_budget.h"
#include "core/ops/conversion.h"
#include "core/tensor/grad_mode.h"
#include "onemodel/v1/onemodel.pb.h"
#include "server/config.h"
#include "server/rpc/session_ops.h"
#include "server/rpc/status_mapping.h"
#include "server/sessions/session.h"
#include "server/sessions/strand.h"
#include "tests/fuzz/fuzz_check.h"

namespace onemodel::fuzz {
namespace {

using server::Placement;
using server::Session;

// The server bounds a run's memory but not its work: one operation on a broadcast view (Expand
// to 2^31 elements, then Sum) takes minutes under the sanitizers. So that a 60-second run meets
// real bugs instead of that known open issue, the memory limit is small and inputs that expand
// to more elements than it holds are skipped.
constexpr int64_t kSessionMemoryBytes = int64_t{2} << 20;
constexpr int64_t kArenaChunkBytes = int64_t{64} << 10;
constexpr double kMaxExpandElements = kSessionMemoryBytes / 4;
// The known tensors that live in the pool (the others are in the arena or invalid).
constexpr int kPoolHandles[] = {0, 1, 2, 5, 6};

// What every input shares, as in one server: its limits, pool, workers and memory ceiling.
struct Server {
  // Silences protobuf's log: string fields with invalid UTF-8 are expected parse failures here.
  Server() { google::protobuf::SetLogHandler(nullptr); }

  server::ServerConfig config;
  BufferPool pool;
  server::WorkerPool workers{1};
  MemoryBudget budget{"server memory ceiling", server::EffectiveMemoryLimit(config)};
  grpc::CallbackServerContext ctx;  // never cancelled, no deadline
};

// A new FLOAT tensor of `shape` in `allocator` holding -1, -0.5, 0, 0.5, ...
Tensor Ramp(const Shape& shape, Allocator& allocator) {
  Tensor t = Tensor::Empty(shape, DType::kFloat, allocator);
  float v = -1.0f;
  for (float& x : t.MutableData<float>()) {
    x = v;
    v += 0.5f;
  }
  return t;
}

// Gives `session` the known tensors and returns their handles, "$0" to "$9" in that order.
std::vector<std::string> Preload(Session& session) {
  NoGrad no_grad;
  server::HandleTable& table = session.handles();
  Arena& arena = session.arena();
  BufferLedger& pool = session.ledger();
  const std::string stale = table.Add(Ramp({2}, arena), Placement::kArena, true);
  session.ResetArena();
  const std::string released = table.Add(Ramp({2}, pool), Placement::kPool, true);
  table.Remove(released).tensor.Dispose();
  const Tensor x = Ramp({2, 3}, pool).WithRequiresGrad();
  const Tensor image = Ramp({1, 2, 4, 4}, arena).WithRequiresGrad();
  const Tensor ints = ops::Cast(Ramp({4}, arena), DType::kInt64, session.ArenaContext());
  const Tensor half = ops::Cast(Ramp({2, 2}, arena), DType::kFloat16, session.PoolContext());
  return {
      table.Add(x, Placement::kPool, true),                   // $0 FLOAT [2, 3], requires grad
      table.Add(Ramp({3, 2}, pool), Placement::kPool, true),  // $1 FLOAT [3, 2]
      table.Add(x.Transpose(0, 1), Placement::kPool, false),  // $2 [3, 2] view of $0
      table.Add(image, Placement::kArena, true),          // $3 FLOAT [1, 2, 4, 4], requires grad
      table.Add(ints, Placement::kArena, true),           // $4 INT64 [4]
      table.Add(half, Placement::kPool, true),            // $5 FLOAT16 [2, 2]
      table.Add(Ramp({}, pool), Placement::kPool, true),  // $6 FLOAT scalar
      table.Add(Ramp({0, 3}, arena), Placement::kArena, true),  // $7 FLOAT [0, 3]
      stale,     // $8 arena handle from before a reset
      released,  // $9 released pool handle
  };
}

// Replaces each handle "$k" of `request` with the k-th of `known` (k modulo their number).
void BindHandles(const std::vector<std::string>& known, v1::RunRequest* request) {
  for (v1::Operation& op : *request->mutable_operations()) {
    for (v1::Input& input : *op.mutable_inputs()) {
      const std::string& h = input.handle();
      if (input.source_case() != v1::Input::kHandle || h.empty() || h[0] != '$') continue;
      const unsigned k = h.size() > 1 ? static_cast<unsigned char>(h[1]) - '0' : 0;
      input.set_handle(known[k % known.size()]);
    }
  }
}

// False when an Expand of `request` asks for more than kMaxExpandElements elements.
bool WorkIsBounded(const v1::RunRequest& request) {
  for (const v1::Operation& op : request.operations()) {
    auto shape = op.attributes().find("shape");
    if (op.op() != "Expand" || shape == op.attributes().end()) continue;
    double elements = 1;
    for (int64_t e : shape->second.ints().values()) elements *= std::fabs(static_cast<double>(e));
    if (elements > kMaxExpandElements) return false;
  }
  return true;
}

// Checks what must hold after a successful run, then releases its outputs.
void CheckSucceeded(Session& session, const v1::RunRequest& request, const v1::RunReply& reply,
                    const std::vector<std::string>& known, int64_t pool_bytes) {
  FuzzCheck(reply.outputs_size() == request.operations_size(),
            "a run did not give one output per operation");
  google::protobuf::RepeatedPtrField<std::string> outputs;
  for (const v1::TensorInfo& info : reply.outputs()) *outputs.Add() = info.handle();
  server::ReleaseHandles(session, outputs);
  FuzzCheck(session.ledger().rented_bytes() == pool_bytes,
            "releasing a run's outputs did not return their pool memory");
  for (int k : kPoolHandles) {
    FuzzCheck(!session.handles().Find(known[k]).tensor.IsStale(),
              "releasing a run's outputs released a known tensor");
  }
}

// Runs one input on a fresh session; returns -1 (not kept in the corpus) when it is not a
// RunRequest or asks for unbounded work.
int RunOne(const uint8_t* data, size_t size) {
  static Server server;
  v1::RunRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size)) || !WorkIsBounded(request)) return -1;
  server::SessionOptions options;
  options.kernels =
      &KernelSet::Get(request.session_id() == "exact" ? KernelChoice::kExact : KernelChoice::kFast);
  options.memory_limit_bytes = kSessionMemoryBytes;
  options.arena_chunk_bytes = kArenaChunkBytes;
  options.max_handles = server.config.max_handles_per_session;
  Session session(options, server.pool, &server.budget, server.workers);
  const std::vector<std::string> known = Preload(session);
  BindHandles(known, &request);

  const int64_t handles = session.handles().size();
  const int64_t pool_bytes = session.ledger().rented_bytes();
  v1::RunReply reply;
  bool ran = false;
  try {
    server::ExecuteRun(session, request, server.config.max_run_operations, server.ctx, &reply);
    ran = true;
  } catch (...) {
    const grpc::Status status = server::CurrentExceptionStatus();
    FuzzCheck(status.error_code() != grpc::StatusCode::INTERNAL &&
                  status.error_code() != grpc::StatusCode::UNKNOWN,
              status.error_message());
    FuzzCheck(session.handles().size() <= handles, "a failed run added handles");
    FuzzCheck(session.ledger().rented_bytes() == pool_bytes, "a failed run kept pool memory");
  }
  if (ran) CheckSucceeded(session, request, reply, known, pool_bytes);
  session.Close();
  FuzzCheck(session.budget().used() == 0, "a closed session still holds memory");
  return 0;
}

}  // namespace
}  // namespace onemodel::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return onemodel::fuzz::RunOne(data, size);
}
