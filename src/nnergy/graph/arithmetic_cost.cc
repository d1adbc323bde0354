#include "nnergy/graph/arithmetic_cost.h"

namespace nnergy::graph {

namespace {

// Forward of every binary arithmetic operator: one flop per output element, one kernel reading
// both operands and writing the output.
PassCost binary_forward(const CostInput& c) {
  return pass(0, c.out_elements(), c.all_in_bytes() + c.out_bytes(), 1);
}

// `kernels` pointwise kernels over the output shape that together read `operand_bytes` besides
// their output-sized operands, `reads_of_output_size` output-sized tensors in all, and write one
// output-sized tensor each.
PassCost output_sized_kernels(const CostInput& c, double kernels, double reads_of_output_size,
                              double operand_bytes) {
  const double n = static_cast<double>(c.out[0]->elements());
  const double y = c.out[0]->bytes();
  return pass(0, kernels * n, (reads_of_output_size + kernels) * y + operand_bytes, kernels);
}

// The gradient of input i: `own` (the pointwise work autograd's formula launches for it, empty
// when the incoming gradient is passed through) plus the reduction of a broadcast input.
PassCost input_gradient(const CostInput& c, std::size_t i, const PassCost& own) {
  if (!c.needs_grad(i)) return PassCost{};
  return own + broadcast_gradient_reduction(c, i);
}

}  // namespace

OpCost add_cost(const CostInput& c) {
  PassCost backward;
  for (std::size_t i = 0; i < c.in.size() && i < 2; ++i) backward += input_gradient(c, i, {});
  return same_forward(OpClass::kElementwise, binary_forward(c), backward);
}

OpCost sub_cost(const CostInput& c) {
  PassCost backward = input_gradient(c, 0, {});
  if (c.in.size() > 1 && !c.out.empty()) {
    // SubBackward: other's gradient is −dY, a negation kernel over the output shape.
    backward += input_gradient(c, 1, output_sized_kernels(c, 1, 1, 0));
  }
  return same_forward(OpClass::kElementwise, binary_forward(c), backward);
}

OpCost mul_cost(const CostInput& c) {
  PassCost backward;
  if (c.in.size() > 1 && !c.out.empty()) {
    // MulBackward: dA = dY·B and dB = dY·A, each one kernel reading dY and the other operand.
    backward += input_gradient(c, 0, output_sized_kernels(c, 1, 1, c.in_bytes(1)));
    backward += input_gradient(c, 1, output_sized_kernels(c, 1, 1, c.in_bytes(0)));
  }
  return same_forward(OpClass::kElementwise, binary_forward(c), backward);
}

OpCost div_cost(const CostInput& c) {
  PassCost backward;
  if (c.in.size() > 1 && !c.out.empty()) {
    // DivBackward: dA = dY/B (one kernel); dB = −dY·((A/B)/B): neg, div, div, mul — four
    // kernels reading dY once, A once, B twice and their own output-sized intermediates (3).
    backward += input_gradient(c, 0, output_sized_kernels(c, 1, 1, c.in_bytes(1)));
    backward +=
        input_gradient(c, 1, output_sized_kernels(c, 4, 4, c.in_bytes(0) + 2 * c.in_bytes(1)));
  }
  return same_forward(OpClass::kElementwise, binary_forward(c), backward);
}

}  // namespace nnergy::graph
