// A tensor's link into the gradient graph (spec 8): the node a handle carries.
//
// The tensor layer knows only that a node exists and whether it is a leaf (a
// WithRequiresGrad() handle); core/autograd's BackwardRecord is the other kind of node and
// holds everything the backward engine needs.
#pragma once

namespace onemodel {

class AutogradNode {
 public:
  virtual ~AutogradNode() = default;
  virtual bool IsLeaf() const = 0;
};

// The node of a WithRequiresGrad() handle.
class LeafNode final : public AutogradNode {
 public:
  bool IsLeaf() const override { return true; }
};

}  // namespace onemodel
