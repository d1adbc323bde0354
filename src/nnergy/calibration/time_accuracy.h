#pragma once

// How well nnergy's predicted whole-network times (network/time_evaluation.h), average powers and
// energies (learn/power_calibration.h) match the measurements, per group of measurements.

#include <functional>
#include <string>
#include <vector>

#include "nnergy/core/fit_metrics.h"
#include "nnergy/network/time_evaluation.h"

namespace nnergy::calibration {

/// The fit metrics of one group of evaluated times, and its median predicted/measured ratio.
struct TimeAccuracy {
  std::string group;
  core::FitMetrics metrics;  ///< count, MAPE, share within ±10 %, ... (count 0 for no times)
  double median_ratio = 0;   ///< median predicted/measured (0 for no times)
};

/// Accuracy per value of `key` (e.g. the device, the source, the precision), sorted by group,
/// followed by one for all ("all").
std::vector<TimeAccuracy> time_accuracy(
    const std::vector<network::EvaluatedTime>& evaluated,
    const std::function<std::string(const network::EvaluatedTime&)>& key);

/// One run's measured and predicted figure of any quantity (time s, average power W, energy J).
struct ScoredFigure {
  const network::NetworkTimeMeasurement* run = nullptr;  ///< the run measured, for grouping
  double measured = 0;                                   ///< > 0
  double predicted = 0;
};

/// Accuracy per value of `key` of the figures' runs, sorted by group, followed by one for all
/// ("all"), as time_accuracy.
std::vector<TimeAccuracy> figure_accuracy(
    const std::vector<ScoredFigure>& figures,
    const std::function<std::string(const network::NetworkTimeMeasurement&)>& key);

}  // namespace nnergy::calibration
