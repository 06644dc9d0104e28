// The SIMD targets the fast kernels are compiled for, and which one this CPU runs.
//
// core/CMakeLists.txt disables Highway's SSSE3 and SSE4 targets, so every kernel exists in
// three variants: AVX-512 ("avx3"), AVX2 + FMA ("avx2") and a portable fallback ("scalar":
// Highway's EMU128, or its SCALAR target where the compiler cannot build EMU128, as GCC 12
// here). Tests force each one; KernelSet picks the best the CPU supports.
#pragma once

#include <string_view>
#include <vector>

namespace onemodel {

enum class SimdTarget { kScalar, kAvx2, kAvx3 };

// "scalar", "avx2", "avx3".
std::string_view SimdTargetName(SimdTarget target);
// Every target compiled into this build, best first.
std::vector<SimdTarget> CompiledTargets();
// True when this CPU can run `target`.
bool TargetSupported(SimdTarget target);
// The best compiled target this CPU supports.
SimdTarget BestTarget();

}  // namespace onemodel
