#include "nnergy/network/clock_sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"

namespace nnergy::network {

ClockSweep sweep_clocks(const CostedNetwork& network, const predict::OpPredictor& predictor,
                        const predict::AnalyticalPredictor& analytical,
                        const PredictionSettings& settings, std::vector<double> clocks_mhz) {
  std::sort(clocks_mhz.begin(), clocks_mhz.end());
  ClockSweep sweep;
  PredictionSettings at = settings;
  for (double clock : clocks_mhz) {
    at.point.clock_mhz = clock;
    const NetworkTotals totals = predict_network(network, predictor, analytical, at).totals;
    sweep.points.push_back({clock, totals.time_s, totals.energy_j, totals.power_w, totals.edp_j_s});
  }
  for (std::size_t i = 1; i < sweep.points.size(); ++i) {
    if (sweep.points[i].energy_j < sweep.points[sweep.energy_optimal].energy_j)
      sweep.energy_optimal = i;
    if (sweep.points[i].edp_j_s < sweep.points[sweep.edp_optimal].edp_j_s) sweep.edp_optimal = i;
  }
  return sweep;
}

double energy_precision_ratio(double error, double alpha, double energy_per_item_j) {
  if (!(error >= 0 && error <= 1)) {
    throw InvalidInput(
        fmt::format("--error {:g}: expected a classification error as a fraction "
                    "in [0, 1] (e.g. 0.073 for 7.3 %)",
                    error));
  }
  if (!(alpha >= 0) || !std::isfinite(alpha)) {
    throw InvalidInput(fmt::format("--alpha {:g}: expected a non-negative number", alpha));
  }
  return std::pow(error, alpha) * energy_per_item_j;
}

}  // namespace nnergy::network
