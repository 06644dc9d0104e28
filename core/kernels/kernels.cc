#include "core/kernels/kernels.h"

namespace onemodel {

#define ONEMODEL_OP_NAME(Name) #Name,

std::string_view BinaryOpName(BinaryOp op) {
  static constexpr std::string_view kNames[] = {ONEMODEL_FOR_EACH_BINARY_OP(ONEMODEL_OP_NAME)};
  return kNames[static_cast<int>(op)];
}

std::string_view UnaryOpName(UnaryOp op) {
  static constexpr std::string_view kNames[] = {ONEMODEL_FOR_EACH_UNARY_OP(ONEMODEL_OP_NAME)};
  return kNames[static_cast<int>(op)];
}

#undef ONEMODEL_OP_NAME

}  // namespace onemodel
