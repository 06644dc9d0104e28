#include "client/cli/npy.h"

#include <gtest/gtest.h>

#include <sstream>

namespace onemodel::cli {
namespace {

using client::Error;
using client::TensorData;
using P = onnx::TensorProto;

// What numpy.save writes for np.arange(6, dtype='<f4').reshape(2, 3).
std::string NumpyFile() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size());
  file += '\0';
  file += header;
  const float values[] = {0, 1, 2, 3, 4, 5};
  file.append(reinterpret_cast<const char*>(values), sizeof values);
  return file;
}

// An .npy stream with `header_dict` (padded) and `data`, in format `version`.
std::string NpyWithHeader(const std::string& header_dict, const std::string& data,
                          int version = 1) {
  std::string header = header_dict + "\n";
  std::string file("\x93NUMPY", 6);
  file += static_cast<char>(version);
  file += '\0';
  const uint32_t length = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (version == 1 ? 2 : 4); ++i) file += static_cast<char>(length >> (8 * i));
  return file + header + data;
}

TensorData Read(const std::string& bytes) {
  std::istringstream in(bytes);
  return ReadNpy(in, "test.npy");
}

std::string Write(const TensorData& data) {
  std::ostringstream out;
  WriteNpy(out, data);
  return out.str();
}

// The message of the Error `bytes` raise when read.
std::string ReadError(const std::string& bytes) {
  try {
    Read(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    return e.what();
  }
  ADD_FAILURE() << "the stream was accepted";
  return "";
}

TEST(NpyTest, ReadsWhatNumpyWrites) {
  const TensorData data = Read(NumpyFile());
  EXPECT_EQ(data.data_type, P::FLOAT);
  EXPECT_EQ(data.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(data.ToVector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(NpyTest, WritesWhatNumpyWrites) {
  const std::vector<float> values = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(Write(TensorData::From<float>(values, {2, 3})), NumpyFile());
}

TEST(NpyTest, RoundTripsEveryType) {
  for (const int32_t type : {P::FLOAT, P::DOUBLE, P::FLOAT16, P::INT8, P::INT16, P::INT32, P::INT64,
                             P::UINT8, P::UINT16, P::UINT32, P::UINT64, P::BOOL}) {
    SCOPED_TRACE(client::DataTypeName(type));
    TensorData data{type, {3, 1, 2}, std::string(6 * client::ElementBytes(type), '\0')};
    for (size_t i = 0; i < data.bytes.size(); ++i) data.bytes[i] = static_cast<char>(i % 2);
    const std::string file = Write(data);
    EXPECT_EQ(file.find("\n") % 64, 63u) << "header not padded to 64 bytes";
    const TensorData back = Read(file);
    EXPECT_EQ(back.data_type, type);
    EXPECT_EQ(back.dims, data.dims);
    EXPECT_EQ(back.bytes, data.bytes);
  }
}

TEST(NpyTest, ScalarAndVectorShapes) {
  const std::vector<int32_t> one = {42};
  EXPECT_NE(Write(TensorData::From<int32_t>(one, {})).find("'shape': (), "), std::string::npos);
  const std::string vector_file = Write(TensorData::From<int32_t>(one, {1}));
  EXPECT_NE(vector_file.find("'shape': (1,), "), std::string::npos);
  EXPECT_EQ(Read(vector_file).dims, std::vector<int64_t>{1});
  EXPECT_TRUE(Read(Write(TensorData::From<int32_t>(one, {}))).dims.empty());
}

TEST(NpyTest, ReadsVersion2HeadersAndByteOrderFreeTypes) {
  const TensorData data = Read(NpyWithHeader(
      "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (3,)}", "\x01\x02\x03", 2));
  EXPECT_EQ(data.data_type, P::UINT8);
  EXPECT_EQ(data.ToVector<uint8_t>(), (std::vector<uint8_t>{1, 2, 3}));
}

TEST(NpyTest, RefusesFortranOrder) {
  EXPECT_NE(
      ReadError(NpyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd"))
          .find("Fortran"),
      std::string::npos);
}

TEST(NpyTest, RefusesBigEndian) {
  EXPECT_NE(
      ReadError(NpyWithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd"))
          .find("big-endian"),
      std::string::npos);
}

TEST(NpyTest, RefusesUnsupportedTypesBadMagicAndTruncation) {
  EXPECT_NE(ReadError(NpyWithHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                                    "12345678"))
                .find("'<c8'"),
            std::string::npos);
  EXPECT_NE(ReadError("PK\x03\x04 not numpy").find("magic"), std::string::npos);
  EXPECT_NE(ReadError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                                    "12345678"))
                .find("truncated"),
            std::string::npos);
  EXPECT_NE(ReadError(NpyWithHeader("{'descr': '<f4', 'shape': (4,), }", "")).find("fortran"),
            std::string::npos);
}

// A repeated key and a shape past one tensor's 2^31 - 1 bytes are named as such; the shape was
// allocated (or said only "element count overflows", naming no file) before.
TEST(NpyTest, RefusesRepeatedKeysAndShapesPastTheTensorLimit) {
  EXPECT_NE(ReadError(NpyWithHeader("{'descr': '<f4', 'descr': '<f4', 'shape': (1,), }", "abcd"))
                .find("'test.npy': the header gives 'descr' twice"),
            std::string::npos);
  EXPECT_NE(ReadError(NpyWithHeader(
                          "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824,), }", ""))
                .find("'test.npy': the header's shape holds 1073741824 elements, more than the "
                      "2147483647 bytes one tensor may hold"),
            std::string::npos);
  EXPECT_NE(ReadError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                    "(4294967296, 4294967296), }",
                                    ""))
                .find("'test.npy': the header's shape: element count overflows"),
            std::string::npos);
}

TEST(NpyTest, WriteRefusesBfloat16) {
  const TensorData data{P::BFLOAT16, {1}, std::string(2, '\0')};
  std::ostringstream out;
  EXPECT_THROW(WriteNpy(out, data), Error);
}

}  // namespace
}  // namespace onemodel::cli
