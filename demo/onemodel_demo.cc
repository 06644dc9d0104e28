// A short tour of the tensor core: pool, arena, views, layouts, conversions, statistics.
// Run with scripts/start (until the onemodeld server exists).
#include <cstdio>

#include "core/autograd/engine.h"
#include "core/convert/half.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/elementwise.h"
#include "core/ops/linear.h"
#include "core/ops/reduce.h"
#include "core/tensor/tensor.h"

using namespace onemodel;

int main() {
  BufferPool pool;
  Arena arena(pool);

  // A 2x3 float tensor in the pool, filled element by element.
  Tensor x = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) x.Set<float>({i, j}, static_cast<float>(10 * i + j));
  }
  std::printf("x            %s, version %llu\n", x.Describe().c_str(),
              static_cast<unsigned long long>(x.version()));

  // Views move no data: a transpose, a reversed slice, a reshape of the transpose (a copy,
  // because no strides express it) made in the arena.
  Tensor t = x.Transpose(0, 1);
  Tensor r = x.Slice(1, -1, -4, -1);
  Tensor flat = t.Reshape({6}, arena);
  std::printf("transpose    %s\n", t.Describe().c_str());
  std::printf("reversed     %s: %g %g %g\n", r.Describe().c_str(), r.At<float>({0, 0}),
              r.At<float>({0, 1}), r.At<float>({0, 2}));
  std::printf("reshape(t)   %s:", flat.Describe().c_str());
  for (float v : flat.Data<float>()) std::printf(" %g", v);
  std::printf("\n");

  // An image tensor in NHWC and channel-blocked layouts: same logical (N, C, H, W) values.
  Tensor img = Tensor::Empty(Shape{1, 3, 2, 2}, DType::kFloat, arena);
  float k = 0;
  for (float& v : img.MutableData<float>()) v = k++;
  Tensor nhwc = img.ToLayout(Layout::kNhwc, arena);
  Tensor blocked = img.ToLayout(Layout::kBlocked, arena, /*block=*/4);
  std::printf("image        %s -> %s (%s), blocked span %zu elements\n",
              std::string(LayoutName(img.layout())).c_str(), nhwc.Describe().c_str(),
              std::string(LayoutName(nhwc.layout())).c_str(), blocked.Data<float>().size());

  // Spec 10's conversions: 65519.99 rounds to the largest half, 65520 overflows to infinity.
  std::printf("float->half  65519.99 -> 0x%04x, 65520 -> 0x%04x, 1/3 -> bf16 0x%04x\n",
              FloatToHalfBits(65519.99f), FloatToHalfBits(65520.0f), FloatToBFloat16Bits(1.0f / 3));

  // Eager operations with autograd on the fast kernels: loss = mean(relu(x @ w)), d loss / d w.
  const OpContext ctx{arena, KernelSet::Default()};
  Tensor w = Tensor::Empty(Shape{3, 2}, DType::kFloat, pool);
  w.Fill(0.5f);
  w = w.WithRequiresGrad();
  const Tensor loss = ops::Mean(ops::Relu(ops::MatMul(x, w, ctx), ctx), {}, false, ctx);
  const std::vector<Tensor> grads = Backward(loss, nullptr, std::vector<Tensor>{w}, ctx);
  std::printf("kernels      %s: loss %g, dloss/dw[0][0] %g\n",
              std::string(KernelSet::Default().name()).c_str(), loss.At<float>({}),
              grads[0].At<float>({0, 0}));

  // Lifetimes: resetting the arena makes its tensors stale; disposing x makes t stale.
  arena.Reset();
  x.Dispose();
  std::printf("stale        nhwc %s, transpose %s\n", nhwc.IsStale() ? "yes" : "no",
              t.IsStale() ? "yes" : "no");
  try {
    (void)t.At<float>({0, 0});
  } catch (const StaleTensorException& e) {
    std::printf("             %s\n", e.what());
  }

  const PoolStats ps = pool.Stats();
  const ArenaStats as = arena.Stats();
  std::printf("pool         rented %lld B, idle %lld B, peak %lld B, hits %lld, misses %lld\n",
              static_cast<long long>(ps.rented_bytes), static_cast<long long>(ps.idle_bytes),
              static_cast<long long>(ps.peak_rented_bytes), static_cast<long long>(ps.hits),
              static_cast<long long>(ps.misses));
  std::printf("arena        %lld chunk(s), %lld B reserved, peak %lld B used, %lld resets\n",
              static_cast<long long>(as.chunks), static_cast<long long>(as.reserved_bytes),
              static_cast<long long>(as.peak_used_bytes), static_cast<long long>(as.resets));
}
