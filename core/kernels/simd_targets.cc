#include "core/kernels/simd_targets.h"

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace onemodel {
namespace {
int64_t HwyBit(SimdTarget target) {
  switch (target) {
    case SimdTarget::kAvx3:
      return HWY_AVX3;
    case SimdTarget::kAvx2:
      return HWY_AVX2;
    case SimdTarget::kScalar:
      break;
  }
  return HWY_BASELINE_SCALAR;
}
}  // namespace

std::string_view SimdTargetName(SimdTarget target) {
  switch (target) {
    case SimdTarget::kAvx3:
      return "avx3";
    case SimdTarget::kAvx2:
      return "avx2";
    case SimdTarget::kScalar:
      break;
  }
  return "scalar";
}

std::vector<SimdTarget> CompiledTargets() {
  std::vector<SimdTarget> out;
  for (SimdTarget t : {SimdTarget::kAvx3, SimdTarget::kAvx2, SimdTarget::kScalar}) {
    if (HWY_TARGETS & HwyBit(t)) out.push_back(t);
  }
  return out;
}

bool TargetSupported(SimdTarget target) {
  // Looked up once: Highway asks the CPU (cpuid) on every call, which a virtual machine traps
  // (a tenth of a small convolution's time when asked per call).
  static const int64_t supported = hwy::SupportedTargets();
  return target == SimdTarget::kScalar ||
         ((HWY_TARGETS & HwyBit(target)) && (supported & HwyBit(target)));
}

SimdTarget BestTarget() {
  for (SimdTarget t : CompiledTargets()) {
    if (TargetSupported(t)) return t;
  }
  return SimdTarget::kScalar;
}

}  // namespace onemodel
