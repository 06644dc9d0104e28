// The "ours" side of bench/compare: times onemodel's kernels, pools and autograd in this
// process, one named case per request, for the driver (compare.py) that alternates it with the
// PyTorch and ONNX Runtime runners round by round.
//
// Protocol (one line in, one JSON line out), the same for all three runners:
//   info                  -> {"info": {...}}                   what this side runs on
//   CASE MIN_SECONDS      -> {"case": CASE, "seconds": S, "work": W, "calls": N}
// S is the wall time of one call, averaged over N calls timed together; N is fixed on the
// case's first request (after one untimed warm-up call) so that N calls take MIN_SECONDS.
//
//   build/release/bench/compare/compare_runner    # then e.g. "add_16m 0.05"
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "bench/compare/cases.h"
#include "bench/machine_peaks.h"
#include "bench/report.h"
#include "core/kernels/blas.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::bench {
namespace {

// A case set up, with its calls per sample.
struct Ready {
  Case c;
  int calls = 1;
};

// The file name of the library whose malloc this process calls ("libc.so.6" for glibc's).
std::string MallocLibrary() {
  Dl_info where{};
  void* (*const resolved)(size_t) = &std::malloc;
  if (!dladdr(reinterpret_cast<void*>(resolved), &where) || !where.dli_fname) return "unknown";
  const std::string path = where.dli_fname;
  return path.substr(path.find_last_of('/') + 1);
}

// Prints what this side runs: kernels, threads, BLAS and its core type, the malloc.
void PrintInfo() {
  const FastKernels fast(BestTarget());
  const Json info = {{"fast_kernels", fast.name()},
                     {"threads", ThreadPool::Shared().threads()},
                     {"blas", BlasDescription()},
                     {"blas_threads", openblas_get_num_threads()},
                     {"malloc", MallocLibrary()}};
  std::printf("%s\n", JsonText({{"info", info}}).c_str());
}

// Answers requests from stdin until it closes; returns the exit status.
int Serve() {
  CaseRegistry registry;
  AddKernelCases(registry);
  AddMemoryCases(registry);
  AddMlpCase(registry);
  AddOptimCases(registry);
  AddIndexingCases(registry);
  AddConvCases(registry);
  std::map<std::string, Ready> ready;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string name;
    double min_seconds = 0.05;
    in >> name >> min_seconds;
    if (name == "info") {
      PrintInfo();
    } else if (!registry.contains(name)) {
      std::printf("%s\n", JsonText({{"error", "unknown case " + name}}).c_str());
    } else {
      auto it = ready.find(name);
      if (it == ready.end()) {
        Ready r{registry.at(name)(), 1};
        r.c.run();  // warm-up: pages touched, threads started
        const double s = SecondsOf(r.c.run);
        r.calls = std::max(1, static_cast<int>(std::ceil(min_seconds / std::max(s, 1e-9))));
        it = ready.emplace(name, std::move(r)).first;
      }
      const Ready& r = it->second;
      const double s = SecondsOf([&] {
        for (int i = 0; i < r.calls; ++i) r.c.run();
      });
      const Json reply = {
          {"case", name}, {"seconds", s / r.calls}, {"work", r.c.work}, {"calls", r.calls}};
      std::printf("%s\n", JsonText(reply).c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace onemodel::bench

int main() { return onemodel::bench::Serve(); }
