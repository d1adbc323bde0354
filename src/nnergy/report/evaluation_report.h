#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/learn/evaluation.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/network/time_evaluation.h"

// The results of `nnergy evaluate`: learned predictors scored on a measured dataset, or the
// analytical model scored on published whole-network times.
namespace nnergy::report {

/// `nnergy evaluate --db`: every predictor's cross-validation, test split and held-out networks.
struct EvaluationReport {
  RunContext context;  ///< dataset, device, predictors, folds, test_fraction, holdout, seed
  std::filesystem::path dataset;
  std::string dataset_digest;  ///< FNV-1a 64 of the dataset file
  learn::DeviceResolution device;
  std::size_t rows = 0;          ///< op measurements used
  std::size_t dropped_rows = 0;  ///< without a usable time
  std::size_t error_rows = 0;
  std::size_t feature_columns = 0;
  std::size_t ops = 0;          ///< unique ops in the table
  std::size_t test_ops = 0;     ///< of those, in the test split
  std::size_t holdout_ops = 0;  ///< measured ops of the held-out networks
  std::size_t folds = 0;
  double test_fraction = 0;
  std::vector<std::string> holdout_networks;
  std::uint64_t seed = 0;
  std::vector<learn::PredictorEvaluation> evaluations;  ///< one per predictor, in request order
  std::filesystem::path scatter_csv;                    ///< written; empty: not asked
  std::filesystem::path features_csv;                   ///< written; empty: not asked
};

/// Header (dataset, device, rows, splits), per predictor its op-level table, feature importances
/// and held-out networks, then every predictor side by side (one table per mode), then the files
/// written.
std::string render_text(const EvaluationReport& report);

/// `nnergy evaluate --published`: the analytical model against published whole-network times.
struct PublishedEvaluationReport {
  RunContext context;  ///< published, grades, host_launch_s, predictor
  std::filesystem::path published;
  std::vector<std::string> grades;
  std::size_t records_read = 0;
  std::size_t rejected = 0;      ///< records the reader rejected
  std::size_t measurements = 0;  ///< records that became whole-network times
  std::vector<std::pair<std::string, std::string>> skipped;  ///< record id, reason
  network::TimeEvaluation evaluation;
  /// The calibration the model's parameters come from; absent: none (every figure is then
  /// out-of-sample).
  std::optional<device::CalibratedParameters> calibration;
  double host_launch_s = 0;
  std::filesystem::path scatter_csv;  ///< written; empty: not asked
};

/// Counts, where the parameters come from, accuracy per device, precision, mode, grade and
/// source, skipped and failed records by reason, the file written.
std::string render_text(const PublishedEvaluationReport& report);
/// {"context", "records_read", "rejected", "measurements", "evaluated", "skipped" (count per
/// reason), "failures", "by_device", "by_precision", "by_mode", "by_grade", "by_source",
/// "records"}.
nlohmann::ordered_json to_json(const PublishedEvaluationReport& report);
/// The scatter CSV (without context lines): id, network, device, precision, mode, part, batch,
/// measured_s, predicted_s, one row per evaluated record.
std::string scatter_csv(const PublishedEvaluationReport& report);

}  // namespace nnergy::report
