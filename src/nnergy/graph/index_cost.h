#pragma once

// Internal to nnergy::graph: costs of the operators that select or place elements by index or
// by value: ArgMax/ArgMin, TopK, NonZero, Compress, OneHot, Hardmax, MaxUnpool.

#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

/// ArgMax, ArgMin: one comparison per input element, one kernel; no gradient.
OpCost arg_reduction_cost(const CostInput& c);

/// TopK as PyTorch's radix select: one pass per 8-bit digit of the element type (one
/// comparison per element each), then a gather of the k results and their sort. Backward
/// scatters the values' gradient into a zero-filled input gradient (two kernels).
OpCost top_k_cost(const CostInput& c);

/// NonZero: a count pass, a select pass and the conversion of flat indices to coordinates (one
/// comparison per element; about four kernels with the count and scan). No gradient.
OpCost non_zero_cost(const CostInput& c);

/// Compress: NonZero over the condition, then a gather of the selected slices. Backward
/// scatters the gradient into a zero-filled input gradient.
OpCost compress_cost(const CostInput& c);

/// OneHot (F.one_hot): zero-fill of the output and a scatter of the ones: two kernels, no flops.
OpCost one_hot_cost(const CostInput& c);

/// Hardmax: argmax along the axis (one comparison per element), zero-fill and scatter of the
/// one-hot output: three kernels. No gradient.
OpCost hardmax_cost(const CostInput& c);

/// MaxUnpool: zero-fill of the output and a scatter of the input to its indices; backward is
/// one gather of the output gradient at the indices.
OpCost max_unpool_cost(const CostInput& c);

}  // namespace nnergy::graph
