#include "core/kernels/maxpool.h"

namespace onemodel::internal {

void MaxPool2dFast(SimdTarget, ThreadPool&, const Tensor& x, const MaxPool2dParams& p, Tensor& out,
                   Tensor* indices) {
  MaxPool2dReference(x, p, out, indices);
}

}  // namespace onemodel::internal
