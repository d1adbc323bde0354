#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/report/calibration_report.h"

namespace nnergy::api {

/// Everything `nnergy calibrate` needs.
struct CalibrateRequest {
  /// Measurements to fit; empty: the data directory's calibration/measured_public.json and
  /// nnergy's own H100 campaign, measured/h100/networks.json.
  std::filesystem::path published;
  std::vector<std::string> grades = {"A", "B"};  ///< grades of the records used (A, B, C)
  /// Where to write the parameters; empty: the data directory's calibration/calibrated.json,
  /// which every prediction reads.
  std::filesystem::path output;
  bool dry_run = false;                         ///< fit and report, write nothing
  unsigned threads = 0;                         ///< threads of the cross-validation folds; 0: all
  calibration::CalibrationOptions fit;          ///< how the fit treats thin data
  std::string command_line;                     ///< the invocation, for the result's context block
  SettingNames names = SettingNames::kKeyword;  ///< how messages name the settings above
};

/// Fits the analytical time model's parameters (per architecture generation, launch and host
/// costs) to the published whole-network and per-operator times, starting from the datasheet
/// catalog (never from an earlier fit), cross-validates them leaving out one GPU and one source
/// at a time, fits the power model's operand share on top, and writes the parameters
/// atomically unless it is a dry run. Throws InvalidInput naming the setting for an unknown
/// grade and an output that cannot be written, and for measurements or mapping files that
/// cannot be read.
report::CalibrationReport calibrate(const CalibrateRequest& request);

}  // namespace nnergy::api
