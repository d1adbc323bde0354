#pragma once

// Internal to nnergy::graph: costs of the binary arithmetic operators Add, Sub, Mul, Div, whose
// backward passes follow what PyTorch autograd launches.

#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

/// Add: one flop per output element. Backward: an input with the output's shape receives the
/// incoming gradient itself (AddBackward returns it: no kernel, no traffic); a broadcast input
/// that needs a gradient costs one reduction over the broadcast axes.
OpCost add_cost(const CostInput& c);

/// Sub: as Add, plus one negation kernel (output-sized) for the second input's gradient.
OpCost sub_cost(const CostInput& c);

/// Mul: one flop per output element. Backward: one multiply kernel (dY·other) per input that
/// needs a gradient, plus a reduction for a broadcast input.
OpCost mul_cost(const CostInput& c);

/// Div: one flop per output element. Backward: dY/B for the dividend (one kernel); for the
/// divisor −dY·((A/B)/B), four output-sized kernels; plus a reduction for a broadcast input.
OpCost div_cost(const CostInput& c);

}  // namespace nnergy::graph
