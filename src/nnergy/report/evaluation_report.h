#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/calibration/power_calibration.h"
#include "nnergy/core/run_context.h"
#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/learn/evaluation.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/network/time_evaluation.h"

// The results of `nnergy evaluate`: learned predictors scored on a measured dataset, or the
// analytical model scored on published whole-network times, average powers and energies.
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
  /// Every predictor's out-of-sample predictions with their ops (learn::scatter_rows).
  std::vector<learn::ScatterRow> scatter;
  std::filesystem::path scatter_csv;   ///< written; empty: not asked
  std::filesystem::path features_csv;  ///< written; empty: not asked
};

/// Header (dataset, device, rows, splits), per predictor its op-level table, feature importances
/// and held-out networks, then every predictor side by side (one table per mode), then the files
/// written.
std::string render_text(const EvaluationReport& report);

/// {"context", "dataset" (path, digest, device, rows, ops, test_ops, holdout_ops, folds,
/// test_fraction), "predictors": [{"name", "description", "notes", "targets": [{"target",
/// "rows", "modes": [{"mode", "cv_r_squared_mean", "cv_r_squared_std", "test", "holdout"
/// (FitMetrics or null)}], "networks": [{"network", "mode", "measured_time_s",
/// "measured_ops_time_s", "predicted_time_s", "predicted_std_s"}]}]}], "points": {"columns":
/// ["predictor", "target", "split", "fold", "op_type", "mode", "dtype", "measured" (s or W),
/// "predicted", "predicted_std"], "rows": [[...], ...]} (pandas: DataFrame(rows, columns=...))}
/// — what the HTML report of `evaluate --db` draws.
nlohmann::ordered_json to_json(const EvaluationReport& report);

/// A device of the scored file that the calibration corpus has no time measurement of.
struct TransferredDevice {
  std::string id;                ///< catalog id, e.g. "h100-sxm"
  std::string provenance;        ///< where its time parameters come from (device::CalibrationInfo)
  double relative_time_std = 0;  ///< its whole-network times' 1σ as a relative ± (0: unknown)
  std::string power_provenance;  ///< where its power model comes from; empty: archline alone
};

/// `nnergy evaluate --published`: the analytical model against published whole-network times,
/// average powers and energies per iteration.
struct PublishedEvaluationReport {
  RunContext context;  ///< published, grades, host_launch_s, predictor
  std::filesystem::path published;
  std::vector<std::string> grades;
  std::size_t records_read = 0;
  std::size_t rejected = 0;  ///< records the reader rejected
  /// The records the reader rejected: the record's name (id or "record [index]"), the reason.
  std::vector<std::pair<std::string, std::string>> rejected_records;
  std::size_t measurements = 0;         ///< records that became whole-network times
  std::size_t power_measurements = 0;   ///< records that became average powers
  std::size_t energy_measurements = 0;  ///< records that became energies per iteration
  std::vector<std::pair<std::string, std::string>> skipped;  ///< record id, reason
  network::TimeEvaluation evaluation;
  /// Average powers (W) and energies per iteration (J) predicted, and those that could not be.
  calibration::PowerEvaluation power;
  /// The calibration the model's parameters come from; absent: none (every figure is then
  /// out-of-sample).
  std::optional<device::CalibratedParameters> calibration;
  /// Of the records the reader accepted, those also in the calibration corpus (same id, every
  /// field equal); absent without a calibration or when its corpus cannot be read.
  std::optional<std::size_t> records_in_corpus;
  std::size_t records_accepted = 0;  ///< records the reader accepted (records_read − rejected)
  /// Devices of the predicted records that the corpus has no time measurement of, by id.
  std::vector<TransferredDevice> transferred_devices;
  network::TimeEvaluationSettings host;  ///< host launch times and input copy rate used
  std::filesystem::path scatter_csv;     ///< written; empty: not asked

  /// True when every accepted record is in the calibration corpus (the corpus itself, or part
  /// of it): the figures are then in-sample.
  bool in_sample() const;
};

/// Counts, where the parameters come from (in-sample on the calibration corpus, or not used in
/// calibration, and the devices whose parameters were transferred), accuracy per device,
/// precision, mode, grade and source of the times, then of the average powers and of the
/// energies per iteration, skipped and failed records by reason, the records the reader
/// rejected with theirs, the file written.
std::string render_text(const PublishedEvaluationReport& report);
/// {"context", "records_read", "rejected", "rejected_records" (id, reason), "measurements",
/// "evaluated", "calibration" (corpus, records_in_corpus, in_sample, transferred_devices),
/// "skipped" (count per reason), "failures" (times, powers and energies), "by_device",
/// "by_precision", "by_mode", "by_grade", "by_source", "records" (times), "power" and "energy"
/// (each "measurements", "evaluated", the same by_* tables and "records")}.
nlohmann::ordered_json to_json(const PublishedEvaluationReport& report);
/// The scatter CSV (without context lines): id, network, device, precision, mode, part, batch,
/// measured_s, predicted_s, measured_w, predicted_w, measured_j, predicted_j, one row per
/// evaluated record (a time fills the _s columns, an average power the _w ones, an energy the
/// _j ones; the others are empty).
std::string scatter_csv(const PublishedEvaluationReport& report);

}  // namespace nnergy::report
