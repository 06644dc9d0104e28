#include "core/tensor/autograd_node.h"

#include <memory>
#include <string>

#include "core/tensor/tensor.h"

namespace onemodel {

Tensor Tensor::WithRequiresGrad() const {
  if (!CanRequireGrad(dtype_)) {
    throw TensorTypeException("WithRequiresGrad: tensor " + Describe() + " holds " +
                              std::string(OnnxName(dtype_)) +
                              " elements; only floating-point tensors can require gradients");
  }
  CheckPlain("WithRequiresGrad");
  return WithAutogradNode(std::make_shared<LeafNode>());
}

}  // namespace onemodel
