// Cancellation of long computations: a call's CancelToken, made current on the thread that
// works for the call, lets kernels stop between blocks once the call is cancelled (client
// gone, deadline passed, server draining). A kernel that stops early leaves its output
// incomplete; whoever made the token current checks it after the work and discards results.
//
//   CancelToken token;                      // owned by the call
//   { CancelScope scope(&token); RunOps(); }  // kernels poll Cancelled(CurrentCancelToken())
//   token.Cancel(kSomeCause);               // from any thread
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace onemodel {

class CancelToken {
 public:
  // Asks the work to stop; the first cause (non-zero, the caller's meaning) is kept.
  void Cancel(int cause) {
    int none = 0;
    cause_.compare_exchange_strong(none, cause, std::memory_order_relaxed);
  }
  bool cancelled() const { return cause_.load(std::memory_order_relaxed) != 0; }
  // The cause given to the first Cancel(), 0 while not cancelled.
  int cause() const { return cause_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> cause_{0};
};

// The token of the call this thread works for, or null.
const CancelToken* CurrentCancelToken();

// True when `token` (a kernel's copy of CurrentCancelToken()) asks the work to stop. Cheap:
// one relaxed load, no allocation.
inline bool Cancelled(const CancelToken* token) { return token && token->cancelled(); }

// Elements of work between two looks at the token in loops that may be long: about a
// millisecond of the slowest per-element work (an exp in double).
inline constexpr int64_t kCancelCheckElements = int64_t{1} << 20;

// The most work (element steps) a kernel's fast loop may do between two looks at the token:
// about 0.1 s of scalar work. Beyond it, a kernel takes a loop that looks more often.
inline constexpr int64_t kMaxUncheckedWork = int64_t{1} << 26;

// The token a loop over one window of `window` elements (pooling) looks at as it goes: `token`
// when the window holds kCancelCheckElements or more (a stride-0 view makes such windows out
// of no memory), else null, so that short windows look at nothing.
inline const CancelToken* LongWindowToken(const CancelToken* token, int64_t window) {
  return window >= kCancelCheckElements ? token : nullptr;
}

// Calls fn(begin, end) over [0, n) in chunks of kCancelCheckElements, looking at `token`
// before each: a loop of any length (one row of 2^31 classes) stops within a chunk of its
// cancellation, its work incomplete.
template <typename Fn>
void ForEachChunk(const CancelToken* token, int64_t n, const Fn& fn) {
  for (int64_t at = 0; at < n; at += kCancelCheckElements) {
    if (Cancelled(token)) return;
    fn(at, std::min(n, at + kCancelCheckElements));
  }
}

// Makes `token` current on this thread while it lives, then restores the previous one.
class CancelScope {
 public:
  explicit CancelScope(const CancelToken* token);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const CancelToken* previous_;
};

}  // namespace onemodel
