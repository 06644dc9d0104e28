// Normalization kernels (NormForwardArgs, NormBackwardArgs): groups [begin, end) at a time.
// Every sum is in double over 8 lanes (lane j takes a block's elements i with i % 8 == j,
// blocks in order, then the lanes added pairwise in a fixed tree), so a group's bits do not
// depend on which thread runs it or how the groups are split: the reference runs them all on
// one thread, the fast kernels split them over the pool.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/kernels/kernels.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::internal {

// Forward of groups [begin, end); stops early once the thread's CancelToken is cancelled.
// `stream`: y and xhat are written with streaming stores where the CPU has AVX-512 (the same
// bits; fenced before return), for outputs too large to stay in cache (streaming_stores.h).
void NormalizeGroups(const NormForwardArgs& a, int64_t begin, int64_t end, bool stream);
// Backward of groups [begin, end), as NormalizeGroups.
void NormalizeBackwardGroups(const NormBackwardArgs& a, int64_t begin, int64_t end);

// The instruction sets the two above are compiled for; they run the widest this CPU has. Each
// gives the same bits (the tests run every one the CPU supports through the *On forms).
enum class NormIsa { kBase, kAvx2, kAvx512 };
bool NormIsaSupported(NormIsa isa);
// The widest set this CPU runs (looked up once).
NormIsa BestNormIsa();
void NormalizeGroupsOn(NormIsa isa, const NormForwardArgs& a, int64_t begin, int64_t end,
                       bool stream);
void NormalizeBackwardGroupsOn(NormIsa isa, const NormBackwardArgs& a, int64_t begin,
                               int64_t end);

// While a streamed row k is written, row k + kNormRowsAhead is asked for, so that its reads
// from memory overlap row k's work (the hardware prefetcher stops at each page). One thread
// from memory, [8192, 1024], the double path, load 8-10: 2 ahead 478-541 ns a row, 3 ahead
// 430-462, 4 ahead 418-501; the float path, both threads: 2, 3 and 4 ahead alike, 1.0-1.1 ms
// against 1.4-2.0 ms without (docs/kernels.md).
inline constexpr int64_t kNormRowsAhead = 3;

// Runs fn(begin, end) over [0, groups) on `pool` in chunks of at least about `grain` elements
// of work (the whole range on the caller when that is one chunk).
template <typename Fn>
void SplitGroups(ThreadPool& pool, const NormGroups& l, const Fn& fn) {
  constexpr int64_t kGrain = int64_t{1} << 15;
  const int64_t per_group = l.blocks * l.block + 1;
  const int64_t tasks =
      std::min<int64_t>({l.groups, int64_t{pool.threads()} * 4, l.groups * per_group / kGrain});
  if (tasks <= 1) return fn(0, l.groups);
  pool.ParallelFor(tasks, [&](int64_t t) { fn(l.groups * t / tasks, l.groups * (t + 1) / tasks); });
}

}  // namespace onemodel::internal
