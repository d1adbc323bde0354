#include "nnergy/graph/op_cost.h"

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

PassCost& PassCost::operator+=(const PassCost& other) {
  macs += other.macs;
  flops += other.flops;
  bytes += other.bytes;
  kernels += other.kernels;
  return *this;
}

PassCost operator+(PassCost a, const PassCost& b) { return a += b; }

PassCost operator*(PassCost a, double factor) {
  a.macs *= factor;
  a.flops *= factor;
  a.bytes *= factor;
  a.kernels *= factor;
  return a;
}

}  // namespace nnergy::graph
