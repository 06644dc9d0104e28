#include "server/codec/tensor_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/common/exceptions.h"
#include "core/convert/half.h"
#include "core/memory/buffer_pool.h"
#include "core/shape/strides.h"
#include "core/tensor/layout.h"
#include "server/rpc/rpc_error.h"
#include "tests/common/alloc_counter.h"

namespace onemodel::server {
namespace {

constexpr DType kAllTypes[] = {DType::kFloat,   DType::kUint8,  DType::kInt8,   DType::kUint16,
                               DType::kInt16,   DType::kInt32,  DType::kInt64,  DType::kBool,
                               DType::kFloat16, DType::kDouble, DType::kUint32, DType::kUint64,
                               DType::kBFloat16};

// An Allocator over a BufferPool that counts its calls: proves a rejection allocated nothing.
class CountingAllocator final : public Allocator {
 public:
  Buffer* Allocate(int64_t length, bool zero = false) override {
    ++calls_;
    return pool_.Allocate(length, zero);
  }
  int calls() const { return calls_; }
  BufferPool& pool() { return pool_; }

 private:
  BufferPool pool_;
  int calls_ = 0;
};

// The little-endian bytes of `values`.
template <typename T>
std::string Le(std::vector<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!s.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

std::string AsString(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The elements of any plain tensor in row-major order, read from its buffer with its strides
// and offset (independently of the codec and of the core's copy routines).
std::string RowMajorBytes(const Tensor& t) {
  const int size = ElementSize(t.dtype());
  std::string out;
  if (t.shape().IsEmpty()) return out;
  std::vector<int64_t> index(static_cast<size_t>(t.rank()), 0);
  for (;;) {
    int64_t at = t.offset();
    for (int d = 0; d < t.rank(); ++d) at += index[static_cast<size_t>(d)] * t.strides()[d];
    out.append(reinterpret_cast<const char*>(t.buffer()->data() + at * size),
               static_cast<size_t>(size));
    int d = t.rank() - 1;
    for (; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < t.shape()[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
    if (d < 0) return out;
  }
}

// A new contiguous tensor of random bytes (BOOL: 0 or 1).
Tensor RandomTensor(const Shape& shape, DType dtype, Allocator& allocator, std::mt19937& rng) {
  Tensor t = Tensor::Empty(shape, dtype, allocator);
  for (std::byte& b : t.MutableRawData()) {
    b = static_cast<std::byte>(dtype == DType::kBool ? rng() % 2 : rng() % 256);
  }
  return t;
}

// A TensorProto carrying `raw` (the little-endian bytes of `dtype` values) in the typed field
// ONNX uses for the type: the reference for the typed decoding path.
onnx::TensorProto TypedProto(DType dtype, const Shape& shape, const std::string& raw) {
  onnx::TensorProto p;
  p.set_data_type(static_cast<int32_t>(dtype));
  for (int32_t e : shape.extents()) p.add_dims(e);
  const size_t size = static_cast<size_t>(ElementSize(dtype));
  for (size_t at = 0; at < raw.size(); at += size) {
    auto read = [&]<typename T>(T value) {
      std::memcpy(&value, raw.data() + at, sizeof(T));
      return value;
    };
    switch (dtype) {
      case DType::kFloat:
        p.add_float_data(read(float{}));
        break;
      case DType::kDouble:
        p.add_double_data(read(double{}));
        break;
      case DType::kInt64:
        p.add_int64_data(read(int64_t{}));
        break;
      case DType::kUint64:
        p.add_uint64_data(read(uint64_t{}));
        break;
      case DType::kUint32:
        p.add_uint64_data(read(uint32_t{}));
        break;
      case DType::kInt32:
        p.add_int32_data(read(int32_t{}));
        break;
      case DType::kInt16:
        p.add_int32_data(read(int16_t{}));
        break;
      case DType::kInt8:
        p.add_int32_data(read(int8_t{}));
        break;
      case DType::kUint16:
      case DType::kFloat16:
      case DType::kBFloat16:
        p.add_int32_data(read(uint16_t{}));
        break;
      default:
        p.add_int32_data(read(uint8_t{}));
        break;  // UINT8, BOOL
    }
  }
  return p;
}

onnx::TensorProto RawProto(DType dtype, std::vector<int64_t> dims, std::string raw) {
  onnx::TensorProto p;
  p.set_data_type(static_cast<int32_t>(dtype));
  for (int64_t e : dims) p.add_dims(e);
  p.set_raw_data(std::move(raw));
  return p;
}

std::vector<int64_t> Dims(const onnx::TensorProto& p) { return {p.dims().begin(), p.dims().end()}; }

// Runs f, which must throw RpcError INVALID_ARGUMENT; returns its message.
std::string InvalidArgumentMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no RpcError was thrown";
  return "";
}

std::string Encoded(const Tensor& t, Allocator& scratch) {
  onnx::TensorProto p;
  EncodeTensor(t, scratch, &p);
  EXPECT_EQ(p.data_type(), static_cast<int32_t>(t.dtype()));
  std::vector<int64_t> dims(t.shape().extents().begin(), t.shape().extents().end());
  EXPECT_EQ(Dims(p), dims);
  EXPECT_TRUE(p.has_raw_data());
  return p.raw_data();
}

// ---- round trips ----

TEST(TensorCodecTest, RawDataRoundTripsEveryType) {
  BufferPool pool;
  std::mt19937 rng(1);
  for (DType dtype : kAllTypes) {
    SCOPED_TRACE(OnnxName(dtype));
    const Tensor x = RandomTensor(Shape{2, 3, 4}, dtype, pool, rng);
    const std::string bytes = AsString(x.RawData());
    onnx::TensorProto p;
    EncodeTensor(x, pool, &p);
    EXPECT_EQ(p.data_type(), static_cast<int32_t>(dtype));
    EXPECT_EQ(Dims(p), (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(p.raw_data(), bytes);

    const Tensor y = DecodeTensor(p, pool);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
    EXPECT_TRUE(y.IsContiguous());
    EXPECT_NE(y.buffer(), x.buffer());
    EXPECT_EQ(AsString(y.RawData()), bytes);
  }
}

TEST(TensorCodecTest, DecodeAllocatesOneContiguousTensorFromTheGivenAllocator) {
  CountingAllocator allocator;
  const Tensor t =
      DecodeTensor(RawProto(DType::kInt16, {2, 2}, Le<int16_t>({1, -2, 3, -4})), allocator);
  EXPECT_EQ(allocator.calls(), 1);
  EXPECT_EQ(t.buffer()->length(), 8);
  EXPECT_EQ(t.offset(), 0);
  EXPECT_EQ(t.strides(), ContiguousStrides(Shape{2, 2}));
  EXPECT_EQ(t.At<int16_t>({1, 1}), -4);
  EXPECT_FALSE(t.requires_grad());
}

struct TypedCase {
  DType dtype;
  std::function<void(onnx::TensorProto&)> fill;
  std::string expected;  // little-endian bytes of the decoded tensor
};

TEST(TensorCodecTest, TypedFieldsDecodeForEveryTypeTheyServe) {
  using I64 = std::numeric_limits<int64_t>;
  using I32 = std::numeric_limits<int32_t>;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<TypedCase> cases = {
      {DType::kFloat,
       [&](auto& p) {
         for (float v : {1.5f, -0.0f, inf}) p.add_float_data(v);
       },
       Le<float>({1.5f, -0.0f, inf})},
      {DType::kDouble,
       [](auto& p) {
         for (double v : {0.1, -2.0, 1e300}) p.add_double_data(v);
       },
       Le<double>({0.1, -2.0, 1e300})},
      {DType::kInt64,
       [](auto& p) {
         for (int64_t v : {I64::min(), int64_t{-1}, I64::max()}) p.add_int64_data(v);
       },
       Le<int64_t>({I64::min(), -1, I64::max()})},
      {DType::kUint64,
       [](auto& p) {
         for (uint64_t v : {uint64_t{0}, ~uint64_t{0}, uint64_t{1} << 63}) p.add_uint64_data(v);
       },
       Le<uint64_t>({0, ~uint64_t{0}, uint64_t{1} << 63})},
      {DType::kUint32,
       [](auto& p) {
         for (uint64_t v : {0u, 4294967295u, 123u}) p.add_uint64_data(v);
       },
       Le<uint32_t>({0, 4294967295u, 123})},
      {DType::kInt32,
       [](auto& p) {
         for (int32_t v : {I32::min(), -1, I32::max()}) p.add_int32_data(v);
       },
       Le<int32_t>({I32::min(), -1, I32::max()})},
      {DType::kInt16,
       [](auto& p) {
         for (int v : {-32768, -1, 32767}) p.add_int32_data(v);
       },
       Le<int16_t>({-32768, -1, 32767})},
      {DType::kUint16,
       [](auto& p) {
         for (int v : {0, 65535, 1234}) p.add_int32_data(v);
       },
       Le<uint16_t>({0, 65535, 1234})},
      {DType::kInt8,
       [](auto& p) {
         for (int v : {-128, -1, 127}) p.add_int32_data(v);
       },
       Le<int8_t>({-128, -1, 127})},
      {DType::kUint8,
       [](auto& p) {
         for (int v : {0, 255, 7}) p.add_int32_data(v);
       },
       Le<uint8_t>({0, 255, 7})},
      {DType::kBool,
       [](auto& p) {
         for (int v : {0, 1, 1}) p.add_int32_data(v);
       },
       Le<uint8_t>({0, 1, 1})},
      // 16-bit floats travel as their bit pattern in the low 16 bits of an int32.
      {DType::kFloat16,
       [](auto& p) {
         for (int v : {0x3C00, 0xFC00, 0xFFFF}) p.add_int32_data(v);
       },
       Le<uint16_t>({0x3C00, 0xFC00, 0xFFFF})},
      {DType::kBFloat16,
       [](auto& p) {
         for (int v : {0x3F80, 0xC000, 0x0001}) p.add_int32_data(v);
       },
       Le<uint16_t>({0x3F80, 0xC000, 0x0001})},
  };
  BufferPool pool;
  for (const TypedCase& c : cases) {
    SCOPED_TRACE(OnnxName(c.dtype));
    onnx::TensorProto p;
    p.set_data_type(static_cast<int32_t>(c.dtype));
    p.add_dims(3);
    c.fill(p);
    const Tensor t = DecodeTensor(p, pool);
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.shape(), Shape{3});
    EXPECT_EQ(AsString(t.RawData()), c.expected);
  }
}

TEST(TensorCodecTest, SixteenBitFloatsFromInt32DataHaveTheirValues) {
  BufferPool pool;
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(FloatToHalfBits(1.0f / 3.0f));
  p.add_int32_data(FloatToHalfBits(-2.5f));
  const Tensor h = DecodeTensor(p, pool);
  EXPECT_EQ(ToFloat(h.At<Float16>({0})), 0.333251953125f);
  EXPECT_EQ(ToFloat(h.At<Float16>({1})), -2.5f);

  p.set_data_type(onnx::TensorProto::BFLOAT16);
  p.clear_int32_data();
  p.add_int32_data(FloatToBFloat16Bits(3.14159265f));
  p.add_int32_data(FloatToBFloat16Bits(-1.0f));
  const Tensor b = DecodeTensor(p, pool);
  EXPECT_EQ(ToFloat(b.At<BFloat16>({0})), 3.140625f);
  EXPECT_EQ(ToFloat(b.At<BFloat16>({1})), -1.0f);
}

TEST(TensorCodecTest, BoolFromInt32Data) {
  BufferPool pool;
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(2);
  p.add_dims(2);
  for (int v : {1, 0, 0, 1}) p.add_int32_data(v);
  const Tensor t = DecodeTensor(p, pool);
  EXPECT_TRUE(t.At<bool>({0, 0}));
  EXPECT_FALSE(t.At<bool>({0, 1}));
  EXPECT_FALSE(t.At<bool>({1, 0}));
  EXPECT_TRUE(t.At<bool>({1, 1}));
}

TEST(TensorCodecTest, BoolRawBytesMustBeZeroOrOne) {
  BufferPool pool;
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(3);
  p.set_raw_data(std::string("\x01\x00\x01", 3));
  EXPECT_TRUE(DecodeTensor(p, pool).At<bool>({2}));
  p.set_raw_data(std::string("\x01\x02\x00", 3));
  try {
    DecodeTensor(p, pool);
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const RpcError& e) {
    EXPECT_STREQ(e.what(), "raw_data[1] is 2, outside the range of BOOL (0 to 1)");
  }
}

// ---- scalars and empty tensors ----

TEST(TensorCodecTest, RankZeroRoundTrips) {
  BufferPool pool;
  const Tensor raw = DecodeTensor(RawProto(DType::kFloat, {}, Le<float>({2.5f})), pool);
  EXPECT_EQ(raw.rank(), 0);
  EXPECT_EQ(raw.At<float>({}), 2.5f);

  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::INT64);
  typed.add_int64_data(-7);
  const Tensor t = DecodeTensor(typed, pool);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.At<int64_t>({}), -7);

  onnx::TensorProto p;
  EncodeTensor(t, pool, &p);
  EXPECT_EQ(p.dims_size(), 0);
  EXPECT_EQ(p.raw_data(), Le<int64_t>({-7}));
}

TEST(TensorCodecTest, EmptyTensorsNeedNoData) {
  BufferPool pool;
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::INT64);
  for (int64_t e : {2, 0, 3}) p.add_dims(e);
  const Tensor t = DecodeTensor(p, pool);  // no data field at all
  EXPECT_EQ(t.shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(t.ElementCount(), 0);

  p.set_raw_data("");  // an empty raw_data is fine too
  EXPECT_EQ(DecodeTensor(p, pool).shape(), (Shape{2, 0, 3}));

  onnx::TensorProto out;
  EncodeTensor(t, pool, &out);
  EXPECT_EQ(Dims(out), (std::vector<int64_t>{2, 0, 3}));
  EXPECT_TRUE(out.has_raw_data());
  EXPECT_EQ(out.raw_data(), "");

  // An empty view with unusual strides.
  const Tensor x = Tensor::Empty(Shape{3, 4}, DType::kFloat, pool);
  EXPECT_EQ(Encoded(x.Transpose(0, 1).Slice(1, 2, 2), pool), "");
}

// ---- views encode in row-major order ----

template <typename T>
Tensor Iota(const Shape& shape, Allocator& allocator) {
  Tensor t = Tensor::Empty(shape, DTypeOf<T>(), allocator);
  T next{0};
  for (T& v : t.MutableData<T>()) v = next++;
  return t;
}

TEST(TensorCodecTest, TransposedTensorEncodesRowMajor) {
  BufferPool pool;
  const Tensor t = Iota<float>(Shape{2, 3}, pool).Transpose(0, 1);
  ASSERT_FALSE(t.IsContiguous());
  EXPECT_EQ(Encoded(t, pool), Le<float>({0, 3, 1, 4, 2, 5}));
}

TEST(TensorCodecTest, NegativeStrideTensorEncodesRowMajor) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{3, 4}, pool).Slice(1, -1, -5, -1);  // columns reversed
  ASSERT_LT(t.strides()[1], 0);
  EXPECT_EQ(Encoded(t, pool), Le<int32_t>({3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
}

TEST(TensorCodecTest, ExpandedTensorEncodesEveryRepeat) {
  BufferPool pool;
  const Tensor t = Iota<int16_t>(Shape{3, 1}, pool).Expand(Shape{2, 3, 4});
  ASSERT_EQ(t.strides()[0], 0);
  ASSERT_EQ(t.strides()[2], 0);
  const std::vector<int16_t> block = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  EXPECT_EQ(Encoded(t, pool), Le(block) + Le(block));

  Tensor scalar = Tensor::Empty(Shape{}, DType::kDouble, pool);
  scalar.Fill(4.5);
  EXPECT_EQ(Encoded(scalar.Expand(Shape{2, 2}), pool), Le<double>({4.5, 4.5, 4.5, 4.5}));
}

TEST(TensorCodecTest, OffsetStepAndPermutedViewsEncodeRowMajor) {
  BufferPool pool;
  const Tensor stepped = Iota<double>(Shape{10}, pool).Slice(0, 1, 9, 3);
  ASSERT_EQ(stepped.offset(), 1);
  EXPECT_EQ(Encoded(stepped, pool), Le<double>({1, 4, 7}));
  const Tensor contiguous_tail = Iota<double>(Shape{10}, pool).Slice(0, 2, 5);
  ASSERT_TRUE(contiguous_tail.IsContiguous());
  ASSERT_EQ(contiguous_tail.offset(), 2);
  EXPECT_EQ(Encoded(contiguous_tail, pool), Le<double>({2, 3, 4}));

  const Tensor permuted = Iota<uint8_t>(Shape{2, 3, 4}, pool).Permute({2, 0, 1});
  EXPECT_EQ(Encoded(permuted, pool), RowMajorBytes(permuted));
  EXPECT_EQ(Encoded(permuted, pool).substr(0, 6), Le<uint8_t>({0, 4, 8, 12, 16, 20}));
}

TEST(TensorCodecTest, BlockedTensorsOfEitherFamilyEncodeInLogicalNchwOrder) {
  for (Layout family : {Layout::kBlocked, Layout::kBlockedWeights}) {
    SCOPED_TRACE(LayoutName(family));
    BufferPool pool;
    BufferPool scratch;
    // 5 channels and 2 output channels in blocks of 4: padded tail blocks either way.
    const Tensor x = Iota<float>(Shape{2, 5, 2, 3}, pool);
    const Tensor blocked = x.ToLayout(family, pool, /*block=*/4);
    ASSERT_EQ(blocked.block_size(), 4);
    onnx::TensorProto p;
    EncodeTensor(blocked, scratch, &p);
    EXPECT_EQ(Dims(p), (std::vector<int64_t>{2, 5, 2, 3}));
    EXPECT_EQ(p.raw_data(), AsString(x.RawData()));
    EXPECT_EQ(scratch.Stats().rented_buffers, 0);  // the unblocked copy went back
    EXPECT_GT(scratch.Stats().misses, 0);          // and it came from `scratch`
  }
}

// ---- encoding touches only the data fields ----

TEST(TensorCodecTest, EncodeKeepsNameAndReplacesEveryDataField) {
  BufferPool pool;
  onnx::TensorProto p;
  p.set_name("w1");
  p.set_doc_string("weights");
  p.set_data_type(onnx::TensorProto::DOUBLE);
  for (int64_t e : {9, 9}) p.add_dims(e);
  p.add_float_data(1);
  p.add_int32_data(2);
  p.add_string_data("s");
  p.add_int64_data(3);
  p.add_double_data(4);
  p.add_uint64_data(5);
  p.add_external_data()->set_key("location");
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  p.mutable_segment()->set_begin(0);
  EncodeTensor(Iota<float>(Shape{2}, pool), pool, &p);
  EXPECT_EQ(p.name(), "w1");
  EXPECT_EQ(p.doc_string(), "weights");
  EXPECT_EQ(p.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(Dims(p), (std::vector<int64_t>{2}));
  EXPECT_EQ(p.raw_data(), Le<float>({0, 1}));
  EXPECT_EQ(p.float_data_size() + p.int32_data_size() + p.string_data_size() + p.int64_data_size() +
                p.double_data_size() + p.uint64_data_size() + p.external_data_size(),
            0);
  EXPECT_FALSE(p.has_data_location());
  EXPECT_FALSE(p.has_segment());
  EXPECT_EQ(DecodeTensor(p, pool).At<float>({1}), 1.0f);
}

TEST(TensorCodecTest, EncodingAStaleTensorThrowsAndLeavesTheProto) {
  BufferPool pool;
  Tensor x = Iota<float>(Shape{2, 2}, pool);
  const Tensor view = x.Transpose(0, 1);  // not contiguous: no accessor would check it
  x.Dispose();
  onnx::TensorProto p;
  p.set_name("keep");
  EXPECT_THROW(EncodeTensor(view, pool, &p), StaleTensorException);
  EXPECT_THROW(EncodeTensor(Tensor(), pool, &p), StaleTensorException);
  EXPECT_EQ(p.name(), "keep");
  EXPECT_FALSE(p.has_data_type());
  EXPECT_EQ(p.dims_size(), 0);
  EXPECT_FALSE(p.has_raw_data());
}

// ---- hot paths ----

TEST(TensorCodecTest, EncodingAContiguousTensorAllocatesTheBytesOnce) {
  BufferPool pool;
  const Tensor x = Iota<float>(Shape{256, 1024}, pool);  // 1 MiB
  onnx::TensorProto p;
  testing::AllocationCounter counter;
  EncodeTensor(x, pool, &p);
  counter.Stop();
  // The raw_data string, its one buffer of 1 MiB, the dims: no growth by appending.
  EXPECT_LE(counter.count(), 3);
  EXPECT_GE(counter.largest(), size_t{1} << 20);
  EXPECT_EQ(p.raw_data().size(), size_t{1} << 20);
}

TEST(TensorCodecTest, DecodingRawDataAllocatesNothingOnTheHeapOnceThePoolIsWarm) {
  BufferPool pool;
  const onnx::TensorProto p = RawProto(DType::kFloat, {64, 64}, std::string(64 * 64 * 4, '\1'));
  DecodeTensor(p, pool).Dispose();  // warms the pool's size class
  testing::AllocationCounter counter;
  Tensor t = DecodeTensor(p, pool);
  counter.Stop();
  EXPECT_EQ(counter.count(), 0);
  EXPECT_EQ(AsString(t.RawData()), p.raw_data());
}

// ---- rejections ----

struct RejectCase {
  const char* what;
  std::function<void(onnx::TensorProto&)> edit;  // applied to a valid FLOAT [2, 3] proto
  std::string message;
};

void SetInt32(onnx::TensorProto& p, int32_t type, std::vector<int64_t> dims,
              std::vector<int32_t> values) {
  p.Clear();
  p.set_data_type(type);
  for (int64_t e : dims) p.add_dims(e);
  for (int32_t v : values) p.add_int32_data(v);
}

TEST(TensorCodecTest, MalformedProtosAreRejectedWithExactMessagesBeforeAllocating) {
  const std::string kTypes =
      " is not supported; use FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, "
      "UINT8, UINT16, UINT32, UINT64 or BOOL";
  auto dims = [](onnx::TensorProto& p, std::vector<int64_t> d) {
    p.clear_dims();
    for (int64_t e : d) p.add_dims(e);
  };
  const std::vector<RejectCase> cases = {
      // The element type (spec 2).
      {"data_type unset", [](auto& p) { p.clear_data_type(); },
       "data_type is 0 (UNDEFINED): set it to the element type's ONNX code, e.g. 1 for FLOAT"},
      {"STRING", [](auto& p) { p.set_data_type(8); }, "element type STRING (code 8)" + kTypes},
      {"COMPLEX64", [](auto& p) { p.set_data_type(14); },
       "element type COMPLEX64 (code 14)" + kTypes},
      {"FLOAT8E4M3FN", [](auto& p) { p.set_data_type(17); },
       "element type FLOAT8E4M3FN (code 17)" + kTypes},
      {"code 99", [](auto& p) { p.set_data_type(99); },
       "element type code 99 is not an ONNX TensorProto.DataType (known codes are 0-28)"},
      {"code -1", [](auto& p) { p.set_data_type(-1); },
       "element type code -1 is not an ONNX TensorProto.DataType (known codes are 0-28)"},
      // The dims (spec 3).
      {"negative dim",
       [&](auto& p) {
         dims(p, {2, -3});
       },
       "shape [2, -3] has negative extent -3 in dimension 1"},
      {"rank 9",
       [&](auto& p) {
         dims(p, {1, 1, 1, 1, 1, 1, 1, 1, 1});
       },
       "dims has 9 entries; the maximum rank is 8"},
      {"extent above 2^31-1",
       [&](auto& p) {
         dims(p, {1, 4294967296});
       },
       "shape [1, 4294967296] has extent 4294967296 in dimension 1, above the 32-bit limit "
       "2147483647"},
      {"prefix product",
       [&](auto& p) {
         dims(p, {100000, 100000, 0});
       },
       "shape [100000, 100000, 0] is too large: the product of its first 2 extents is "
       "10000000000, above the limit of 2147483647 elements"},
      {"2^31 bytes", [&](auto& p) { dims(p, {536870912}); },
       "shape [536870912] of FLOAT needs 2147483648 bytes, above the buffer limit of 2147483647 "
       "bytes"},
      // Where the data is.
      {"data_location EXTERNAL", [](auto& p) { p.set_data_location(onnx::TensorProto::EXTERNAL); },
       "TensorProto uses external data (data_location EXTERNAL or external_data entries), which "
       "the server cannot read: send the values in raw_data, or stream a large tensor with "
       "UploadTensor"},
      {"external_data entry", [](auto& p) { p.add_external_data()->set_key("location"); },
       "TensorProto uses external data (data_location EXTERNAL or external_data entries), which "
       "the server cannot read: send the values in raw_data, or stream a large tensor with "
       "UploadTensor"},
      {"segment", [](auto& p) { p.mutable_segment()->set_begin(0); },
       "TensorProto has a segment: split tensors are not supported; send the whole tensor in "
       "one TensorProto, or stream a large tensor with UploadTensor"},
      {"raw_data and float_data",
       [](auto& p) {
         for (int i = 0; i < 6; ++i) p.add_float_data(1);
       },
       "TensorProto has both raw_data and float_data: send the values in only one of them"},
      {"FLOAT with int32_data",
       [](auto& p) {
         SetInt32(p, 1, {2, 3}, {1, 2, 3, 4, 5, 6});
       },
       "TensorProto of type FLOAT has int32_data; FLOAT values go in raw_data or float_data"},
      {"FLOAT with string_data", [](auto& p) { p.add_string_data("x"); },
       "TensorProto of type FLOAT has string_data; FLOAT values go in raw_data or float_data"},
      {"UINT32 with int32_data", [](auto& p) { SetInt32(p, 12, {1}, {1}); },
       "TensorProto of type UINT32 has int32_data; UINT32 values go in raw_data or uint64_data"},
      {"FLOAT16 with float_data",
       [](auto& p) {
         p.Clear();
         p.set_data_type(10);
         p.add_float_data(1);
       },
       "TensorProto of type FLOAT16 has float_data; FLOAT16 values go in raw_data or "
       "int32_data"},
      {"DOUBLE with float_data",
       [](auto& p) {
         p.Clear();
         p.set_data_type(11);
         p.add_float_data(1);
       },
       "TensorProto of type DOUBLE has float_data; DOUBLE values go in raw_data or double_data"},
      {"INT64 with uint64_data",
       [](auto& p) {
         p.Clear();
         p.set_data_type(7);
         p.add_uint64_data(1);
       },
       "TensorProto of type INT64 has uint64_data; INT64 values go in raw_data or int64_data"},
      // How much data (both ways).
      {"raw_data short", [](auto& p) { p.set_raw_data(std::string(20, '\0')); },
       "raw_data has 20 bytes; FLOAT [2, 3] needs 24"},
      {"raw_data long", [](auto& p) { p.set_raw_data(std::string(28, '\0')); },
       "raw_data has 28 bytes; FLOAT [2, 3] needs 24"},
      {"raw_data present but empty", [](auto& p) { p.set_raw_data(""); },
       "raw_data has 0 bytes; FLOAT [2, 3] needs 24"},
      {"one byte for a scalar",
       [&](auto& p) {
         dims(p, {});
         p.set_raw_data("x");
       },
       "raw_data has 1 byte; FLOAT [] needs 4"},
      {"float_data short",
       [](auto& p) {
         p.clear_raw_data();
         for (int i = 0; i < 5; ++i) p.add_float_data(1);
       },
       "float_data has 5 values; FLOAT [2, 3] needs 6"},
      {"float_data long",
       [](auto& p) {
         p.clear_raw_data();
         for (int i = 0; i < 7; ++i) p.add_float_data(1);
       },
       "float_data has 7 values; FLOAT [2, 3] needs 6"},
      {"values for an empty tensor",
       [&](auto& p) {
         p.clear_raw_data();
         dims(p, {0, 3});
         p.add_float_data(1);
       },
       "float_data has 1 value; FLOAT [0, 3] needs 0"},
      {"no data", [](auto& p) { p.clear_raw_data(); },
       "TensorProto has no data: FLOAT [2, 3] needs 24 bytes in raw_data or 6 values in "
       "float_data"},
      {"no data for a scalar",
       [&](auto& p) {
         p.clear_raw_data();
         dims(p, {});
       },
       "TensorProto has no data: FLOAT [] needs 4 bytes in raw_data or 1 value in float_data"},
      {"no data for UINT64", [](auto& p) { SetInt32(p, 13, {2}, {}); },
       "TensorProto has no data: UINT64 [2] needs 16 bytes in raw_data or 2 values in "
       "uint64_data"},
      // Typed values out of range for the narrow type.
      {"UINT8 300",
       [](auto& p) {
         SetInt32(p, 2, {3}, {1, 300, 2});
       },
       "int32_data[1] is 300, outside the range of UINT8 (0 to 255)"},
      {"UINT8 -1", [](auto& p) { SetInt32(p, 2, {1}, {-1}); },
       "int32_data[0] is -1, outside the range of UINT8 (0 to 255)"},
      {"INT8 128",
       [](auto& p) {
         SetInt32(p, 3, {2}, {-128, 128});
       },
       "int32_data[1] is 128, outside the range of INT8 (-128 to 127)"},
      {"INT8 -129", [](auto& p) { SetInt32(p, 3, {1}, {-129}); },
       "int32_data[0] is -129, outside the range of INT8 (-128 to 127)"},
      {"UINT16 65536", [](auto& p) { SetInt32(p, 4, {1}, {65536}); },
       "int32_data[0] is 65536, outside the range of UINT16 (0 to 65535)"},
      {"INT16 -32769", [](auto& p) { SetInt32(p, 5, {1}, {-32769}); },
       "int32_data[0] is -32769, outside the range of INT16 (-32768 to 32767)"},
      {"BOOL 2",
       [](auto& p) {
         SetInt32(p, 9, {3}, {0, 1, 2});
       },
       "int32_data[2] is 2, outside the range of BOOL (0 to 1)"},
      {"BOOL -1", [](auto& p) { SetInt32(p, 9, {1}, {-1}); },
       "int32_data[0] is -1, outside the range of BOOL (0 to 1)"},
      {"FLOAT16 pattern above 0xFFFF", [](auto& p) { SetInt32(p, 10, {1}, {0x10000}); },
       "int32_data[0] is 65536, outside the range of FLOAT16 (0 to 65535): each value is the "
       "16-bit pattern of one FLOAT16 (1.0 is 15360)"},
      {"FLOAT16 sign-extended pattern", [](auto& p) { SetInt32(p, 10, {1}, {-1024}); },
       "int32_data[0] is -1024, outside the range of FLOAT16 (0 to 65535): each value is the "
       "16-bit pattern of one FLOAT16 (1.0 is 15360)"},
      {"BFLOAT16 pattern above 0xFFFF",
       [](auto& p) {
         SetInt32(p, 16, {2}, {0, 70000});
       },
       "int32_data[1] is 70000, outside the range of BFLOAT16 (0 to 65535): each value is the "
       "16-bit pattern of one BFLOAT16 (1.0 is 16256)"},
      {"UINT32 2^32",
       [](auto& p) {
         p.Clear();
         p.set_data_type(12);
         p.add_dims(2);
         p.add_uint64_data(4294967295u);
         p.add_uint64_data(4294967296u);
       },
       "uint64_data[1] is 4294967296, outside the range of UINT32 (0 to 4294967295)"},
  };
  for (const RejectCase& c : cases) {
    SCOPED_TRACE(c.what);
    onnx::TensorProto p = RawProto(DType::kFloat, {2, 3}, std::string(24, '\0'));
    c.edit(p);
    CountingAllocator allocator;
    EXPECT_EQ(InvalidArgumentMessage([&] { DecodeTensor(p, allocator); }), c.message);
    EXPECT_EQ(allocator.calls(), 0);
    EXPECT_EQ(allocator.pool().Stats().misses, 0);
  }
}

TEST(TensorCodecTest, LimitsAreRejectedWithoutAllocating) {
  // rank 9, a prefix product over 2^31-1, exactly 2^31 bytes, and a valid 2^31-1-byte header
  // whose data is missing: none of them reaches the allocator.
  const std::vector<onnx::TensorProto> protos = {
      RawProto(DType::kUint8, {1, 1, 1, 1, 1, 1, 1, 1, 1}, "x"),
      RawProto(DType::kUint8, {100000, 100000, 0}, ""),
      RawProto(DType::kInt16, {1073741824}, ""),
      RawProto(DType::kUint8, {2147483647}, "abc"),
  };
  for (const onnx::TensorProto& p : protos) {
    CountingAllocator allocator;
    testing::AllocationCounter counter;
    InvalidArgumentMessage([&] { DecodeTensor(p, allocator); });
    counter.Stop();
    EXPECT_EQ(allocator.calls(), 0);
    EXPECT_LT(counter.largest(), size_t{4096});  // only messages were allocated
  }
}

TEST(TensorCodecTest, DecodeHeaderValidatesAndSizes) {
  const std::vector<int64_t> dims = {2, 3, 4};
  const TensorHeader h = DecodeHeader(11, dims);
  EXPECT_EQ(h.dtype, DType::kDouble);
  EXPECT_EQ(h.shape, (Shape{2, 3, 4}));
  EXPECT_EQ(h.bytes, 192);

  EXPECT_EQ(DecodeHeader(1, {}).bytes, 4);  // rank 0: one element
  const std::vector<int64_t> largest = {2147483647};
  EXPECT_EQ(DecodeHeader(2, largest).bytes, 2147483647);  // exactly at the limit
  const std::vector<int64_t> rank8 = {1, 2, 1, 2, 1, 2, 1, 2};
  EXPECT_EQ(DecodeHeader(9, rank8).shape.rank(), 8);
  const std::vector<int64_t> empty = {100000, 0, 100000};  // prefix products stay small
  EXPECT_EQ(DecodeHeader(7, empty).bytes, 0);

  const std::vector<int64_t> too_many_bytes = {1073741824};
  EXPECT_EQ(InvalidArgumentMessage([&] { DecodeHeader(5, too_many_bytes); }),
            "shape [1073741824] of INT16 needs 2147483648 bytes, above the buffer limit of "
            "2147483647 bytes");
  EXPECT_EQ(InvalidArgumentMessage([&] { DecodeHeader(0, dims); }),
            "data_type is 0 (UNDEFINED): set it to the element type's ONNX code, e.g. 1 for FLOAT");
  const std::vector<int64_t> huge_rank(1000000, 1);  // the message does not list them
  EXPECT_EQ(InvalidArgumentMessage([&] { DecodeHeader(1, huge_rank); }),
            "dims has 1000000 entries; the maximum rank is 8");
}

// ---- property: random types, shapes and views round trip ----

TEST(TensorCodecTest, RandomViewsRoundTripThroughRawAndTypedFields) {
  BufferPool pool;
  std::mt19937 rng(20240601);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iteration = 0; iteration < 400; ++iteration) {
    const DType dtype = kAllTypes[pick(0, 12)];
    std::vector<int64_t> extents(static_cast<size_t>(pick(0, 5)));
    for (int64_t& e : extents) e = pick(0, 9) == 0 ? 0 : pick(1, 4);
    Tensor base = RandomTensor(Shape(extents), dtype, pool, rng);
    Tensor view = base;
    const int rank = base.rank();
    std::vector<int> perm(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
    std::shuffle(perm.begin(), perm.end(), rng);
    switch (rank == 0 ? 0 : pick(0, 4)) {
      case 1:
        view = base.Transpose(pick(0, rank - 1), pick(0, rank - 1));
        break;
      case 2: {
        const int d = pick(0, rank - 1);
        const int step = pick(1, 3) * (pick(0, 1) ? 1 : -1);
        view = step > 0 ? base.Slice(d, pick(0, 2), 100, step) : base.Slice(d, -1, -100, step);
        break;
      }
      case 3: {  // a new broadcast dimension in front
        std::vector<int64_t> wider = {pick(1, 3)};
        wider.insert(wider.end(), extents.begin(), extents.end());
        if (wider.size() <= 8) view = base.Expand(Shape(wider));
        break;
      }
      case 4:
        view = base.Permute(perm);
        break;
      default:
        break;
    }
    SCOPED_TRACE(view.Describe());
    const std::string expected = RowMajorBytes(view);

    onnx::TensorProto p;
    EncodeTensor(view, pool, &p);
    ASSERT_EQ(p.raw_data(), expected);
    Tensor from_raw = DecodeTensor(p, pool);
    EXPECT_EQ(from_raw.dtype(), dtype);
    EXPECT_EQ(from_raw.shape(), view.shape());
    EXPECT_EQ(AsString(from_raw.RawData()), expected);

    Tensor from_typed = DecodeTensor(TypedProto(dtype, view.shape(), expected), pool);
    EXPECT_EQ(from_typed.shape(), view.shape());
    ASSERT_EQ(AsString(from_typed.RawData()), expected);
    from_raw.Dispose();
    from_typed.Dispose();
    base.Dispose();
  }
  EXPECT_EQ(pool.Stats().rented_buffers, 0);
}

}  // namespace
}  // namespace onemodel::server
