#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/calibration/power_calibration.h"
#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/run_context.h"
#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/network/time_evaluation.h"

namespace nnergy::report {

/// What `nnergy calibrate` shows: the fitted parameters, their cross-validation and the power fit.
struct CalibrationReport {
  RunContext context;     ///< published, grades, output ("" for a dry run)
  std::string published;  ///< the measurements fitted (files joined by " + ")
  std::vector<std::string> grades;
  std::size_t records_read = 0;
  std::size_t times = 0;    ///< records that became whole-network or per-operator times
  std::size_t skipped = 0;  ///< records not used as times (see `nnergy evaluate --published`)
  /// Times that could not be predicted, with the reason.
  std::vector<std::pair<network::NetworkTimeMeasurement, std::string>> failures;
  calibration::Calibration calibration;     ///< the time fit and its cross-validations
  calibration::PowerCalibration power;      ///< κ on top of the calibrated times
  device::CalibratedParameters parameters;  ///< what was (or would be) written
  /// Records used with a batch their source ran but did not state: record id, why.
  std::vector<std::pair<std::string, std::string>> assumed_batches;
  std::filesystem::path output;  ///< the parameters file written; empty on a dry run
  double seconds = 0;            ///< wall time of the fit, s
};

/// Counts and notes, the parameters per generation, accuracy in sample, leave-one-GPU-out and
/// leave-one-source-out, the power fit, and what was written.
std::string render_text(const CalibrationReport& report);
/// {"context", "records_read", "measurements", "fitted", "failures", "notes",
/// "assumed_batches", "power", "parameters", "in_sample", "leave_one_gpu_out",
/// "leave_one_source_out", "records" (per record: in-sample and both held-out predictions),
/// "seconds"}.
nlohmann::ordered_json to_json(const CalibrationReport& report);

}  // namespace nnergy::report
