#include "client/lib/tensor_data.h"

#include <gtest/gtest.h>

#include <cstring>

namespace onemodel::client {
namespace {

using P = onnx::TensorProto;

TEST(TensorDataTest, FromAndToVectorRoundTrip) {
  const std::vector<int64_t> values = {1, -2, 3, -4, 5, -6};
  const TensorData data = TensorData::From<int64_t>(values, {2, 3});
  EXPECT_EQ(data.data_type, P::INT64);
  EXPECT_EQ(data.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(data.bytes.size(), 48u);
  EXPECT_EQ(data.ToVector<int64_t>(), values);
}

TEST(TensorDataTest, ScalarHasOneElement) {
  const float value = 2.5f;
  const TensorData data = TensorData::From<float>({&value, 1}, {});
  EXPECT_EQ(NumElements(data.dims), 1);
  EXPECT_EQ(data.ToVector<float>(), std::vector<float>{2.5f});
}

TEST(TensorDataTest, FromRefusesCountMismatch) {
  const std::vector<float> values(5);
  EXPECT_THROW(TensorData::From<float>(values, {2, 3}), Error);
}

TEST(TensorDataTest, ToVectorChecksType) {
  const std::vector<float> values(6);
  const TensorData data = TensorData::From<float>(values, {6});
  try {
    data.ToVector<int32_t>();
    FAIL() << "a FLOAT tensor was read as INT32";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "tensor holds FLOAT, not INT32");
  }
}

TEST(TensorDataTest, RawBitsReadBoolAsUint8AndHalvesAsUint16) {
  const bool flags[] = {true, false, true};
  const TensorData bools = TensorData::From<bool>(flags, {3});
  EXPECT_EQ(bools.data_type, P::BOOL);
  EXPECT_EQ(bools.ToVector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));

  TensorData half{P::FLOAT16, {2}, std::string("\x00\x3c\x00\xc0", 4)};  // 1.0, -2.0
  EXPECT_EQ(half.ToVector<uint16_t>(), (std::vector<uint16_t>{0x3C00, 0xC000}));
}

TEST(TensorDataTest, ValidateRefusesUnsupportedTypeAndSizeMismatch) {
  EXPECT_THROW((TensorData{P::STRING, {1}, "x"}).Validate(), Error);
  EXPECT_THROW((TensorData{P::FLOAT, {2}, "1234"}).Validate(), Error);
  EXPECT_NO_THROW((TensorData{P::FLOAT, {2, 0}, ""}).Validate());
  EXPECT_THROW(NumElements(std::vector<int64_t>{2, -1}), Error);
}

TEST(TensorDataTest, ToProtoMovesBytesIntoRawData) {
  const std::vector<int32_t> values = {7, 8, 9};
  const P proto = ToProto(TensorData::From<int32_t>(values, {3}));
  EXPECT_EQ(proto.data_type(), P::INT32);
  ASSERT_EQ(proto.dims_size(), 1);
  EXPECT_EQ(proto.dims(0), 3);
  ASSERT_EQ(proto.raw_data().size(), 12u);
  EXPECT_EQ(std::memcmp(proto.raw_data().data(), values.data(), 12), 0);
  EXPECT_EQ(FromProto(proto).ToVector<int32_t>(), values);
}

TEST(TensorDataTest, FromProtoReadsEveryTypedField) {
  P floats;
  floats.set_data_type(P::FLOAT);
  floats.add_dims(2);
  floats.add_float_data(1.5f);
  floats.add_float_data(-3.0f);
  EXPECT_EQ(FromProto(floats).ToVector<float>(), (std::vector<float>{1.5f, -3.0f}));

  P int8s;  // 8-bit types travel in int32_data
  int8s.set_data_type(P::INT8);
  int8s.add_dims(3);
  for (const int v : {-128, 0, 127}) int8s.add_int32_data(v);
  EXPECT_EQ(FromProto(int8s).ToVector<int8_t>(), (std::vector<int8_t>{-128, 0, 127}));

  P halves;  // FLOAT16 bit patterns in int32_data
  halves.set_data_type(P::FLOAT16);
  halves.add_dims(1);
  halves.add_int32_data(0x3C00);
  EXPECT_EQ(FromProto(halves).ToVector<uint16_t>(), std::vector<uint16_t>{0x3C00});

  P uint32s;  // UINT32 travels in uint64_data
  uint32s.set_data_type(P::UINT32);
  uint32s.add_dims(1);
  uint32s.add_uint64_data(4000000000u);
  EXPECT_EQ(FromProto(uint32s).ToVector<uint32_t>(), std::vector<uint32_t>{4000000000u});

  P doubles;
  doubles.set_data_type(P::DOUBLE);
  doubles.add_double_data(0.25);  // no dims: a scalar
  EXPECT_EQ(FromProto(doubles).ToVector<double>(), std::vector<double>{0.25});

  P int64s;
  int64s.set_data_type(P::INT64);
  int64s.add_dims(1);
  int64s.add_int64_data(-(int64_t{1} << 40));
  EXPECT_EQ(FromProto(int64s).ToVector<int64_t>(), std::vector<int64_t>{-(int64_t{1} << 40)});
}

TEST(TensorDataTest, FromProtoRefusesExternalDataSegmentsAndSizeMismatch) {
  P external;
  external.set_data_type(P::FLOAT);
  external.set_data_location(P::EXTERNAL);
  EXPECT_THROW(FromProto(external), Error);

  P segment;
  segment.set_data_type(P::FLOAT);
  segment.mutable_segment()->set_begin(0);
  EXPECT_THROW(FromProto(segment), Error);

  P short_data;
  short_data.set_data_type(P::FLOAT);
  short_data.add_dims(4);
  short_data.set_raw_data(std::string(12, '\0'));
  EXPECT_THROW(FromProto(short_data), Error);
}

// The message FromProto(proto) throws, or "" when it throws none.
std::string FromProtoRefusal(const P& proto) {
  try {
    FromProto(proto);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Values in two places, or in another type's field, are refused as the server refuses them:
// the CLI kept raw_data and dropped float_data unseen.
TEST(TensorDataTest, FromProtoRefusesValuesInTwoFieldsOrAnotherTypesField) {
  P both;
  both.set_data_type(P::FLOAT);
  both.add_dims(1);
  both.set_raw_data(std::string(4, '\0'));
  both.add_float_data(1.0f);
  EXPECT_EQ(FromProtoRefusal(both),
            "tensor has both raw_data and float_data: keep the values in only one");
  P other;
  other.set_data_type(P::FLOAT);
  other.add_dims(1);
  other.add_int64_data(1);
  EXPECT_EQ(FromProtoRefusal(other),
            "tensor of FLOAT has int64_data; its values go in raw_data or float_data");
  P halves;  // FLOAT16 bit patterns live in int32_data
  halves.set_data_type(P::FLOAT16);
  halves.add_dims(1);
  halves.add_int32_data(0x3c00);
  EXPECT_EQ(FromProtoRefusal(halves), "");
}

TEST(TensorDataTest, NamesTypes) {
  EXPECT_EQ(DataTypeName(P::BFLOAT16), "BFLOAT16");
  EXPECT_EQ(DataTypeName(999), "type 999");
  EXPECT_EQ(ElementBytes(P::FLOAT16), 2);
  EXPECT_EQ(ElementBytes(P::STRING), 0);
}

}  // namespace
}  // namespace onemodel::client
