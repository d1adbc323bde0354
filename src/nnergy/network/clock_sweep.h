#pragma once

#include <cstddef>
#include <vector>

#include "nnergy/network/network_prediction.h"

namespace nnergy::network {

/// Network totals at one core clock.
struct ClockPoint {
  double clock_mhz = 0;
  double time_s = 0;
  double energy_j = 0;
  double power_w = 0;
  double edp_j_s = 0;
};

/// Totals over a set of core clocks with the energy- and EDP-optimal ones.
struct ClockSweep {
  std::vector<ClockPoint> points;  ///< in increasing clock order
  std::size_t energy_optimal = 0;  ///< index into points
  std::size_t edp_optimal = 0;     ///< index into points
};

/// Predicts the network at each of `clocks_mhz` (settings.point.clock_mhz is replaced).
ClockSweep sweep_clocks(const CostedNetwork& network, const predict::OpPredictor& predictor,
                        const predict::AnalyticalPredictor& analytical,
                        const PredictionSettings& settings, std::vector<double> clocks_mhz);

/// NeuralPower's energy-precision ratio M = Error^α · EPI (seed 004 Eq. 9): `error` is the
/// classification error as a fraction in [0, 1], `energy_per_item_j` the energy per data item
/// in J; M is in J. Throws InvalidInput for an error outside [0, 1] or a negative α.
double energy_precision_ratio(double error, double alpha, double energy_per_item_j);

}  // namespace nnergy::network
