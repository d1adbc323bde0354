#include "nnergy/network/clock_sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "nnergy/core/error.h"

namespace nnergy::network {

std::vector<double> clocks_for_sweep(const device::DeviceSpec& device,
                                     std::optional<double> step_mhz,
                                     std::string_view step_setting) {
  if (step_mhz && !(*step_mhz > 0))
    throw InvalidInput(fmt::format("{} {:g}: expected > 0", step_setting, *step_mhz));
  const double wanted = step_mhz ? *step_mhz : device.clock.step_mhz;
  const double range = device.clock.boost_mhz - device.clock.min_mhz;
  const double stride_mhz = std::max(wanted, range / 100.0);
  std::vector<double> clocks;
  double next = device.clock.min_mhz;
  for (double f : device.supported_clocks_mhz()) {
    if (f + 1e-9 >= next) {
      clocks.push_back(f);
      next = f + stride_mhz;
    }
  }
  if (clocks.empty() || clocks.back() != device.clock.boost_mhz)
    clocks.push_back(device.clock.boost_mhz);
  return clocks;
}

ClockSweep sweep_clocks(const CostedNetwork& network, const predict::OpPredictor& predictor,
                        const PredictionSettings& settings, std::vector<double> clocks_mhz) {
  std::sort(clocks_mhz.begin(), clocks_mhz.end());
  ClockSweep sweep;
  PredictionSettings at = settings;
  for (double clock : clocks_mhz) {
    at.point.clock_mhz = clock;
    const NetworkTotals totals = predict_network(network, predictor, at).totals;
    sweep.points.push_back({clock, totals.time_s, totals.energy_j, totals.power_w, totals.edp_j_s,
                            totals.time_std_s, totals.energy_std_j, totals.edp_std_j_s});
  }
  for (std::size_t i = 1; i < sweep.points.size(); ++i) {
    if (sweep.points[i].energy_j < sweep.points[sweep.energy_optimal].energy_j)
      sweep.energy_optimal = i;
    if (sweep.points[i].edp_j_s < sweep.points[sweep.edp_optimal].edp_j_s) sweep.edp_optimal = i;
  }
  if (!sweep.points.empty()) {
    std::vector<double> energy;
    std::vector<double> energy_std;
    std::vector<double> edp;
    std::vector<double> edp_std;
    for (const ClockPoint& p : sweep.points) {
      energy.push_back(p.energy_j);
      energy_std.push_back(p.energy_std_j);
      edp.push_back(p.edp_j_s);
      edp_std.push_back(p.edp_std_j_s);
    }
    sweep.energy_confidence = optimum_confidence(energy, energy_std, sweep.energy_optimal);
    sweep.edp_confidence = optimum_confidence(edp, edp_std, sweep.edp_optimal);
  }
  return sweep;
}

OptimumConfidence optimum_confidence(const std::vector<double>& values,
                                     const std::vector<double>& stddevs, std::size_t optimum) {
  if (values.empty() || values.size() != stddevs.size() || optimum >= values.size()) {
    throw InternalError(fmt::format("optimum_confidence: {} values, {} stddevs, optimum {}",
                                    values.size(), stddevs.size(), optimum));
  }
  OptimumConfidence c;
  c.uncertainty_known = std::any_of(stddevs.begin(), stddevs.end(), [](double s) { return s > 0; });
  c.runner_up = optimum;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == optimum) continue;
    if (c.runner_up == optimum || values[i] < values[c.runner_up]) c.runner_up = i;
  }
  const double best = values[optimum];
  const double best_std = stddevs[optimum];
  if (c.runner_up == optimum) {
    c.margin_sigma = std::numeric_limits<double>::infinity();
  } else {
    const double spread = std::hypot(best_std, stddevs[c.runner_up]);
    const double gap = values[c.runner_up] - best;
    c.margin_sigma = spread > 0 ? gap / spread : std::numeric_limits<double>::infinity();
    c.overlaps_runner_up = values[c.runner_up] - stddevs[c.runner_up] <= best + best_std;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == optimum || values[i] - stddevs[i] <= best + best_std) c.indistinguishable.push_back(i);
  }
  return c;
}

double energy_precision_ratio(double error, double alpha, double energy_per_item_j,
                              SettingNames names) {
  if (!(error >= 0 && error <= 1)) {
    throw InvalidInput(fmt::format(
        "{}: expected a classification error as a fraction in [0, 1] (e.g. 0.073 for 7.3 %)",
        setting_with_value(names, "error", fmt::format("{:g}", error))));
  }
  if (!(alpha >= 0) || !std::isfinite(alpha)) {
    throw InvalidInput(fmt::format("{}: expected a non-negative number",
                                   setting_with_value(names, "alpha", fmt::format("{:g}", alpha))));
  }
  return std::pow(error, alpha) * energy_per_item_j;
}

}  // namespace nnergy::network
