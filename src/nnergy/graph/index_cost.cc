#include "nnergy/graph/index_cost.h"

#include "nnergy/graph/data_type.h"

namespace nnergy::graph {

OpCost arg_reduction_cost(const CostInput& c) {
  return same_forward(OpClass::kPooling,
                      pass(0, c.in_elements(0), c.in_bytes(0) + c.out_bytes(), 1), PassCost{});
}

OpCost top_k_cost(const CostInput& c) {
  const double n = c.in_elements(0);
  const double digit_passes =
      c.in.empty() ? 1.0 : static_cast<double>(bytes_per_element(c.in[0]->dtype));
  PassCost forward =
      pass(0, digit_passes * n, digit_passes * c.in_bytes(0) + c.out_bytes(), digit_passes + 2);
  PassCost backward;
  if (c.needs_grad(0)) {
    // Zero-fill dX, then scatter dValues through the saved indices (the second output).
    const double values = c.out.empty() ? 0.0 : c.out[0]->bytes();
    backward = pass(0, 0, c.in_bytes(0) + c.out_bytes() + values, 2);
  }
  return same_forward(OpClass::kPooling, forward, backward);
}

OpCost non_zero_cost(const CostInput& c) {
  return same_forward(OpClass::kDataMovement,
                      pass(0, c.in_elements(0), 2 * c.in_bytes(0) + c.out_bytes(), 4), PassCost{});
}

OpCost compress_cost(const CostInput& c) {
  const double condition = c.in_bytes(1);
  // NonZero over the condition (3 kernels with its count), then one gather of the output.
  PassCost forward = pass(0, c.in_elements(1), 2 * condition + 2 * c.out_bytes(), 4);
  PassCost backward;
  if (c.needs_grad(0)) backward = pass(0, c.out_elements(), c.out_bytes() + 2 * c.in_bytes(0), 2);
  return same_forward(OpClass::kDataMovement, forward, backward);
}

OpCost one_hot_cost(const CostInput& c) {
  // Zero-fill of the output, then one value written per index read.
  const double value_bytes =
      c.out.empty() ? 0.0 : static_cast<double>(bytes_per_element(c.out[0]->dtype));
  return same_forward(OpClass::kDataMovement,
                      pass(0, 0, c.out_bytes() + c.in_bytes(0) + c.in_elements(0) * value_bytes, 2),
                      PassCost{});
}

OpCost hardmax_cost(const CostInput& c) {
  return same_forward(OpClass::kNormalization,
                      pass(0, c.in_elements(0), c.in_bytes(0) + c.out_bytes(), 3), PassCost{});
}

OpCost max_unpool_cost(const CostInput& c) {
  const double x = c.in_bytes(0);
  const double indices = c.in_bytes(1);
  PassCost forward = pass(0, 0, c.out_bytes() + x + indices + x, 2);
  PassCost backward;
  if (c.needs_grad(0)) backward = pass(0, 0, indices + 2 * x, 1);
  return same_forward(OpClass::kDataMovement, forward, backward);
}

}  // namespace nnergy::graph
