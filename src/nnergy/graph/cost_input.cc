#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

PassCost pass(double macs, double flops, double bytes, double kernels) {
  return PassCost{macs, flops, bytes, kernels};
}

OpCost same_forward(OpClass op_class, PassCost forward, PassCost backward) {
  OpCost cost;
  cost.op_class = op_class;
  cost.known = true;
  cost.inference = forward;
  cost.training_forward = forward;
  cost.backward = backward;
  return cost;
}

OpCost no_cost(OpClass op_class) {
  OpCost cost;
  cost.op_class = op_class;
  cost.known = true;
  return cost;
}

double product(const Shape& shape, std::size_t from) {
  double p = 1;
  for (std::size_t i = from; i < shape.size(); ++i) p *= static_cast<double>(shape[i]);
  return p;
}

bool is_broadcast_input(const CostInput& c, std::size_t i) {
  return i < c.in.size() && !c.out.empty() && c.in[i]->shape != c.out[0]->shape;
}

PassCost broadcast_gradient_reduction(const CostInput& c, std::size_t i) {
  if (!is_broadcast_input(c, i)) return PassCost{};
  const double n_out = static_cast<double>(c.out[0]->elements());
  return pass(0, n_out, c.out[0]->bytes() + c.in_bytes(i), 1);
}

}  // namespace nnergy::graph
