#pragma once

// Internal to nnergy::graph: costs of InstanceNormalization, GroupNormalization and
// LpNormalization, with kernels as eager PyTorch launches them.

#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

/// InstanceNormalization: always normalizes with the statistics of the input (PyTorch runs it
/// as a training-mode batch norm over N·C channels): 5 flops per element in two kernels, plus
/// two kernels repeating scale and bias; backward 7 flops per element in two kernels plus two
/// reductions of the repeated scale and bias gradients.
OpCost instance_norm_cost(const CostInput& c);

/// GroupNormalization: moments (3 flops per element), fused parameters, then a·x + b
/// (2 flops): three kernels; backward 7 flops per element in three kernels plus one for the
/// scale and bias gradients.
OpCost group_norm_cost(const CostInput& c);

/// LpNormalization (F.normalize): the p-norm along the axis (2 flops per element), a clamp on
/// the norms, a division (1 flop): three kernels; backward about 8 flops per element in eight
/// kernels (autograd of the division and of the norm).
OpCost lp_norm_cost(const CostInput& c);

}  // namespace nnergy::graph
