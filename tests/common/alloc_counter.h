// Counts global operator new calls in a test binary that links alloc_counter.cc, so a test can
// prove that a region of code allocates nothing on the C++ heap (or only small messages).
//
//   AllocationCounter counter;
//   RunHotPath();
//   EXPECT_EQ(counter.count(), 0);
#pragma once

#include <cstddef>
#include <cstdint>

namespace onemodel::testing {

// Number of global operator new calls so far (all threads).
int64_t HeapAllocations();
// The largest request since the last ResetLargestAllocation().
size_t LargestAllocation();
void ResetLargestAllocation();

// Allocations (count and largest request) from construction to Stop() (or to now).
class AllocationCounter {
 public:
  AllocationCounter() : start_(HeapAllocations()) { ResetLargestAllocation(); }
  // Freezes the figures, so the checks that follow are not counted.
  void Stop() {
    count_ = count();
    largest_ = largest();
    stopped_ = true;
  }
  int64_t count() const { return stopped_ ? count_ : HeapAllocations() - start_; }
  size_t largest() const { return stopped_ ? largest_ : LargestAllocation(); }

 private:
  int64_t start_;
  bool stopped_ = false;
  int64_t count_ = 0;
  size_t largest_ = 0;
};

}  // namespace onemodel::testing
