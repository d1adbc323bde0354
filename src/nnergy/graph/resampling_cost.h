#pragma once

// Internal to nnergy::graph: costs of the operators that resample a tensor by interpolation:
// Resize and Upsample, GridSample, RoiAlign.

#include <string>

#include "nnergy/graph/cost_input.h"

namespace nnergy::graph {

/// Input elements one output element interpolates from: 1 for "nearest", 2^k for "linear"
/// (also "bilinear", "trilinear"), 4^k for "cubic" (also "bicubic"), k = `axes` interpolated
/// axes. Throws InvalidInput naming the node for another mode.
double interpolation_taps(const CostInput& c, const std::string& mode, std::size_t axes);

/// Resize and Upsample: the copy of the data input plus 2·taps − 1 flops per output element
/// (a weighted sum of the taps; 0 for nearest), counting as interpolated the axes whose size
/// changes. Data movement.
OpCost resize_cost(const CostInput& c);

/// GridSample: 2·taps − 1 flops per output element (0 for nearest) plus 4 flops per grid coordinate
/// (unnormalize, floor, weights). Data movement.
OpCost grid_sample_cost(const CostInput& c);

/// RoiAlign: per output element, sampling_ratio² bilinear samples (attribute 0, adaptive, is
/// taken as 2) of 12 flops each (4 taps weighted and summed, the weights, the average).
/// Pooling.
OpCost roi_align_cost(const CostInput& c);

}  // namespace nnergy::graph
