#pragma once

// A matrix operator's pass costed by the kernel model (kernel/gemm_model.h): each of its GEMMs
// with tiles and waves over the SMs, the efficiencies fitted on measured GEMMs, and the board
// power of the kernel running steadily, the power limit binding. The analytical roofline
// (pass_model.h) costs what the kernel model does not cover.

#include <optional>
#include <span>
#include <string>

#include "nnergy/analytical/pass_model.h"

namespace nnergy::analytical {

/// Rows, columns or depth below which a product is not tensor-core work (depthwise and
/// narrow-group convolutions run in kernels of their own, bound by memory).
inline constexpr double kMinTensorDimension = 16;

/// The pass `cost` running `gemms` at `point` on `device`, by the kernel model with the shipped
/// fit (kernel::KernelParameters::shipped(), PyTorch's cuBLAS/cuDNN kernels taking the
/// engines' 16-bit fit); nullopt when the kernel model does not cover it: no GEMMs, fp32 or
/// fp64 (CUDA-core work stays with the calibrated roofline), a precision without matrix units on
/// the device, or a product narrower or shallower than kMinTensorDimension. Kernels of the pass
/// beyond its GEMMs (a bias gradient) add the device's launch time each. A convolution's time is
/// scaled by device::Efficiency::convolution_time_scale, a gradient pass's by
/// 1/backward_matrix_efficiency.
std::optional<OpEstimate> kernel_pass(const device::DeviceSpec& device, const graph::PassCost& cost,
                                      const device::OperatingPoint& point,
                                      std::span<const graph::GemmDims> gemms, bool backward);

/// One clause for describe(): which matrix products the kernel model costs and how well its
/// GEMM fit did out of sample.
std::string kernel_pass_description();

}  // namespace nnergy::analytical
