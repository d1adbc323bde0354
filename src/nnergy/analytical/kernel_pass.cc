#include "nnergy/analytical/kernel_pass.h"

#include <algorithm>

#include "nnergy/kernel/gemm_model.h"

namespace nnergy::analytical {

namespace {

using device::Precision;

// The GEMM format PyTorch runs matrix work of `precision` in, where the device has matrix
// units for it.
std::optional<kernel::GemmFormat> tensor_format(const device::DeviceSpec& device,
                                                Precision precision) {
  std::optional<kernel::GemmFormat> format;
  switch (precision) {
    case Precision::kFp16:
    case Precision::kBf16:
      format = kernel::GemmFormat::k16Bit;
      break;
    case Precision::kTf32:
      format = kernel::GemmFormat::kTf32;
      break;
    case Precision::kFp8:
      format = kernel::GemmFormat::kFp8;
      break;
    case Precision::kInt8:
      format = kernel::GemmFormat::kInt8;
      break;
    default:
      return std::nullopt;
  }
  if (!device.has_matrix_units(kernel::units(device, *format))) return std::nullopt;
  return format;
}

// The engine whose fitted kernels stand for PyTorch's: cuBLAS and cuDNN in 16 bits are the
// kernels TensorRT-LLM's tables time (kernel::KernelParameters::gemm_for falls back the same).
constexpr const char* kPytorchEngine = "pytorch";

}  // namespace

std::optional<OpEstimate> kernel_pass(const device::DeviceSpec& device, const graph::PassCost& cost,
                                      const device::OperatingPoint& point,
                                      std::span<const graph::GemmDims> gemms, bool backward) {
  if (gemms.empty()) return std::nullopt;
  const std::optional<kernel::GemmFormat> format = tensor_format(device, point.precision);
  if (!format) return std::nullopt;
  for (const graph::GemmDims& g : gemms) {
    if (g.m < 1 || g.n < kMinTensorDimension || g.k < kMinTensorDimension) return std::nullopt;
  }
  const kernel::KernelParameters& parameters = kernel::KernelParameters::shipped();
  OpEstimate out;
  double largest_s = 0;
  for (const graph::GemmDims& g : gemms) {
    const kernel::KernelEstimate e = kernel::predict_gemm(
        device, {g.m, g.n, g.k, g.batch}, *format, parameters, kPytorchEngine, point.clock_mhz);
    out.time_s += e.time_s;
    out.energy_j += e.energy_j;
    out.power_capped = out.power_capped || e.bound == kernel::Bound::kPowerCap;
    if (e.time_s > largest_s) {
      largest_s = e.time_s;
      out.compute_bound = e.compute_s >= e.memory_s;
    }
  }
  // cuDNN's convolutions against the GEMMs (fitted on whole-network times), and the gradient
  // passes' against the forward's: the time stretches, the board power stays. (Drawing only a
  // stalled kernel's power in the added time fits the measured H100 powers worse: held out by
  // network 14.9 % against 14.1 %.)
  const double scale =
      (gemms.front().convolution ? device.efficiency.convolution_time_scale : 1.0) /
      (backward ? device.efficiency.backward_matrix_efficiency : 1.0);
  out.time_s *= scale;
  out.energy_j *= scale;
  const double other_kernels = std::max(0.0, cost.kernel_count - static_cast<double>(gemms.size()));
  if (other_kernels > 0) {
    const double extra_s = other_kernels * device.efficiency.kernel_overhead_s;
    out.time_s += extra_s;
    out.energy_j += extra_s * device.idle_w;
  }
  out.power_w = out.time_s > 0 ? out.energy_j / out.time_s : 0;
  return out;
}

std::string kernel_pass_description() {
  const kernel::KernelParameters& k = kernel::KernelParameters::shipped();
  return "matrix products in fp16, bf16, tf32, fp8 and int8 on matrix units by nnergy's kernel "
         "model (GEMM tiles and waves over the SMs, board power at the power limit; " +
         (k.accuracy.time.empty() ? std::string("not calibrated on measured kernels")
                                  : k.accuracy.time) +
         ")";
}

}  // namespace nnergy::analytical
