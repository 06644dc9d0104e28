// FormatTensor prints tensors as NumPy does: brackets, aligned points, summaries.
#include "client/cli/tensor_print.h"

#include <gtest/gtest.h>

namespace onemodel::cli {
namespace {

using client::TensorData;

TEST(TensorPrintTest, FloatsAlignTheirPointsLikeNumpy) {
  EXPECT_EQ(FormatTensor(TensorData::From<float>(std::vector<float>{0.5f, -12, 3}, {3})),
            "[  0.5 -12.    3. ]");
  EXPECT_EQ(FormatTensor(TensorData::From<double>(std::vector<double>{1e20, 2}, {2})),
            "[1e+20    2.]");
  EXPECT_EQ(FormatTensor(TensorData::From<float>(std::vector<float>{7}, {})), "7.");
}

TEST(TensorPrintTest, HigherDimensionsAreSeparatedByBlankLines) {
  std::vector<int32_t> v(8);
  for (int i = 0; i < 8; ++i) v[i] = i;
  EXPECT_EQ(FormatTensor(TensorData::From<int32_t>(v, {2, 2, 2})),
            "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

TEST(TensorPrintTest, HalfBoolAndEmpty) {
  // 1.0, -2.5 and +inf as IEEE half bits; bfloat16 1.0.
  TensorData half = TensorData::From<uint16_t>(std::vector<uint16_t>{0x3C00, 0xC100, 0x7C00}, {3});
  half.data_type = onnx::TensorProto::FLOAT16;
  EXPECT_EQ(FormatTensor(half), "[ 1.  -2.5  inf]");
  TensorData bf = TensorData::From<uint16_t>(std::vector<uint16_t>{0x3F80}, {1});
  bf.data_type = onnx::TensorProto::BFLOAT16;
  EXPECT_EQ(FormatTensor(bf), "[1.]");
  TensorData flags = TensorData::From<uint8_t>(std::vector<uint8_t>{1, 0}, {2});
  flags.data_type = onnx::TensorProto::BOOL;
  EXPECT_EQ(FormatTensor(flags), "[ True False]");
  EXPECT_EQ(FormatTensor(TensorData::From<float>(std::vector<float>{}, {0, 3})), "[]");
}

TEST(TensorPrintTest, MoreThanAThousandElementsShowTheEdges) {
  std::vector<int64_t> v(1001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
  EXPECT_EQ(FormatTensor(TensorData::From<int64_t>(v, {1001})),
            "[   0    1    2 ...  998  999 1000]");
  v.resize(1000);
  EXPECT_EQ(FormatTensor(TensorData::From<int64_t>(v, {1000})).find("..."), std::string::npos)
      << "1000 elements are printed in full";
}

}  // namespace
}  // namespace onemodel::cli
