#include "server/observability/build_info.h"

#include "core/kernels/blas.h"
#include "core/kernels/kernel_set.h"

// Defined for this file only by server/CMakeLists.txt, so a new commit recompiles nothing else.
#ifndef ONEMODEL_VERSION
#error "ONEMODEL_VERSION must be defined by server/CMakeLists.txt"
#endif
#ifndef ONEMODEL_GIT
#error "ONEMODEL_GIT must be defined by server/CMakeLists.txt"
#endif

namespace onemodel::server {

BuildInfo CurrentBuildInfo() {
  return {ONEMODEL_VERSION, ONEMODEL_GIT, std::string(KernelSet::Default().name()),
          BlasDescription()};
}

}  // namespace onemodel::server
