#include "core/kernels/blas.h"

#include <cblas.h>

namespace onemodel {

std::string BlasDescription() {
  // openblas_get_config() starts with the library's name and version ("OpenBLAS 0.3.21 ...").
  return std::string(openblas_get_config()) + " (kernel " + openblas_get_corename() + ")";
}

void SetBlasThreads(int threads) {
  static const int kDefault = openblas_get_num_threads();
  openblas_set_num_threads(threads > 0 ? threads : kDefault);
}

int BlasThreads() { return openblas_get_num_threads(); }

}  // namespace onemodel
