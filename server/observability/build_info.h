// BuildInfo: what onemodeld was built from and runs with, for onemodel_build_info and the
// status page: the project version and git commit (both fixed when CMake configured the build;
// git is "unknown" outside a git checkout), the default kernel variant and the BLAS library.
//
//   BuildInfo b = CurrentBuildInfo();   // {"0.1.0", "0c7f5c6d1e2a", "fast-avx2", "OpenBLAS ..."}
#pragma once

#include <string>

namespace onemodel::server {

struct BuildInfo {
  std::string version;
  std::string git;
  std::string kernels;  // KernelSet::Default().name() when called
  std::string blas;     // the BLAS library and the kernel it chose
};

// The build's version and commit, and the kernels and BLAS in use now.
BuildInfo CurrentBuildInfo();

}  // namespace onemodel::server
