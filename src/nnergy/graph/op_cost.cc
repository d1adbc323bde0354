#include "nnergy/graph/op_cost.h"

#include <string>

#include "nnergy/core/error.h"

namespace nnergy::graph {

std::string_view to_string(OpClass op_class) {
  switch (op_class) {
    case OpClass::kMatrix:
      return "matrix";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kNormalization:
      return "normalization";
    case OpClass::kPooling:
      return "pooling";
    case OpClass::kDataMovement:
      return "data-movement";
    case OpClass::kView:
      return "view";
    case OpClass::kShape:
      return "shape";
    case OpClass::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::kGemm:
      return "gemm";
    case MatrixKind::kConv3x3:
      return "conv3x3";
    case MatrixKind::kGroupedConv:
      return "grouped-conv";
  }
  return "gemm";
}

OpClass parse_op_class(std::string_view name, std::string_view where) {
  for (const OpClass op_class :
       {OpClass::kMatrix, OpClass::kElementwise, OpClass::kNormalization, OpClass::kPooling,
        OpClass::kDataMovement, OpClass::kView, OpClass::kShape, OpClass::kUnknown}) {
    if (to_string(op_class) == name) return op_class;
  }
  throw InvalidInput(std::string(where) + ": unknown op class '" + std::string(name) +
                     "'; accepted: matrix, elementwise, normalization, pooling, data-movement, "
                     "view, shape, unknown");
}

PassCost& PassCost::operator+=(const PassCost& other) {
  mac_count += other.mac_count;
  flop_count += other.flop_count;
  byte_count += other.byte_count;
  kernel_count += other.kernel_count;
  return *this;
}

PassCost operator+(PassCost a, const PassCost& b) { return a += b; }

PassCost operator*(PassCost a, double factor) {
  a.mac_count *= factor;
  a.flop_count *= factor;
  a.byte_count *= factor;
  a.kernel_count *= factor;
  return a;
}

}  // namespace nnergy::graph
