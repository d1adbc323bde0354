#include "nnergy/graph/resampling_cost.h"

#include <cmath>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy::graph {

namespace {

// Backward of an interpolating gather: the input gradient is zero-filled, then every output
// gradient is spread onto its taps with one multiply-add each (two kernels). Nearest-neighbour
// backward is a single gather-style kernel that sums the gradients mapping to each input.
PassCost interpolation_backward(const CostInput& c, double taps, double extra_bytes) {
  const double n_out = c.out_elements();
  if (taps == 1) return pass(0, n_out, c.out_bytes() + c.in_bytes(0) + extra_bytes, 1);
  return pass(0, 2 * taps * n_out, c.out_bytes() + 2 * c.in_bytes(0) + extra_bytes, 2);
}

// Flops of a weighted sum of `taps` inputs: taps products and taps − 1 additions; a single
// nearest-neighbour tap is a copy.
double weighted_sum_flops(double taps) { return taps == 1 ? 0.0 : 2 * taps - 1; }

}  // namespace

double interpolation_taps(const CostInput& c, const std::string& mode, std::size_t axes) {
  const double k = static_cast<double>(axes);
  if (mode == "nearest") return 1;
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear") return std::pow(2.0, k);
  if (mode == "cubic" || mode == "bicubic") return std::pow(4.0, k);
  throw InvalidInput("node '" + c.node.name + "' (" + c.node.op_type + "): mode '" + mode +
                     "'; expected nearest, linear or cubic");
}

OpCost resize_cost(const CostInput& c) {
  if (c.in.empty() || c.out.empty()) return no_cost(OpClass::kDataMovement);
  const Shape& in = c.in[0]->shape;
  const Shape& out = c.out[0]->shape;
  std::size_t axes = 0;
  for (std::size_t i = 0; i < in.size() && i < out.size(); ++i) axes += in[i] != out[i] ? 1 : 0;
  const double taps = interpolation_taps(c, c.node.string_attribute("mode", "nearest"), axes);
  const double n_out = c.out_elements();
  // Only the data input is read; roi, scales and sizes are a few constants.
  PassCost forward = pass(0, weighted_sum_flops(taps) * n_out, c.in_bytes(0) + c.out_bytes(), 1);
  PassCost backward;
  if (c.needs_grad(0)) backward = interpolation_backward(c, taps, 0);
  return same_forward(OpClass::kDataMovement, forward, backward);
}

OpCost grid_sample_cost(const CostInput& c) {
  if (c.in.size() < 2 || c.out.empty()) {
    throw InvalidInput("node '" + c.node.name + "' (GridSample): expected inputs X and grid");
  }
  const std::size_t spatial = c.in[0]->shape.size() > 2 ? c.in[0]->shape.size() - 2 : 0;
  const double taps = interpolation_taps(c, c.node.string_attribute("mode", "bilinear"), spatial);
  const double n_out = c.out_elements();
  const double coordinate_flops = 4 * c.in_elements(1);
  PassCost forward = pass(0, weighted_sum_flops(taps) * n_out + coordinate_flops,
                          c.all_in_bytes() + c.out_bytes(), 1);
  PassCost backward;
  if (c.any_grad()) {
    // One kernel computes dX (zero-filled first) and dgrid: twice the forward's weighted sums.
    backward = interpolation_backward(c, taps, c.in_bytes(1) + c.grad_in_bytes());
    backward.flop_count += coordinate_flops;
  }
  return same_forward(OpClass::kDataMovement, forward, backward);
}

OpCost roi_align_cost(const CostInput& c) {
  std::int64_t ratio = c.node.int_attribute("sampling_ratio", 0);
  if (ratio <= 0) ratio = 2;  // adaptive: ceil(roi size / output size), unknown before running
  const double samples = static_cast<double>(ratio * ratio);
  const double n_out = c.out_elements();
  PassCost forward = pass(0, 12 * samples * n_out, c.all_in_bytes() + c.out_bytes(), 1);
  PassCost backward;
  if (c.needs_grad(0)) {
    // Zero-fill of dX, then atomic adds of each sample's 4 weighted taps.
    backward = pass(0, 8 * samples * n_out, c.out_bytes() + 2 * c.in_bytes(0) + c.in_bytes(1), 2);
  }
  return same_forward(OpClass::kPooling, forward, backward);
}

}  // namespace nnergy::graph
