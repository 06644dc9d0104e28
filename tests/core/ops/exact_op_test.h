// The fixture of the core operation tests that run on the exact (reference) kernels: a pool,
// an OpContext over it, FLOAT tensors from values and back, and a gradient by the engine. The
// free functions serve fixtures on other kernels.
//
//   class NegTest : public ExactOpTest {};
//   TEST_F(NegTest, Negates) { EXPECT_EQ(Values(ops::Neg(Vec({1, 2}, {2}), ctx_)),
//                                        (std::vector<float>{-1, -2})); }
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "core/autograd/engine.h"
#include "core/autograd/op_context.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"

namespace onemodel {
namespace ops_test {

// A contiguous FLOAT tensor of shape `s` holding `v` in row-major order.
inline Tensor FloatTensor(const std::vector<float>& v, const Shape& s, Allocator& a) {
  Tensor t = Tensor::Empty(s, DType::kFloat, a);
  std::copy(v.begin(), v.end(), t.MutableData<float>().begin());
  return t;
}

// The elements of a FLOAT or BOOL tensor (as 0 / 1) in row-major order, any strides.
inline std::vector<float> FloatValues(const Tensor& t, Allocator& a) {
  const Tensor c = t.Contiguous(a);
  if (c.dtype() == DType::kBool) {
    std::vector<float> v;
    for (std::byte b : c.RawData()) v.push_back(b != std::byte{0} ? 1.0f : 0.0f);
    return v;
  }
  return {c.Data<float>().begin(), c.Data<float>().end()};
}

}  // namespace ops_test

class ExactOpTest : public ::testing::Test {
 protected:
  // A FLOAT tensor of shape `s` from the pool, every element `v`.
  Tensor Filled(const Shape& s, float v) {
    Tensor t = Tensor::Empty(s, DType::kFloat, pool_);
    t.Fill(v);
    return t;
  }

  Tensor Vec(const std::vector<float>& v, const Shape& s) {
    return ops_test::FloatTensor(v, s, pool_);
  }
  std::vector<float> Values(const Tensor& t) { return ops_test::FloatValues(t, pool_); }
  // The gradient by x of sum(y * g) for y = f(x) and g = 1, 2, 3, ... (row-major).
  std::vector<float> GradOf(const Tensor& x, const std::function<Tensor(const Tensor&)>& f) {
    const Tensor tracked = x.WithRequiresGrad();
    const Tensor y = f(tracked);
    std::vector<float> g(static_cast<size_t>(y.ElementCount()));
    for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i + 1);
    const Tensor gt = Vec(g, y.shape());
    const std::vector<Tensor> wrt = {tracked};
    return Values(Backward(y, &gt, wrt, ctx_)[0]);
  }

  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Get(KernelChoice::kExact)};
};

}  // namespace onemodel
