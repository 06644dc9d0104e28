#include "core/memory/buffer.h"

#include <algorithm>
#include <cstring>

namespace onemodel::internal {

void PoisonAndGuard(Buffer& buffer) {
  std::memset(buffer.data(), std::to_integer<int>(kPoisonByte),
              static_cast<size_t>(buffer.length()));
  std::memset(buffer.data() + buffer.length(), std::to_integer<int>(kCanaryByte),
              static_cast<size_t>(kCanaryBytes));
}

bool CanaryIntact(const Buffer& buffer) {
  const std::byte* canary = buffer.data() + buffer.length();
  return std::all_of(canary, canary + kCanaryBytes, [](std::byte b) { return b == kCanaryByte; });
}

}  // namespace onemodel::internal
