#include "nnergy/predict/analytical_predictor.h"

#include <fmt/format.h>

#include <algorithm>

#include "nnergy/core/error.h"

namespace nnergy::predict {

namespace {

using device::Precision;

// Precision whose units run non-matrix work: the vector units (fp64 or fp32).
Precision vector_precision(Precision p) {
  return p == Precision::kFp64 ? Precision::kFp64 : Precision::kFp32;
}

// Below this fraction of the boost clock the SMs cannot keep DRAM saturated.
constexpr double kMemorySaturationClockRatio = 0.5;

}  // namespace

AnalyticalPredictor::AnalyticalPredictor(device::DeviceSpec device) : device_(std::move(device)) {}

std::string AnalyticalPredictor::description() const {
  return fmt::format(
      "analytical roofline (compute {:.0f} %, memory {:.0f} % of datasheet peaks, {:.1f} us per "
      "kernel) + archline energy E = W*eps_flop + Q*eps_mem + T*pi0 (seed 003 Eq. 5); not "
      "calibrated on measurements of this network",
      device_.efficiency.compute * 100, device_.efficiency.memory * 100,
      device_.efficiency.kernel_overhead_s * 1e6);
}

OpEstimate AnalyticalPredictor::predict_pass(const graph::PassCost& cost, graph::OpClass op_class,
                                             const OperatingPoint& point) const {
  OpEstimate estimate;
  if (cost.empty()) return estimate;
  const double boost = device_.clock.boost_mhz;
  const double clock_ratio = point.clock_mhz / boost;
  const Precision units =
      op_class == graph::OpClass::kMatrix ? point.precision : vector_precision(point.precision);
  const std::optional<double> peak = device_.peak(units);
  if (!peak) {
    throw InvalidInput(fmt::format("device {} has no {} peak in the catalog", device_.id,
                                   device::to_string(units)));
  }
  const double compute_rate = device_.efficiency.compute * *peak * clock_ratio;
  const double memory_rate = device_.efficiency.memory * device_.memory_bandwidth_byte_per_s *
                             std::min(1.0, clock_ratio / kMemorySaturationClockRatio);
  const double compute_s = cost.flops / compute_rate;
  const double memory_s = cost.bytes / memory_rate;
  double time_s =
      std::max(compute_s, memory_s) + cost.kernels * device_.efficiency.kernel_overhead_s;

  const device::ArchlineParameters archline = device_.archline_for(units);
  const double v = device_.relative_voltage(point.clock_mhz);
  const double static_w = std::min(device_.idle_w, archline.pi0_w);
  const double baseline_w = static_w + (archline.pi0_w - static_w) * v * v * clock_ratio;
  double energy_j = cost.flops * archline.eps_flop_j * v * v +
                    cost.bytes * archline.eps_mem_j_per_byte + time_s * baseline_w;

  estimate.compute_bound = compute_s >= memory_s;
  if (time_s > 0) {
    double power_w = energy_j / time_s;
    if (power_w > device_.tdp_w) {
      time_s = energy_j / device_.tdp_w;
      power_w = device_.tdp_w;
      estimate.power_capped = true;
    } else if (power_w < device_.idle_w) {
      power_w = device_.idle_w;
      energy_j = power_w * time_s;
    }
    estimate.power_w = power_w;
  }
  estimate.time_s = time_s;
  estimate.energy_j = energy_j;
  return estimate;
}

OpEstimate AnalyticalPredictor::predict(const OpQuery& query) const {
  const graph::PassCost& forward =
      query.mode == Mode::kInference ? query.cost.inference : query.cost.training_forward;
  OpEstimate total = predict_pass(forward, query.cost.op_class, query.point);
  total.forward_time_s = total.time_s;
  if (query.mode == Mode::kTraining) {
    const OpEstimate backward = predict_pass(query.cost.backward, query.cost.op_class, query.point);
    const bool backward_dominates = backward.time_s > total.time_s;
    total.time_s += backward.time_s;
    total.energy_j += backward.energy_j;
    total.power_capped = total.power_capped || backward.power_capped;
    if (backward_dominates) total.compute_bound = backward.compute_bound;
    total.power_w = total.time_s > 0 ? total.energy_j / total.time_s : 0;
  }
  return total;
}

}  // namespace nnergy::predict
