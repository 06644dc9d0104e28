// Tests of Tensor::CopyLogicalBytes: every byte range of any view is the matching slice of its
// row-major values (independently enumerated), ranges outside are refused before anything is
// written, stale and blocked tensors are refused, and a huge view is copied chunk by chunk with
// no allocation at all.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/exceptions.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"
#include "tests/common/alloc_counter.h"
#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel {
namespace {

using tensor_test::Iota;
using tensor_test::RowMajorOffsets;

// Oracle: the row-major bytes, element by element from the offsets tensor_test_util computes.
std::vector<std::byte> RowMajorBytes(const Tensor& t) {
  const size_t size = static_cast<size_t>(ElementSize(t.dtype()));
  std::vector<std::byte> out;
  for (int64_t at : RowMajorOffsets(t)) {
    const std::byte* e = t.buffer()->data() + static_cast<size_t>(at) * size;
    out.insert(out.end(), e, e + size);
  }
  return out;
}

TEST(CopyLogicalBytesTest, EveryByteRangeOfAnyViewIsThatSliceOfItsRowMajorBytes) {
  BufferPool pool;
  const std::vector<Tensor> views = {
      Iota<int16_t>(Shape{3, 1}, pool).Expand(Shape{2, 3, 5}),  // broadcast (stride 0)
      Iota<uint8_t>(Shape{2, 3, 4}, pool).Permute({2, 0, 1}),   // permuted
      Iota<int32_t>(Shape{3, 4}, pool).Slice(1, -1, -5, -1),    // negative stride
      Iota<double>(Shape{10}, pool).Slice(0, 1, 9, 3),          // offset and step
      Iota<float>(Shape{7}, pool),                              // contiguous
      Iota<double>(Shape{}, pool),                              // a scalar
      Iota<float>(Shape{2, 0, 3}, pool).Transpose(0, 2),        // empty
  };
  for (const Tensor& t : views) {
    const std::vector<std::byte> all = RowMajorBytes(t);
    const int64_t total = static_cast<int64_t>(all.size());
    ASSERT_EQ(total, t.ElementCount() * ElementSize(t.dtype()));
    // Ranges that start and end inside elements and rows, span rows, cover everything.
    for (int64_t first = 0; first <= total; ++first) {
      for (int64_t n = 0; first + n <= total; ++n) {
        std::vector<std::byte> out(static_cast<size_t>(n));
        t.CopyLogicalBytes(first, out);
        ASSERT_TRUE(std::equal(out.begin(), out.end(), all.begin() + first))
            << t.Describe() << ": " << n << " bytes from byte " << first;
      }
    }
  }
}

TEST(CopyLogicalBytesTest, RangesOutsideTheValuesAreRefusedBeforeAnythingIsWritten) {
  BufferPool pool;
  const Tensor t = Iota<int32_t>(Shape{2, 3}, pool).Transpose(0, 1);  // 24 bytes
  std::vector<std::byte> out(8, std::byte{0x5A});
  const auto refused = [&](int64_t first, size_t n) {
    try {
      t.CopyLogicalBytes(first, std::span(out).first(n));
      return std::string("nothing thrown");
    } catch (const TensorShapeException& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(refused(-1, 4).find("4 bytes from byte -1 are outside the 24 bytes of INT32"),
            std::string::npos);
  EXPECT_NE(refused(20, 8).find("8 bytes from byte 20"), std::string::npos);  // ends past
  EXPECT_NE(refused(24, 1).find("outside"), std::string::npos);               // starts at end
  EXPECT_NE(refused(int64_t{1} << 62, 8).find("outside"), std::string::npos);
  EXPECT_EQ(out, std::vector<std::byte>(8, std::byte{0x5A}));
  t.CopyLogicalBytes(24, {});  // the empty range at the end is inside

  const Tensor empty = Tensor::Empty(Shape{0, 4}, DType::kFloat, pool);
  empty.CopyLogicalBytes(0, {});
  EXPECT_THROW(empty.CopyLogicalBytes(0, std::span(out).first(1)), TensorShapeException);
}

TEST(CopyLogicalBytesTest, StaleNullAndBlockedTensorsAreRefused) {
  BufferPool pool;
  Tensor x = Iota<float>(Shape{2, 2}, pool);
  const Tensor view = x.Transpose(0, 1);  // not contiguous: no accessor would check it
  std::vector<std::byte> out(4);
  x.Dispose();
  EXPECT_THROW(view.CopyLogicalBytes(0, out), StaleTensorException);
  EXPECT_THROW(view.CopyLogicalBytes(0, {}), StaleTensorException);
  EXPECT_THROW(Tensor().CopyLogicalBytes(0, out), StaleTensorException);

  const Tensor nchw = Iota<float>(Shape{1, 3, 2, 2}, pool);
  const Tensor blocked = nchw.ToLayout(Layout::kBlocked, pool, 4);
  try {
    blocked.CopyLogicalBytes(0, out);
    FAIL() << "a blocked tensor was copied";
  } catch (const TensorLayoutException& e) {
    EXPECT_NE(std::string(e.what()).find("ToLayout(NCHW)"), std::string::npos);
  }
}

// What DownloadTensor does with a 256 MiB tensor: chunk after chunk into one reused buffer,
// with no temporary of the tensor's size (nor any other allocation).
TEST(CopyLogicalBytesTest, A256MiBViewIsCopiedChunkByChunkWithoutAllocating) {
  BufferPool pool;
  Tensor one = Tensor::Empty(Shape{1}, DType::kFloat, pool);
  one.Fill(-1.5f);
  const Tensor view = one.Expand(Shape{64, 1 << 20});
  const int64_t total = view.ElementCount() * 4;
  ASSERT_EQ(total, int64_t{256} << 20);
  // 1 MiB + 3 bytes: most chunks start and end inside an element.
  std::vector<std::byte> chunk((size_t{1} << 20) + 3);
  const PoolStats before = pool.Stats();
  int64_t wrong = 0;
  testing::AllocationCounter counter;
  for (int64_t at = 0; at < total; at += static_cast<int64_t>(chunk.size())) {
    const std::span<std::byte> out =
        std::span(chunk).first(static_cast<size_t>(std::min<int64_t>(total - at, chunk.size())));
    view.CopyLogicalBytes(at, out);
    // The chunk's first whole element.
    const int64_t skip = (4 - at % 4) % 4;
    float v;
    std::memcpy(&v, out.data() + skip, 4);
    wrong += v != -1.5f;
  }
  counter.Stop();
  EXPECT_EQ(counter.count(), 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(pool.Stats().peak_rented_bytes, before.peak_rented_bytes);
}

}  // namespace
}  // namespace onemodel
