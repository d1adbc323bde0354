#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nnergy/calibration/kernel_fit.h"
#include "nnergy/core/run_context.h"

namespace nnergy::report {

/// The result of `nnergy calibrate --kernels`.
struct KernelCalibrationReport {
  RunContext context;
  calibration::KernelFit fit;
  int skipped = 0;      ///< table rows of GPUs, formats or engines nnergy does not know
  std::string written;  ///< the file written; empty for a dry run
};

/// Text: the fitted GEMM parameters per engine and format, the power parameters, then the
/// leave-one-GPU-out scores per GPU × engine × format (time, and power where measured) beside
/// the in-sample ones.
std::string render_text(const KernelCalibrationReport& report);

/// JSON: {"context", "fitted" (the calibration document), "out_of_sample" [scores],
/// "in_sample" [scores]}, a score {"device", "engine", "format", "quantity", "count", "mape",
/// "median_ratio", "log_sigma"}.
nlohmann::ordered_json to_json(const KernelCalibrationReport& report);

}  // namespace nnergy::report
