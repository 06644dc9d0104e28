// The BLAS library behind the fast MatMul (OpenBLAS, docs/kernels.md): what it is and how
// many threads one call may use. The server sets the threads from its configuration.
#pragma once

#include <string>

namespace onemodel {

// The BLAS library and the kernel it chose, e.g. "OpenBLAS 0.3.21 (kernel Haswell)".
std::string BlasDescription();

// Sets how many threads one BLAS call may use (0: the library's default, one per core).
// A server running many sessions in parallel wants 1: each call then stays on its worker.
void SetBlasThreads(int threads);
// How many threads one BLAS call uses now.
int BlasThreads();

}  // namespace onemodel
