#include "core/kernels/kernel_set.h"

#include <atomic>
#include <memory>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/reference_kernels.h"

namespace onemodel {
namespace {

struct Registry {
  ReferenceKernels reference;
  std::vector<std::unique_ptr<FastKernels>> fast;  // best first
  Registry() {
    for (SimdTarget t : CompiledTargets()) {
      if (TargetSupported(t)) fast.push_back(std::make_unique<FastKernels>(t));
    }
  }
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

std::atomic<KernelChoice> g_default{KernelChoice::kFast};

}  // namespace

const TensorKernels& KernelSet::Get(KernelChoice choice) {
  Registry& r = TheRegistry();
  if (choice == KernelChoice::kExact) return r.reference;
  return *r.fast.front();  // the scalar target is always supported
}

void KernelSet::SetDefault(KernelChoice choice) { g_default.store(choice); }

const TensorKernels& KernelSet::Default() { return Get(g_default.load()); }

std::vector<const TensorKernels*> KernelSet::Available() {
  Registry& r = TheRegistry();
  std::vector<const TensorKernels*> out{&r.reference};
  for (const auto& f : r.fast) out.push_back(f.get());
  return out;
}

const TensorKernels* KernelSet::Find(std::string_view name) {
  for (const TensorKernels* k : Available()) {
    if (k->name() == name) return k;
  }
  return nullptr;
}

}  // namespace onemodel
