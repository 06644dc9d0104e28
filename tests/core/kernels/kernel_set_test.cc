#include "core/kernels/kernel_set.h"

#include <gtest/gtest.h>

#include "core/kernels/fast_kernels.h"

namespace onemodel {
namespace {

TEST(KernelSetTest, FastIsTheDefaultAndNamesTheBestTarget) {
  EXPECT_EQ(KernelSet::Default().name(), "fast-" + std::string(SimdTargetName(BestTarget())));
  EXPECT_EQ(&KernelSet::Default(), &KernelSet::Get(KernelChoice::kFast));
}

TEST(KernelSetTest, SetDefaultSwitchesToExactAndBack) {
  KernelSet::SetDefault(KernelChoice::kExact);
  EXPECT_EQ(KernelSet::Default().name(), "reference");
  KernelSet::SetDefault(KernelChoice::kFast);
  EXPECT_NE(KernelSet::Default().name(), "reference");
}

TEST(KernelSetTest, AvailableListsReferenceAndEverySupportedTarget) {
  const auto all = KernelSet::Available();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front()->name(), "reference");
  EXPECT_NE(KernelSet::Find("fast-scalar"), nullptr) << "the fallback always runs";
  for (SimdTarget t : CompiledTargets()) {
    const std::string name = "fast-" + std::string(SimdTargetName(t));
    EXPECT_EQ(KernelSet::Find(name) != nullptr, TargetSupported(t)) << name;
  }
  EXPECT_EQ(KernelSet::Find("fast-nonexistent"), nullptr);
}

TEST(KernelSetTest, TheBuildHasAvx512Avx2AndScalarVariants) {
  const auto compiled = CompiledTargets();
  EXPECT_NE(std::find(compiled.begin(), compiled.end(), SimdTarget::kAvx3), compiled.end());
  EXPECT_NE(std::find(compiled.begin(), compiled.end(), SimdTarget::kAvx2), compiled.end());
  EXPECT_NE(std::find(compiled.begin(), compiled.end(), SimdTarget::kScalar), compiled.end());
}

TEST(KernelSetTest, OpNamesAreReadable) {
  EXPECT_EQ(BinaryOpName(BinaryOp::kPow), "Pow");
  EXPECT_EQ(UnaryOpName(UnaryOp::kGelu), "Gelu");
}

}  // namespace
}  // namespace onemodel
