#pragma once

// Reporters of whole-network time accuracy (calibration::TimeAccuracy), shared by `nnergy evaluate
// --published` and `nnergy calibrate`.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/calibration/time_accuracy.h"
#include "nnergy/network/time_evaluation.h"

namespace nnergy::report {

/// Grouping keys of measured runs (of times, powers and energies alike): device, precision,
/// mode, grade and source.
using RunKey = std::function<std::string(const network::NetworkTimeMeasurement&)>;
const std::vector<std::pair<std::string, RunKey>>& run_groupings();

/// The same keys of evaluated times (of their measurements).
using TimeKey = std::function<std::string(const network::EvaluatedTime&)>;
const std::vector<std::pair<std::string, TimeKey>>& time_groupings();
/// The key of time_groupings() named `name`.
const TimeKey& time_grouping(const std::string& name);

/// Text table: group, n, MAPE %, median pred/meas, within ±10 %.
std::string accuracy_table(const std::string& title,
                           const std::vector<calibration::TimeAccuracy>& rows);
/// The same rows as JSON objects (group, count, mape as a fraction, median_ratio,
/// within_10_percent).
nlohmann::ordered_json accuracy_json(const std::vector<calibration::TimeAccuracy>& rows);

}  // namespace nnergy::report
