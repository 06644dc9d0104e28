// Measures the maximum ULP error of every fast unary kernel against the reference over all
// 2^32 float inputs (NaN inputs included: a NaN must stay NaN). A one-off program, not a
// test: it takes minutes. Results go into docs/kernels.md.
//   build/release/bench/ulp_sweep [op ...]
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/kernels/accuracy.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/reference_kernels.h"
#include "core/memory/buffer_pool.h"

using namespace onemodel;

int main(int argc, char** argv) {
  constexpr int64_t kChunk = int64_t{1} << 22;
  BufferPool pool;
  Tensor x = Tensor::Empty(Shape{kChunk}, DType::kFloat, pool);
  Tensor ref = Tensor::Empty(Shape{kChunk}, DType::kFloat, pool);
  Tensor fast = Tensor::Empty(Shape{kChunk}, DType::kFloat, pool);
  ReferenceKernels reference;
  std::vector<FastKernels> variants;
  for (SimdTarget t : CompiledTargets()) {
    if (TargetSupported(t)) variants.emplace_back(t);
  }
  std::printf("%-8s %-12s %10s %14s %14s %12s\n", "op", "variant", "max ulp", "worst input", "fast",
              "reference");
  for (UnaryOp op : kAllUnaryOps) {
    if (argc > 1 && std::find_if(argv + 1, argv + argc, [&](const char* a) {
                      return UnaryOpName(op) == std::string_view(a);
                    }) == argv + argc) {
      continue;
    }
    std::vector<int64_t> worst(variants.size(), 0);
    std::vector<float> worst_x(variants.size(), 0), worst_fast(variants.size(), 0),
        worst_ref(variants.size(), 0);
    std::vector<int64_t> failures(variants.size(), 0);
    for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kChunk) {
      auto xs = x.MutableData<float>();
      for (int64_t i = 0; i < kChunk; ++i) {
        const uint32_t bits = static_cast<uint32_t>(base + static_cast<uint64_t>(i));
        std::memcpy(&xs[static_cast<size_t>(i)], &bits, 4);
      }
      reference.Unary(op, x, ref);
      const auto r = ref.Data<float>();
      for (size_t v = 0; v < variants.size(); ++v) {
        variants[v].Unary(op, x, fast);
        const auto f = fast.Data<float>();
        const auto in = x.Data<float>();
        for (int64_t i = 0; i < kChunk; ++i) {
          const size_t k = static_cast<size_t>(i);
          const int64_t u = UlpDistance(f[k], r[k]);
          if (!WithinAccuracy(op, in[k], f[k], r[k])) ++failures[v];
          if (u > worst[v]) {
            worst[v] = u;
            worst_x[v] = in[k];
            worst_fast[v] = f[k];
            worst_ref[v] = r[k];
          }
        }
      }
    }
    for (size_t v = 0; v < variants.size(); ++v) {
      std::printf("%-8s %-12s %10" PRId64 " %14.8g %14.8g %12.8g  outside bound: %" PRId64 "\n",
                  std::string(UnaryOpName(op)).c_str(), std::string(variants[v].name()).c_str(),
                  worst[v], worst_x[v], worst_fast[v], worst_ref[v], failures[v]);
    }
    std::fflush(stdout);
  }
}
