#pragma once

#include <filesystem>
#include <string>

#include "nnergy/core/progress.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/report/kernel_calibration_report.h"

namespace nnergy::api {

/// What `nnergy calibrate --kernels` needs.
struct CalibrateKernelsRequest {
  /// The measured GEMM table; empty: the data directory's calibration/kernels/aic_gemm.csv.gz.
  std::filesystem::path table;
  /// Where to write the fit; empty: the data directory's kernel/calibrated.json, which the
  /// kernel model reads.
  std::filesystem::path output;
  bool dry_run = false;       ///< fit and report, write nothing
  ProgressCallback progress;  ///< told how many fits are done; may be empty
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};

/// Fits the kernel model on the measured GEMMs, scores it leave-one-GPU-out and writes the
/// parameters atomically (with provenance and accuracy) unless it is a dry run. Throws
/// InvalidInput naming the file for a table that cannot be read or an output that cannot be
/// written.
report::KernelCalibrationReport calibrate_kernels(const CalibrateKernelsRequest& request);

}  // namespace nnergy::api
