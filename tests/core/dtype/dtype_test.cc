// Tests of core/dtype (spec 2): DType values are ONNX TensorProto.DataType codes, the ONNX
// spellings, which codes FromOnnx accepts, element sizes and which types can require grad.
//
// The expected values below are written out as literals (from onnx.proto), not derived from
// the code under test, so each table is an independent statement of the rule.
#include "core/dtype/dtype.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/common/exceptions.h"

namespace onemodel {
namespace {

// Every ONNX TensorProto.DataType name, indexed by its code (onnx.proto, codes 0-28).
constexpr std::array<std::string_view, 29> kOnnxSpelling = {
    "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",     "INT16",
    "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",    "DOUBLE",
    "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16",   "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",       "FLOAT4E2M1",
    "FLOAT8E8M0",     "UINT2",      "INT2",           "FLOAT6E2M3", "FLOAT6E3M2",
};

// The thirteen codes the core supports, with their element sizes in bytes.
struct SupportedCode {
  int32_t code;
  int32_t bytes;
};
constexpr std::array<SupportedCode, 13> kSupported = {{
    {1, 4},   // FLOAT
    {2, 1},   // UINT8
    {3, 1},   // INT8
    {4, 2},   // UINT16
    {5, 2},   // INT16
    {6, 4},   // INT32
    {7, 8},   // INT64
    {9, 1},   // BOOL
    {10, 2},  // FLOAT16
    {11, 8},  // DOUBLE
    {12, 4},  // UINT32
    {13, 8},  // UINT64
    {16, 2},  // BFLOAT16
}};

// The ONNX codes the core knows by name but does not support.
constexpr std::array<int32_t, 16> kUnsupported = {0,  8,  14, 15, 17, 18, 19, 20,
                                                  21, 22, 23, 24, 25, 26, 27, 28};

bool IsSupportedCode(int32_t code) {
  for (const SupportedCode& s : kSupported) {
    if (s.code == code) return true;
  }
  return false;
}

constexpr int32_t Code(DType t) { return static_cast<int32_t>(t); }

::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the TensorTypeException that FromOnnx(code) throws ("" and a failure if none).
std::string FromOnnxMessage(int32_t code) {
  try {
    const DType t = FromOnnx(code);
    ADD_FAILURE() << "FromOnnx(" << code << ") returned " << Code(t) << " instead of throwing";
  } catch (const TensorTypeException& e) {
    return e.what();
  }
  return "";
}

// --- Enum values are the ONNX codes -----------------------------------------------------------

TEST(DTypeEnum, UnderlyingTypeIsInt32) {
  EXPECT_TRUE((std::is_same_v<std::underlying_type_t<DType>, int32_t>));
}

TEST(DTypeEnum, SupportedTypesHaveTheirOnnxCodes) {
  EXPECT_EQ(Code(DType::kFloat), 1);
  EXPECT_EQ(Code(DType::kUint8), 2);
  EXPECT_EQ(Code(DType::kInt8), 3);
  EXPECT_EQ(Code(DType::kUint16), 4);
  EXPECT_EQ(Code(DType::kInt16), 5);
  EXPECT_EQ(Code(DType::kInt32), 6);
  EXPECT_EQ(Code(DType::kInt64), 7);
  EXPECT_EQ(Code(DType::kBool), 9);
  EXPECT_EQ(Code(DType::kFloat16), 10);
  EXPECT_EQ(Code(DType::kDouble), 11);
  EXPECT_EQ(Code(DType::kUint32), 12);
  EXPECT_EQ(Code(DType::kUint64), 13);
  EXPECT_EQ(Code(DType::kBFloat16), 16);
}

TEST(DTypeEnum, UnsupportedTypesHaveTheirOnnxCodes) {
  EXPECT_EQ(Code(DType::kUndefined), 0);
  EXPECT_EQ(Code(DType::kString), 8);
  EXPECT_EQ(Code(DType::kComplex64), 14);
  EXPECT_EQ(Code(DType::kComplex128), 15);
  EXPECT_EQ(Code(DType::kFloat8E4M3FN), 17);
  EXPECT_EQ(Code(DType::kFloat8E4M3FNUZ), 18);
  EXPECT_EQ(Code(DType::kFloat8E5M2), 19);
  EXPECT_EQ(Code(DType::kFloat8E5M2FNUZ), 20);
  EXPECT_EQ(Code(DType::kUint4), 21);
  EXPECT_EQ(Code(DType::kInt4), 22);
  EXPECT_EQ(Code(DType::kFloat4E2M1), 23);
  EXPECT_EQ(Code(DType::kFloat8E8M0), 24);
  EXPECT_EQ(Code(DType::kUint2), 25);
  EXPECT_EQ(Code(DType::kInt2), 26);
  EXPECT_EQ(Code(DType::kFloat6E2M3), 27);
  EXPECT_EQ(Code(DType::kFloat6E3M2), 28);
}

TEST(DTypeEnum, MaxOnnxCodeIs28) { EXPECT_EQ(kMaxOnnxCode, 28); }

// --- OnnxName -----------------------------------------------------------------------------------

class OnnxNameOfCode : public ::testing::TestWithParam<int32_t> {};

TEST_P(OnnxNameOfCode, IsTheOnnxSpelling) {
  const int32_t code = GetParam();
  EXPECT_EQ(OnnxName(code), kOnnxSpelling[static_cast<size_t>(code)]);
}

TEST_P(OnnxNameOfCode, IsTheSameForTheDTypeOverload) {
  const int32_t code = GetParam();
  EXPECT_EQ(OnnxName(static_cast<DType>(code)), kOnnxSpelling[static_cast<size_t>(code)]);
}

INSTANTIATE_TEST_SUITE_P(AllCodes, OnnxNameOfCode, ::testing::Range(0, 29));

TEST(OnnxName, SpotChecksByEnumerator) {
  EXPECT_EQ(OnnxName(DType::kFloat), "FLOAT");
  EXPECT_EQ(OnnxName(DType::kBFloat16), "BFLOAT16");
  EXPECT_EQ(OnnxName(DType::kFloat8E4M3FNUZ), "FLOAT8E4M3FNUZ");
  EXPECT_EQ(OnnxName(DType::kFloat6E3M2), "FLOAT6E3M2");
}

TEST(OnnxName, MinusOneIsUnknown) { EXPECT_EQ(OnnxName(-1), "UNKNOWN"); }

TEST(OnnxName, TwentyNineIsUnknown) { EXPECT_EQ(OnnxName(29), "UNKNOWN"); }

TEST(OnnxName, ExtremeCodesAreUnknown) {
  EXPECT_EQ(OnnxName(std::numeric_limits<int32_t>::min()), "UNKNOWN");
  EXPECT_EQ(OnnxName(std::numeric_limits<int32_t>::max()), "UNKNOWN");
  EXPECT_EQ(OnnxName(1000), "UNKNOWN");
}

TEST(OnnxName, OutOfEnumDTypeIsUnknown) { EXPECT_EQ(OnnxName(static_cast<DType>(29)), "UNKNOWN"); }

// --- FromOnnx -----------------------------------------------------------------------------------

class FromOnnxSupported : public ::testing::TestWithParam<SupportedCode> {};

TEST_P(FromOnnxSupported, ReturnsTheTypeWithTheSameCode) {
  const int32_t code = GetParam().code;
  EXPECT_EQ(Code(FromOnnx(code)), code);
}

INSTANTIATE_TEST_SUITE_P(ThirteenTypes, FromOnnxSupported, ::testing::ValuesIn(kSupported),
                         [](const ::testing::TestParamInfo<SupportedCode>& info) {
                           return std::string(kOnnxSpelling[static_cast<size_t>(info.param.code)]);
                         });

class FromOnnxUnsupported : public ::testing::TestWithParam<int32_t> {};

TEST_P(FromOnnxUnsupported, ThrowsTensorTypeException) {
  EXPECT_THROW(FromOnnx(GetParam()), TensorTypeException);
}

TEST_P(FromOnnxUnsupported, MessageNamesTheType) {
  const int32_t code = GetParam();
  EXPECT_TRUE(Contains(FromOnnxMessage(code), kOnnxSpelling[static_cast<size_t>(code)]));
}

TEST_P(FromOnnxUnsupported, MessageNamesTheCode) {
  const int32_t code = GetParam();
  EXPECT_TRUE(Contains(FromOnnxMessage(code), "code " + std::to_string(code)));
}

INSTANTIATE_TEST_SUITE_P(KnownCodes, FromOnnxUnsupported, ::testing::ValuesIn(kUnsupported),
                         [](const ::testing::TestParamInfo<int32_t>& info) {
                           return std::string(kOnnxSpelling[static_cast<size_t>(info.param)]);
                         });

TEST(FromOnnx, AcceptsExactlyThirteenOfTheCodes0To28) {
  int accepted = 0;
  for (int32_t code = 0; code <= 28; ++code) {
    bool ok = true;
    try {
      FromOnnx(code);
    } catch (const TensorTypeException&) {
      ok = false;
    }
    EXPECT_EQ(ok, IsSupportedCode(code)) << "code " << code;
    accepted += ok ? 1 : 0;
  }
  EXPECT_EQ(accepted, 13);
}

class FromOnnxOutsideEnum : public ::testing::TestWithParam<int32_t> {};

TEST_P(FromOnnxOutsideEnum, ThrowsWithTheNumberInTheMessage) {
  const int32_t code = GetParam();
  EXPECT_TRUE(Contains(FromOnnxMessage(code), std::to_string(code)));
}

INSTANTIATE_TEST_SUITE_P(Codes, FromOnnxOutsideEnum,
                         ::testing::Values(-1, 29, 30, 1000, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max()));

TEST(FromOnnx, OutsideEnumMessageSaysItIsNotAnOnnxType) {
  // "UNKNOWN" would be a confusing type name; the message says why the number is wrong.
  const std::string message = FromOnnxMessage(29);
  EXPECT_TRUE(Contains(message, "29"));
  EXPECT_FALSE(Contains(message, "UNKNOWN"));
}

TEST(FromOnnx, ErrorsAreTensorExceptions) {
  EXPECT_THROW(FromOnnx(8), TensorException);
  EXPECT_THROW(FromOnnx(-1), TensorException);
}

TEST(FromOnnx, ErrorsAreNotShapeErrors) {
  try {
    FromOnnx(14);
    ADD_FAILURE() << "FromOnnx(14) did not throw";
  } catch (const TensorShapeException&) {
    ADD_FAILURE() << "an element type error was reported as a shape error";
  } catch (const TensorTypeException&) {
  }
}

// --- IsSupported, ElementSize -------------------------------------------------------------------

TEST(IsSupported, TrueExactlyForTheThirteenTypes) {
  for (int32_t code = -1; code <= 29; ++code) {
    EXPECT_EQ(IsSupported(static_cast<DType>(code)), IsSupportedCode(code)) << "code " << code;
  }
}

class ElementSizeOf : public ::testing::TestWithParam<SupportedCode> {};

TEST_P(ElementSizeOf, SupportedType) {
  EXPECT_EQ(ElementSize(static_cast<DType>(GetParam().code)), GetParam().bytes);
}

INSTANTIATE_TEST_SUITE_P(ThirteenTypes, ElementSizeOf, ::testing::ValuesIn(kSupported),
                         [](const ::testing::TestParamInfo<SupportedCode>& info) {
                           return std::string(kOnnxSpelling[static_cast<size_t>(info.param.code)]);
                         });

TEST(ElementSize, ZeroForEveryUnsupportedCode) {
  for (int32_t code : kUnsupported) {
    EXPECT_EQ(ElementSize(static_cast<DType>(code)), 0) << kOnnxSpelling[static_cast<size_t>(code)];
  }
  EXPECT_EQ(ElementSize(static_cast<DType>(-1)), 0);
  EXPECT_EQ(ElementSize(static_cast<DType>(29)), 0);
}

TEST(ElementSize, IsAConstantExpression) {
  static_assert(ElementSize(DType::kDouble) == 8);
  static_assert(ElementSize(DType::kBFloat16) == 2);
  SUCCEED();
}

// --- IsFloatingPoint, IsInteger, CanRequireGrad -------------------------------------------------

bool IsOneOf(int32_t code, std::initializer_list<int32_t> codes) {
  for (int32_t c : codes) {
    if (c == code) return true;
  }
  return false;
}

TEST(CanRequireGrad, TrueExactlyForFloatDoubleFloat16BFloat16) {
  for (int32_t code = -1; code <= 29; ++code) {
    EXPECT_EQ(CanRequireGrad(static_cast<DType>(code)), IsOneOf(code, {1, 11, 10, 16}))
        << "code " << code << " " << OnnxName(code);
  }
}

TEST(CanRequireGrad, FalseForUnsupportedFloatFormats) {
  EXPECT_FALSE(CanRequireGrad(DType::kFloat8E4M3FN));
  EXPECT_FALSE(CanRequireGrad(DType::kFloat8E5M2));
  EXPECT_FALSE(CanRequireGrad(DType::kFloat4E2M1));
  EXPECT_FALSE(CanRequireGrad(DType::kFloat6E2M3));
  EXPECT_FALSE(CanRequireGrad(DType::kComplex64));
}

TEST(CanRequireGrad, FalseForIntegersAndBool) {
  EXPECT_FALSE(CanRequireGrad(DType::kInt32));
  EXPECT_FALSE(CanRequireGrad(DType::kInt64));
  EXPECT_FALSE(CanRequireGrad(DType::kUint8));
  EXPECT_FALSE(CanRequireGrad(DType::kBool));
}

TEST(IsFloatingPoint, TrueExactlyForTheFourSupportedFloatTypes) {
  for (int32_t code = -1; code <= 29; ++code) {
    EXPECT_EQ(IsFloatingPoint(static_cast<DType>(code)), IsOneOf(code, {1, 11, 10, 16}))
        << "code " << code << " " << OnnxName(code);
  }
}

TEST(IsInteger, TrueExactlyForTheEightSupportedIntegerTypes) {
  for (int32_t code = -1; code <= 29; ++code) {
    EXPECT_EQ(IsInteger(static_cast<DType>(code)), IsOneOf(code, {2, 3, 4, 5, 6, 7, 12, 13}))
        << "code " << code << " " << OnnxName(code);
  }
}

TEST(IsInteger, BoolIsNotAnInteger) { EXPECT_FALSE(IsInteger(DType::kBool)); }

// --- DTypeOf<T> and the 16-bit storage types ----------------------------------------------------

TEST(DTypeOf, MapsEachCppTypeToItsCode) {
  EXPECT_EQ(Code(DTypeOf<float>()), 1);
  EXPECT_EQ(Code(DTypeOf<uint8_t>()), 2);
  EXPECT_EQ(Code(DTypeOf<int8_t>()), 3);
  EXPECT_EQ(Code(DTypeOf<uint16_t>()), 4);
  EXPECT_EQ(Code(DTypeOf<int16_t>()), 5);
  EXPECT_EQ(Code(DTypeOf<int32_t>()), 6);
  EXPECT_EQ(Code(DTypeOf<int64_t>()), 7);
  EXPECT_EQ(Code(DTypeOf<bool>()), 9);
  EXPECT_EQ(Code(DTypeOf<Float16>()), 10);
  EXPECT_EQ(Code(DTypeOf<double>()), 11);
  EXPECT_EQ(Code(DTypeOf<uint32_t>()), 12);
  EXPECT_EQ(Code(DTypeOf<uint64_t>()), 13);
  EXPECT_EQ(Code(DTypeOf<BFloat16>()), 16);
}

template <typename T>
void ExpectSizeMatches() {
  EXPECT_EQ(ElementSize(DTypeOf<T>()), static_cast<int32_t>(sizeof(T))) << OnnxName(DTypeOf<T>());
}

TEST(DTypeOf, ElementSizeEqualsSizeofTheCppType) {
  ExpectSizeMatches<float>();
  ExpectSizeMatches<uint8_t>();
  ExpectSizeMatches<int8_t>();
  ExpectSizeMatches<uint16_t>();
  ExpectSizeMatches<int16_t>();
  ExpectSizeMatches<int32_t>();
  ExpectSizeMatches<int64_t>();
  ExpectSizeMatches<bool>();
  ExpectSizeMatches<Float16>();
  ExpectSizeMatches<double>();
  ExpectSizeMatches<uint32_t>();
  ExpectSizeMatches<uint64_t>();
  ExpectSizeMatches<BFloat16>();
}

TEST(DTypeOf, IsAConstantExpression) {
  static_assert(DTypeOf<float>() == DType::kFloat);
  static_assert(DTypeOf<BFloat16>() == DType::kBFloat16);
  SUCCEED();
}

TEST(DTypeOf, Float16AndBFloat16AreDistinctTypes) {
  EXPECT_NE(DTypeOf<Float16>(), DTypeOf<BFloat16>());
  EXPECT_NE(DTypeOf<Float16>(), DTypeOf<uint16_t>());
  EXPECT_NE(DTypeOf<BFloat16>(), DTypeOf<uint16_t>());
}

TEST(Float16, IsTwoBytesAndComparesByBits) {
  static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);
  static_assert(std::is_trivially_copyable_v<Float16> && std::is_trivially_copyable_v<BFloat16>);
  EXPECT_EQ(Float16{0x3C00}, Float16{0x3C00});
  EXPECT_NE(Float16{0x3C00}, Float16{0xBC00});
  EXPECT_EQ(BFloat16{0x3F80}, BFloat16{0x3F80});
  EXPECT_NE(BFloat16{0x3F80}, BFloat16{0x3F81});
}

}  // namespace
}  // namespace onemodel
