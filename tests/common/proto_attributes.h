// Operation attributes of the wire contract (onemodel.v1.Attribute), one line each, for tests
// and corpus generators that build Run requests by hand.
//
//   (*op.mutable_attributes())["axis"] = IntAttr(-1);
//   (*op.mutable_attributes())["kernel_shape"] = IntsAttr({3, 3});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onemodel/v1/onemodel.pb.h"

namespace onemodel::testing {

// An attribute holding the integer `i`.
inline v1::Attribute IntAttr(int64_t i) {
  v1::Attribute a;
  a.set_i(i);
  return a;
}
// An attribute holding the float `f`.
inline v1::Attribute FloatAttr(float f) {
  v1::Attribute a;
  a.set_f(f);
  return a;
}
// An attribute holding the string `s`.
inline v1::Attribute StringAttr(std::string s) {
  v1::Attribute a;
  a.set_s(std::move(s));
  return a;
}
// An attribute holding the list of integers `values`.
inline v1::Attribute IntsAttr(const std::vector<int64_t>& values) {
  v1::Attribute a;
  a.mutable_ints()->mutable_values()->Add(values.begin(), values.end());
  return a;
}

}  // namespace onemodel::testing
