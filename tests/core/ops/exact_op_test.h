// The fixture of the core operation tests that run on the exact (reference) kernels: a pool,
// an OpContext over it, and filled FLOAT tensors.
//
//   class NegTest : public ExactOpTest {};
//   TEST_F(NegTest, Negates) { EXPECT_EQ(ops::Neg(Filled({2}, 1), ctx_).At<float>({0}), -1); }
#pragma once

#include <gtest/gtest.h>

#include "core/autograd/op_context.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"

namespace onemodel {

class ExactOpTest : public ::testing::Test {
 protected:
  // A FLOAT tensor of shape `s` from the pool, every element `v`.
  Tensor Filled(const Shape& s, float v) {
    Tensor t = Tensor::Empty(s, DType::kFloat, pool_);
    t.Fill(v);
    return t;
  }

  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Get(KernelChoice::kExact)};
};

}  // namespace onemodel
