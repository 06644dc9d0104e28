// Counts global operator new calls in this test binary (see alloc_counter.cc), so a test can
// prove that a region of code allocates nothing on the C++ heap.
#pragma once

#include <cstdint>

namespace onemodel::testing {

// Number of global operator new calls so far (all threads).
int64_t HeapAllocations();

}  // namespace onemodel::testing
