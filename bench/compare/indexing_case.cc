// compare_runner's indexing case: an Embedding lookup (ops::Embedding, one memcpy per row) of
// 65536 INT64 token ids into a [32768, 256] FLOAT table (32 MiB), the 64 MiB output returned to
// the pool after each call. Its work is the bytes moved: the rows read, the output written and
// the ids read, for embedding_gather_vs_bandwidth against STREAM copy.
#include <cstdint>
#include <memory>
#include <optional>

#include "bench/compare/cases.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/indexing.h"

namespace onemodel::bench {
namespace {

constexpr int64_t kRows = 32768, kWidth = 256, kIds = 65536;

struct EmbeddingLookup {
  BufferPool pool;
  FastKernels fast{BestTarget()};
  OpContext ctx{pool, fast};
  Tensor table = Tensor::Empty(Shape{kRows, kWidth}, DType::kFloat, pool);
  Tensor ids = Tensor::Empty(Shape{kIds}, DType::kInt64, pool);

  EmbeddingLookup() {
    uint32_t state = 11;
    for (float& v : table.MutableData<float>()) v = static_cast<float>(state++ % 1000);
    for (int64_t& id : ids.MutableData<int64_t>()) {
      state = state * 1664525u + 1013904223u;
      id = (state >> 8) % kRows;
    }
  }
  void Lookup() { ops::Embedding(table, ids, std::nullopt, ctx).Dispose(); }
};

}  // namespace

void AddIndexingCases(CaseRegistry& cases) {
  cases["embedding_64k_x256"] = [] {
    auto e = std::make_shared<EmbeddingLookup>();
    return Case{2.0 * kIds * kWidth * sizeof(float) + kIds * sizeof(int64_t), [e] { e->Lookup(); }};
  };
}

}  // namespace onemodel::bench
