// Process-wide settings of the gRPC runtime, shared by the server and the C++ client (both
// depend on the wire, not on each other).
//
//   QuietAbseilMutexes();  // before or after gRPC starts; any number of times
#pragma once

namespace onemodel {

// Turns off abseil's lock-order tracking for every absl::Mutex in the process, which is all of
// gRPC's locks. Debian builds libabsl without NDEBUG, so by default each lock and unlock
// records the locks held in a process-wide graph behind one global lock, and every mutex's
// destruction removes its node: an uncontended lock/unlock pair takes about 45 ns instead of
// 14, a mutex's life 73 ns instead of 20, for each of the dozens gRPC uses per call. The graph
// only finds lock-order inversions inside gRPC itself, which is not our code to debug.
void QuietAbseilMutexes();

}  // namespace onemodel
