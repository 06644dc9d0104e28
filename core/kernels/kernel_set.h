// KernelSet: picks the kernels once, at startup or per session (spec 9).
//
// Fast means the best SIMD target this CPU supports (FastKernels); Exact means
// ReferenceKernels. SetDefault chooses what Default() returns for code that does not ask;
// sessions ask with Get(choice). Every variant compiled in can be listed and forced by name
// (tests run each).
//
//   KernelSet::SetDefault(KernelChoice::kFast);
//   const TensorKernels& k = KernelSet::Default();   // k.name() == "fast-avx3"
#pragma once

#include <string_view>
#include <vector>

#include "core/kernels/kernels.h"

namespace onemodel {

enum class KernelChoice { kFast, kExact };

class KernelSet {
 public:
  // The kernels for `choice` on this machine (shared, immutable, thread-safe).
  static const TensorKernels& Get(KernelChoice choice);
  // What Default() returns from now on (fast unless changed).
  static void SetDefault(KernelChoice choice);
  static const TensorKernels& Default();
  // Every variant this build can run on this CPU: "reference" and each supported "fast-*".
  static std::vector<const TensorKernels*> Available();
  // The variant named `name`, or nullptr.
  static const TensorKernels* Find(std::string_view name);
};

}  // namespace onemodel
