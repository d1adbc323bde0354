#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "nnergy/core/progress.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/report/serve_calibration_report.h"

namespace nnergy::api {

/// What `nnergy calibrate --serve` needs.
struct CalibrateServeRequest {
  /// Published LLM-serving measurements; empty: the data directory's
  /// calibration/llm_measured_public.json.
  std::filesystem::path published;
  /// How its records become serve runs; empty: the data directory's calibration/llm_runs.json.
  std::filesystem::path mapping;
  /// Where to write the fit; empty: the data directory's llm/calibrated.json, which serve reads.
  std::filesystem::path output;
  bool dry_run = false;        ///< fit and report, write nothing
  bool cross_validate = true;  ///< also the leave-one-GPU/source/model-out fits
  ProgressCallback progress;   ///< told how many fits are done; may be empty
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};

/// Maps the published records to serve runs, fits nnergy serve's parameters on them (per GPU
/// generation: GEMM and streaming efficiencies, tensor-core energy; per engine: host times),
/// cross-validates (leave one GPU, source, model out) and writes the fit atomically, with its
/// provenance and out-of-sample accuracy, unless it is a dry run. Throws InvalidInput naming
/// the file for records or mapping that cannot be read, and an output that cannot be written.
report::ServeCalibrationReport calibrate_serve(const CalibrateServeRequest& request);

}  // namespace nnergy::api
