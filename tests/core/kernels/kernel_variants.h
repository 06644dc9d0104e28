// The table the kernel tests run over: every variant KernelSet::Available() lists on this CPU
// (the reference and each supported fast-* SIMD target), as gtest parameters with readable
// names. A CPU with fewer targets runs fewer rows; nothing is skipped by hand.
//
//   class PoolTest : public ::testing::TestWithParam<kernel_test::Variant> {};
//   TEST_P(PoolTest, Works) { GetParam().kernels->MaxPool2d(...); }
//   INSTANTIATE_TEST_SUITE_P(Fast, PoolTest, ::testing::ValuesIn(kernel_test::FastVariants()),
//                            kernel_test::ParamName);
//   // runs Fast/PoolTest.Works/fast_avx3, .../fast_avx2, .../fast_scalar
//
//   using Row = std::tuple<kernel_test::Variant, BinaryOp>;  // Combine: .../fast_avx2_Add
//   INSTANTIATE_TEST_SUITE_P(Fast, AddTest, ::testing::Combine(
//       ::testing::ValuesIn(kernel_test::FastVariants()), ::testing::ValuesIn(kAllBinaryOps)),
//       kernel_test::ParamName);
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/kernel_set.h"
#include "core/kernels/reference_kernels.h"

namespace onemodel::kernel_test {

// One row of the table.
struct Variant {
  const TensorKernels* kernels;      // KernelSet's instance (fast ones on ThreadPool::Shared())
  std::optional<SimdTarget> target;  // the SIMD target of a fast variant; none for the reference

  std::string_view name() const { return kernels->name(); }
  // The same variant splitting its work over `pool` (the reference has no threads).
  std::unique_ptr<TensorKernels> On(ThreadPool& pool) const {
    if (!target) return std::make_unique<ReferenceKernels>();
    return std::make_unique<FastKernels>(*target, pool);
  }
};

// Every variant this CPU runs, the reference first (KernelSet::Available()).
inline std::vector<Variant> AllVariants() {
  std::vector<Variant> out;
  for (const TensorKernels* k : KernelSet::Available()) {
    const auto* fast = dynamic_cast<const FastKernels*>(k);
    out.push_back({k, fast ? std::optional(fast->target()) : std::nullopt});
  }
  return out;
}

// The fast variants only: the ones compared against the reference.
inline std::vector<Variant> FastVariants() {
  std::vector<Variant> out;
  for (const Variant& v : AllVariants()) {
    if (v.target) out.push_back(v);
  }
  return out;
}

// The SIMD targets of the fast variants (for the tables below the kernels, e.g. conversions).
inline std::vector<SimdTarget> SupportedTargets() {
  std::vector<SimdTarget> out;
  for (const Variant& v : FastVariants()) out.push_back(*v.target);
  return out;
}

// gtest prints parameters with PrintTo: names instead of bytes.
inline void PrintTo(const Variant& v, std::ostream* os) { *os << v.name(); }

// A test-name-safe piece for each kind of parameter: "fast_avx2", "avx2", "Add".
inline std::string NamePiece(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}
inline std::string NamePiece(const Variant& v) { return NamePiece(std::string(v.name())); }
inline std::string NamePiece(SimdTarget t) { return std::string(SimdTargetName(t)); }
inline std::string NamePiece(BinaryOp op) { return std::string(BinaryOpName(op)); }
inline std::string NamePiece(UnaryOp op) { return std::string(UnaryOpName(op)); }

// gtest's name generator for INSTANTIATE_TEST_SUITE_P: the piece of a parameter, or the
// pieces of a Combine tuple joined by '_'.
struct ParamNameGenerator {
  template <typename T>
  std::string operator()(const ::testing::TestParamInfo<T>& info) const {
    return NamePiece(info.param);
  }
  template <typename... Ts>
  std::string operator()(const ::testing::TestParamInfo<std::tuple<Ts...>>& info) const {
    std::string out;
    std::apply([&](const auto&... p) { ((out += (out.empty() ? "" : "_") + NamePiece(p)), ...); },
               info.param);
    return out;
  }
};
inline constexpr ParamNameGenerator ParamName{};

}  // namespace onemodel::kernel_test

namespace onemodel {  // found by argument-dependent lookup, next to the enums
inline void PrintTo(SimdTarget t, std::ostream* os) { *os << SimdTargetName(t); }
inline void PrintTo(BinaryOp op, std::ostream* os) { *os << BinaryOpName(op); }
inline void PrintTo(UnaryOp op, std::ostream* os) { *os << UnaryOpName(op); }
}  // namespace onemodel
