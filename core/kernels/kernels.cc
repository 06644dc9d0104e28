#include "core/kernels/kernels.h"

namespace onemodel {

std::string_view BinaryOpName(BinaryOp op) {
  static constexpr std::string_view kNames[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
  return kNames[static_cast<int>(op)];
}

std::string_view UnaryOpName(UnaryOp op) {
  static constexpr std::string_view kNames[] = {"Neg",  "Abs",     "Exp",  "Log", "Sqrt",
                                                "Relu", "Sigmoid", "Tanh", "Gelu"};
  return kNames[static_cast<int>(op)];
}

}  // namespace onemodel
