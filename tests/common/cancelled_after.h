// Runs work under a CancelToken that another thread cancels after a delay, and says how long
// the work took: a long loop that looks at the token stops soon after the delay.
//
//   EXPECT_LT(CancelledAfter(std::chrono::milliseconds(200), [&] { LongOp(); }), 2s);
#pragma once

#include <chrono>
#include <thread>

#include "core/common/cancellation.h"

namespace onemodel::test {

template <typename Work>
std::chrono::steady_clock::duration CancelledAfter(std::chrono::milliseconds delay,
                                                   const Work& work) {
  CancelToken token;
  const std::jthread canceller([&] {  // joined however work() ends
    std::this_thread::sleep_for(delay);
    token.Cancel(1);
  });
  const auto start = std::chrono::steady_clock::now();
  const CancelScope scope(&token);
  work();
  return std::chrono::steady_clock::now() - start;
}

}  // namespace onemodel::test
