#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/network/network_prediction.h"

namespace nnergy::network {

/// Network totals at one core clock.
struct ClockPoint {
  double clock_mhz = 0;
  double time_s = 0;
  double energy_j = 0;
  double power_w = 0;
  double edp_j_s = 0;
  double time_std_s = 0;    ///< 1σ, 0 = unknown (NetworkTotals)
  double energy_std_j = 0;  ///< 1σ, 0 = unknown
  double edp_std_j_s = 0;   ///< 1σ, 0 = unknown
};

/// How sure a sweep is of one optimum (lowest energy or lowest EDP), from the 1σ intervals of
/// the points. The intervals are treated as independent, which is conservative: the same model
/// predicts every clock, so much of its error is shared and cancels in a comparison.
struct OptimumConfidence {
  bool uncertainty_known = false;  ///< false: the predictor gives no uncertainty
  std::size_t runner_up = 0;       ///< index of the second-best point (the optimum if alone)
  /// (runner-up value − optimum value) / √(σ_opt² + σ_runner-up²); +inf without uncertainty.
  double margin_sigma = 0;
  bool overlaps_runner_up = false;  ///< the two 1σ intervals overlap: the order is not certain
  /// Indices of the points whose 1σ interval overlaps the optimum's (optimum included), in
  /// clock order: the clocks that cannot be told apart from the optimum.
  std::vector<std::size_t> indistinguishable;
};

/// Totals over a set of core clocks with the energy- and EDP-optimal ones.
struct ClockSweep {
  std::vector<ClockPoint> points;  ///< in increasing clock order
  std::size_t energy_optimal = 0;  ///< index into points
  std::size_t edp_optimal = 0;     ///< index into points
  OptimumConfidence energy_confidence;
  OptimumConfidence edp_confidence;
};

/// How sure the optimum `optimum` of `values` (with 1σ `stddevs`, 0 = unknown) is; see
/// OptimumConfidence. `values` and `stddevs` have the same, non-zero length.
OptimumConfidence optimum_confidence(const std::vector<double>& values,
                                     const std::vector<double>& stddevs, std::size_t optimum);

/// The clocks a sweep visits: the device's supported clocks from the minimum, at least `step_mhz`
/// apart (default: the device's step), thinned to at most ~100 points; the boost clock is always
/// the last. Throws InvalidInput naming `step_setting` for a step that is not > 0.
std::vector<double> clocks_for_sweep(const device::DeviceSpec& device,
                                     std::optional<double> step_mhz, std::string_view step_setting);

/// Predicts the network at each of `clocks_mhz` (settings.point.clock_mhz is replaced).
ClockSweep sweep_clocks(const CostedNetwork& network, const predict::OpPredictor& predictor,
                        const PredictionSettings& settings, std::vector<double> clocks_mhz);

/// NeuralPower's energy-precision ratio M = Error^α · EPI (seed 004 Eq. 9): `error` is the
/// classification error as a fraction in [0, 1], `energy_per_item_j` the energy per data item
/// in J; M is in J. Throws InvalidInput for an error outside [0, 1] or a negative α, naming the
/// setting as `names` spells it.
double energy_precision_ratio(double error, double alpha, double energy_per_item_j,
                              SettingNames names = SettingNames::kFlag);

}  // namespace nnergy::network
