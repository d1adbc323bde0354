#include "nnergy/analytical/pass_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/analytical/kernel_pass.h"
#include "nnergy/core/error.h"

namespace nnergy::analytical {

namespace {

using device::Precision;

// Below this fraction of the boost clock the SMs cannot keep DRAM saturated.
constexpr double kMemorySaturationClockRatio = 0.5;

}  // namespace

PassTraits PassTraits::of(const graph::OpCost& cost, graph::Mode mode, bool backward) {
  const bool statistics =
      cost.statistics == graph::StatisticsPasses::kAll ||
      (cost.statistics == graph::StatisticsPasses::kTraining && mode == graph::Mode::kTraining);
  return {cost.reduction_length, cost.matrix_kind, backward, statistics,
          backward ? cost.backward_gemms : cost.forward_gemms};
}

Precision units_of(graph::OpClass op_class, Precision precision) {
  if (op_class == graph::OpClass::kMatrix) return precision;
  return precision == Precision::kFp64 ? Precision::kFp64 : Precision::kFp32;
}

std::string describe(const device::DeviceSpec& device) {
  const device::Efficiency& e = device.efficiency;
  const std::string tensor =
      e.tensor ? fmt::format(", tensor cores {:.0f} %", *e.tensor * 100) : std::string();
  std::string regimes;
  if (e.winograd_speedup != 1)
    regimes +=
        fmt::format(", 3x3 convolutions x{:.2f} on CUDA cores (Winograd)", e.winograd_speedup);
  if (e.grouped_conv_efficiency != 1)
    regimes += fmt::format(", grouped convolutions x{:.2f}", e.grouped_conv_efficiency);
  if (e.backward_matrix_efficiency != 1)
    regimes += fmt::format(", gradient passes x{:.2f}", e.backward_matrix_efficiency);
  if (e.statistics_memory_efficiency != 1)
    regimes += fmt::format(", normalization statistics x{:.2f} of the bandwidth",
                           e.statistics_memory_efficiency);
  const std::string calibration =
      device.calibration.provenance.empty()
          ? "not calibrated on measurements (the catalog's estimated efficiencies)"
          : fmt::format("{}; whole-network times ±{:.0f} % (1σ, leave-one-GPU-out)",
                        device.calibration.provenance,
                        device.calibration.relative_time_std() * 100);
  const device::PowerActivity& a = device.power_activity;
  const std::string power = a.provenance.empty()
                                ? std::string()
                                : " + kappa*pi_mem while computing; power: " + a.provenance;
  return fmt::format(
      "analytical roofline (compute {:.0f} %{}, memory {:.0f} % of datasheet peaks{}, {:.1f} us "
      "per kernel) + archline energy E = W*eps_flop + Q*eps_mem + T*pi0 (Holtmann 2024 Eq. 5){}; "
      "{}; {}",
      e.compute * 100, tensor, e.memory * 100, regimes, e.kernel_overhead_s * 1e6, power,
      calibration, kernel_pass_description());
}

double compute_rate(const device::DeviceSpec& device, const graph::PassCost& cost,
                    graph::OpClass op_class, const device::OperatingPoint& point,
                    const PassTraits& traits) {
  const device::Efficiency& eff = device.efficiency;
  const bool matrix = op_class == graph::OpClass::kMatrix;
  const Precision units = units_of(op_class, point.precision);
  const std::optional<double> peak = device.peak(units);
  if (!peak) {
    throw InvalidInput(fmt::format("device {} has no {} peak in the catalog", device.id,
                                   device::to_string(units)));
  }
  const bool matrix_units = matrix && device.has_matrix_units(units);
  double eta = matrix_units ? eff.tensor.value_or(eff.compute) : eff.compute;
  if (matrix_units) {
    if (auto it = eff.tensor_by_precision.find(units); it != eff.tensor_by_precision.end())
      eta = it->second;
  }
  double rate = eta * *peak * point.clock_mhz / device.clock.boost_mhz;
  if (matrix && !matrix_units && traits.kind == graph::MatrixKind::kConv3x3)
    rate *= eff.winograd_speedup;
  if (matrix && traits.kind == graph::MatrixKind::kGroupedConv) rate *= eff.grouped_conv_efficiency;
  if (matrix && traits.backward) rate *= eff.backward_matrix_efficiency;
  if (matrix && eff.work_half_flop_per_sm > 0 && device.sm_count > 0) {
    const double x = cost.flop_count / (device.sm_count * eff.work_half_flop_per_sm);
    rate *= x / (1 + x);
  }
  if (matrix && eff.reduction_half > 0 && traits.reduction_length > 0) {
    rate *= traits.reduction_length / (traits.reduction_length + eff.reduction_half);
  }
  return rate;
}

OpEstimate predict_pass(const device::DeviceSpec& device, const graph::PassCost& cost,
                        graph::OpClass op_class, const device::OperatingPoint& point,
                        const PassTraits& traits) {
  OpEstimate estimate;
  if (cost.empty()) return estimate;
  if (op_class == graph::OpClass::kMatrix) {
    if (std::optional<OpEstimate> kernels =
            kernel_pass(device, cost, point, traits.gemms, traits.backward))
      return *kernels;
  }
  const double clock_ratio = point.clock_mhz / device.clock.boost_mhz;
  const Precision units = units_of(op_class, point.precision);
  const double memory_rate = device.efficiency.memory * device.memory_bandwidth_byte_per_s *
                             std::min(1.0, clock_ratio / kMemorySaturationClockRatio);
  const double compute_s =
      cost.flop_count > 0 ? cost.flop_count / compute_rate(device, cost, op_class, point, traits)
                          : 0.0;
  // Flop slots the units spend: a kernel at η of peak keeps them issuing (and stalling) for its
  // whole compute time, so it draws the flop power of W/η flops, not of W.
  const double active_flops =
      cost.flop_count > 0 ? compute_s * *device.peak(units) * clock_ratio : 0.0;
  const double memory_s =
      cost.byte_count / (traits.statistics
                             ? memory_rate * device.efficiency.statistics_memory_efficiency
                             : memory_rate);
  double time_s =
      std::max(compute_s, memory_s) + cost.kernel_count * device.efficiency.kernel_overhead_s;

  const device::ArchlineParameters archline = device.archline_for(units);
  const double v = device.relative_voltage(point.clock_mhz);
  const double static_w = std::min(device.idle_w, archline.pi0_w);
  const double baseline_w = static_w + (archline.pi0_w - static_w) * v * v * clock_ratio;
  // Operands moving through shared memory and caches while the units are busy (PowerActivity).
  const double operand_w = device.power_activity.operand_share * archline.eps_mem_j_per_byte *
                           device.memory_bandwidth_byte_per_s * v * v * clock_ratio;
  double energy_j = active_flops * archline.eps_flop_j * v * v +
                    cost.byte_count * archline.eps_mem_j_per_byte + compute_s * operand_w +
                    time_s * baseline_w;

  estimate.compute_bound = compute_s >= memory_s;
  if (time_s > 0) {
    double power_w = energy_j / time_s;
    if (power_w > device.tdp_w) {
      time_s = energy_j / device.tdp_w;
      power_w = device.tdp_w;
      estimate.power_capped = true;
    } else if (power_w < device.idle_w) {
      power_w = device.idle_w;
      energy_j = power_w * time_s;
    }
    estimate.power_w = power_w;
  }
  estimate.time_s = time_s;
  estimate.energy_j = energy_j;
  return estimate;
}

OpEstimate predict_op(const device::DeviceSpec& device, const graph::OpCost& cost, graph::Mode mode,
                      const device::OperatingPoint& point) {
  const graph::PassCost& forward =
      mode == graph::Mode::kInference ? cost.inference : cost.training_forward;
  OpEstimate total =
      predict_pass(device, forward, cost.op_class, point, PassTraits::of(cost, mode, false));
  total.forward_time_s = total.time_s;
  if (mode == graph::Mode::kTraining) {
    const OpEstimate backward =
        predict_pass(device, cost.backward, cost.op_class, point, PassTraits::of(cost, mode, true));
    const bool backward_dominates = backward.time_s > total.time_s;
    total.time_s += backward.time_s;
    total.energy_j += backward.energy_j;
    total.power_capped = total.power_capped || backward.power_capped;
    if (backward_dominates) total.compute_bound = backward.compute_bound;
    total.power_w = total.time_s > 0 ? total.energy_j / total.time_s : 0;
  }
  return total;
}

}  // namespace nnergy::analytical
