// Step: the unit of work a load session repeats. Each kind uploads its tensors once, into the
// session's pool, and then runs the same requests every step (its Runs reset the arena).
//
//   mlp (--batch B --width W): x [B, W], w1 [W, W], b1 [W], w2 [W, W] uploaded once; each step
//     Run(reset_arena): MatMul(x, w1), Add(., b1), Relu, MatMul(., w2), LogSoftmax, Mean
//     Backward(mean, {w1, b1, w2})                       -> 2 requests
//   chain (--size N --chain-length K): x [N] uploaded once; each step
//     Run(reset_arena, no_grad): K operations cycling Add(y, x), Mul(y, x), Tanh(y)
//                                                        -> 1 request
//   transfer (--transfer-bytes N): a float32 tensor of N bytes uploaded once; each step
//     Put of the same values into it (PutOptions::target: no new memory), Get of it
//                                                        -> 2 requests
//
//   std::unique_ptr<Step> step = MakeStep(options, session, /*seed=*/7);
//   RequestLog log;
//   step->Run(log);   // throws client::Error at the first failed request
#pragma once

#include <cstdint>
#include <memory>

#include "client/lib/session.h"
#include "client/load/load_options.h"
#include "client/load/request_log.h"

namespace onemodel::load {

class Step {
 public:
  virtual ~Step() = default;
  // Runs one step, logging each request in `log`; throws client::Error at the first failure
  // (the rest of the step is skipped).
  virtual void Run(RequestLog& log) = 0;
};

// The step `options` describe, bound to `session` (which must outlive it), with its tensors
// uploaded from values drawn with `seed`; throws client::Error when an upload fails.
std::unique_ptr<Step> MakeStep(const LoadOptions& options, client::Session& session, uint32_t seed);

}  // namespace onemodel::load
