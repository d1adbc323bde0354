#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/calibration/serve_fit.h"
#include "nnergy/core/run_context.h"

namespace nnergy::report {

/// The result of `nnergy calibrate --serve`.
struct ServeCalibrationReport {
  RunContext context;
  calibration::ServeFitReport fit;
  std::vector<calibration::SkippedServingRecord> skipped;
  std::string written;  ///< the file written; empty for a dry run
};

/// Text: the fitted parameters, then per validation scheme the MAPE, median ratio and share
/// within ±20 % of each quantity (all runs, by source, by GPU), then the records left out.
std::string render_text(const ServeCalibrationReport& report);

/// JSON: {"context", "fitted" (the calibration document), "validations" [{"scheme", "scores",
/// "predictions" [{"id", "source", "model", "device", measured and predicted figures, "error"}]}],
/// "skipped" [{"id", "reason"}]}.
nlohmann::ordered_json to_json(const ServeCalibrationReport& report);

}  // namespace nnergy::report
