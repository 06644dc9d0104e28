#include "proto/grpc_runtime.h"

#include <absl/synchronization/mutex.h>

namespace onemodel {

void QuietAbseilMutexes() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace onemodel
