#include "nnergy/graph/normalization_cost.h"

namespace nnergy::graph {

namespace {

// Bytes of the inputs after the data input: scale and bias.
double parameter_bytes(const CostInput& c) {
  double bytes = 0;
  for (std::size_t i = 1; i < c.in.size(); ++i) bytes += c.in_bytes(i);
  return bytes;
}

bool any_parameter_grad(const CostInput& c) {
  for (std::size_t i = 1; i < c.in.size(); ++i) {
    if (c.needs_grad(i)) return true;
  }
  return false;
}

}  // namespace

OpCost instance_norm_cost(const CostInput& c) {
  const double n = c.in_elements(0);
  const double x = c.in_bytes(0);
  const double params = parameter_bytes(c);
  const double affine = c.in.size() > 1 ? 2 : 0;  // repeat of scale and of bias over the batch
  PassCost forward = pass(0, 5 * n, 2 * x + c.out_bytes() + 2 * params, 2 + affine);
  PassCost backward;
  if (c.any_grad()) {
    backward = pass(0, 7 * n, 3 * x + 2 * c.out_bytes() + params, 2);
    if (any_parameter_grad(c)) backward += pass(0, 0, 2 * params, affine);
  }
  OpCost cost = same_forward(OpClass::kNormalization, forward, backward);
  cost.statistics = StatisticsPasses::kAll;
  return cost;
}

OpCost group_norm_cost(const CostInput& c) {
  const double n = c.in_elements(0);
  const double x = c.in_bytes(0);
  const double params = parameter_bytes(c);
  PassCost forward = pass(0, 5 * n, 2 * x + c.out_bytes() + params, 3);
  PassCost backward;
  if (c.any_grad()) {
    // Per-group sums of dY·X and dY, fused coefficients, then dX = a·dY + b·X + c.
    backward = pass(0, 7 * n, 2 * c.out_bytes() + 2 * x + x + params, 3);
    if (any_parameter_grad(c)) backward += pass(0, 2 * n, c.out_bytes() + x + 2 * params, 1);
  }
  OpCost cost = same_forward(OpClass::kNormalization, forward, backward);
  cost.statistics = StatisticsPasses::kAll;
  return cost;
}

OpCost lp_norm_cost(const CostInput& c) {
  const double n = c.in_elements(0);
  const double x = c.in_bytes(0);
  PassCost forward = pass(0, 3 * n, 2 * x + c.out_bytes(), 3);
  PassCost backward;
  // Eight input-sized kernels, each reading about one operand besides its output-sized input
  // and writing one: a rough 3 tensors moved per kernel.
  if (c.any_grad()) backward = pass(0, 8 * n, 8 * 3 * x, 8);
  return same_forward(OpClass::kNormalization, forward, backward);
}

}  // namespace nnergy::graph
