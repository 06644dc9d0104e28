#include "core/memory/memory_budget.h"

#include <cstdio>

#include "core/common/exceptions.h"

namespace onemodel {

void MemoryBudget::Charge(int64_t bytes) {
  try {
    ChargeWithoutReclaim(bytes);
  } catch (const MemoryLimitException&) {
    if (!reclaim_ || !reclaim_()) throw;
    ChargeWithoutReclaim(bytes);
  }
}

void MemoryBudget::ChargeWithoutReclaim(int64_t bytes) {
  int64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - used) {
      throw MemoryLimitException(
          name_ + " of " + FormatBytes(limit_) + " reached: " + FormatBytes(used) + " in use, " +
          FormatBytes(bytes) + " more requested; release tensors or reset the arena first");
    }
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  if (parent_) {
    try {
      parent_->Charge(bytes);
    } catch (...) {
      used_.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
  }
}

void MemoryBudget::Refund(int64_t bytes) {
  used_.fetch_sub(bytes, std::memory_order_relaxed);
  if (parent_) parent_->Refund(bytes);
}

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0 || value == static_cast<double>(static_cast<int64_t>(value))) {
    std::snprintf(text, sizeof text, "%lld %s", static_cast<long long>(value), kUnits[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  }
  return text;
}

}  // namespace onemodel
