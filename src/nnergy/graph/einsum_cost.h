#pragma once

// Internal to nnergy::graph: the cost of Einsum.

#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

/// Einsum: binds the letters of the `equation` attribute (explicit "->" or implicit output,
/// "..." for broadcast dimensions) to the input shapes. With two or more operands, contracted
/// pairwise from left to right as torch.einsum does, each contraction costs the product of the
/// sizes of the distinct letters of its two operands in MACs (kMatrix when a letter shared by
/// both is summed, else kElementwise with one multiply per point); one operand (transpose,
/// trace, sum) is data movement with one flop per input element. Backward: one contraction of
/// the forward MACs per input that needs a gradient. Throws InvalidInput naming the node and
/// the equation when the equation is malformed or does not fit the shapes.
OpCost einsum_cost(const CostInput& c);

}  // namespace nnergy::graph
