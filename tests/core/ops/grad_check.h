// Gradient checks for the operations: analytic gradients from the backward engine against
// central finite differences of L = sum(g * f(inputs)) accumulated in double.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "core/autograd/engine.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/grad_mode.h"
#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel::ops_test {

using Fn = std::function<Tensor(const std::vector<Tensor>&, const OpContext&)>;

// A FLOAT tensor of `shape` with values uniform in [lo, hi].
inline Tensor Random(const Shape& shape, std::mt19937& rng, Allocator& a, float lo = -2,
                     float hi = 2) {
  Tensor t = Tensor::Empty(shape, DType::kFloat, a);
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.MutableData<float>()) v = d(rng);
  return t;
}

// sum(g * y) in double over every element (any strides).
inline double Dot(const Tensor& g, const Tensor& y) {
  double s = 0;
  tensor_test::ForEachIndex(y.shape(), [&](std::span<const int64_t> i) {
    s += double{g.At<float>(i)} * double{y.At<float>(i)};
  });
  return s;
}

// Checks every input's gradient element against central differences with step h.
inline void ExpectGradientsMatch(const char* what, const Fn& f, std::vector<Tensor> inputs,
                                 const OpContext& ctx, std::mt19937& rng, double h = 1e-2,
                                 double tolerance = 2e-2) {
  for (Tensor& in : inputs) in = in.WithRequiresGrad();
  const Tensor y = f(inputs, ctx);
  const Tensor g = Random(y.shape(), rng, ctx.allocator, -1, 1);
  const std::vector<Tensor> analytic = Backward(y, &g, inputs, ctx);
  NoGrad no_grad;
  for (size_t k = 0; k < inputs.size(); ++k) {
    ASSERT_EQ(analytic[k].shape(), inputs[k].shape()) << what << " input " << k;
    tensor_test::ForEachIndex(inputs[k].shape(), [&](std::span<const int64_t> i) {
      Tensor x = inputs[k].Detach();
      const float original = x.At<float>(i);
      auto loss_at = [&](float v) {
        x.Set<float>(i, v);
        std::vector<Tensor> plain;
        for (const Tensor& in : inputs) plain.push_back(in.Detach());
        return Dot(g, f(plain, ctx));
      };
      const double step = h * std::fmax(1.0, std::fabs(original));
      const double numeric = (loss_at(original + static_cast<float>(step)) -
                              loss_at(original - static_cast<float>(step))) /
                             (static_cast<double>(static_cast<float>(original + step)) -
                              static_cast<double>(static_cast<float>(original - step)));
      x.Set<float>(i, original);
      const double got = analytic[k].At<float>(i);
      EXPECT_NEAR(got, numeric, tolerance * std::fmax(1.0, std::fabs(numeric)))
          << what << ": input " << k << " element " << FormatExtents(i);
    });
  }
}

}  // namespace onemodel::ops_test
