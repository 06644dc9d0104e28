// FuzzCheck: how a fuzz target states a property every input must keep. A broken property
// aborts, so libFuzzer saves the input as a crash and the corpus replay test fails.
//
//   FuzzCheck(ledger.rented_buffers() == 0, "a rejected TensorProto rented memory");
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace onemodel::fuzz {

// Prints `what` and aborts unless `ok`.
inline void FuzzCheck(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz property broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace onemodel::fuzz
