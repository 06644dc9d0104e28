#include "core/kernels/streaming_stores.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace onemodel {
namespace {

constexpr int64_t kFallbackCacheBytes = int64_t{32} << 20;
// sysconf's figure comes from CPUID, which a hypervisor fills with the host's (or an invented)
// last-level cache: 320 MiB and 508 MiB on two 2-core VMs here whose sysfs lists no caches or
// 32 MiB. It is trusted up to this much (a threshold of 16 MiB: on the 508 MiB VM streaming
// lost up to 8 MiB of output and won from 16 MiB; docs/kernels.md).
constexpr int64_t kMaxUnlistedCacheBytes = int64_t{64} << 20;

// The first line of `path`, or "" if it cannot be read.
std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32768K" -> 33554432; 0 for anything else.
int64_t ParseSize(const std::string& text) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string unit = text.substr(used);
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  return unit.empty() ? value : 0;
}

// The size of the highest cache level sysfs lists for cpu0, or 0.
int64_t SysfsLastLevelBytes() {
  int best_level = 0;
  int64_t best_bytes = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = FirstLine(dir + "/level");
    if (level.empty()) break;
    const int64_t bytes = ParseSize(FirstLine(dir + "/size"));
    const int l = static_cast<int>(ParseSize(level));
    if (bytes > 0 && l >= best_level) {
      best_level = l;
      best_bytes = bytes;
    }
  }
  return best_bytes;
}

}  // namespace

int64_t LastLevelCacheBytesFrom(int64_t listed, int64_t reported) {
  if (listed > 0) return listed;
  if (reported > 0) return std::min(reported, kMaxUnlistedCacheBytes);
  return kFallbackCacheBytes;
}

int64_t LastLevelCacheBytes() {
  static const int64_t bytes =
      LastLevelCacheBytesFrom(SysfsLastLevelBytes(), sysconf(_SC_LEVEL3_CACHE_SIZE));
  return bytes;
}

int64_t DefaultStreamingMinBytes() { return LastLevelCacheBytes() / 4; }

}  // namespace onemodel
