#pragma once

// The fit of nnergy serve's parameters on published LLM-serving measurements and its
// out-of-sample accuracy (leave one GPU, one source, one model out).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nnergy/calibration/published_serving.h"
#include "nnergy/core/progress.h"
#include "nnergy/kernel/kernel_parameters.h"
#include "nnergy/serve/engine.h"
#include "nnergy/serve/serve_calibration.h"

namespace nnergy::calibration {

/// Accuracy of one group of predictions of one quantity.
struct ServingScore {
  std::string group;  ///< "all", a source key, a GPU id
  ServingQuantity quantity = ServingQuantity::kTokensPerS;
  int count = 0;
  double mape = 0;          ///< mean |predicted/measured − 1|
  double median_ratio = 0;  ///< predicted/measured
  double within_20 = 0;     ///< share within ±20 %
};

/// One run predicted: the figures, or why not.
struct ServingPrediction {
  PublishedServingRun run;
  ServingFigures predicted;
  std::string error;  ///< non-empty: the run could not be predicted (e.g. does not fit)
};

/// How the predictions of one validation scheme did.
struct ServingValidation {
  std::string scheme;  ///< "in-sample", "leave-one-gpu-out", ...
  std::vector<ServingPrediction> predictions;
  std::vector<ServingScore> scores;  ///< all; by source; by GPU
};

struct ServeFitReport {
  serve::ServeCalibration fitted;  ///< on every run
  std::vector<ServingValidation> validations;
  std::size_t runs = 0;
  std::size_t skipped = 0;
  int iterations = 0;
};

/// What the fit needs besides the runs.
struct ServeFitInputs {
  const PublishedServing* data = nullptr;
  const llm::ModelCatalog* models = nullptr;
  const device::DeviceCatalog* devices = nullptr;
  const serve::EngineCatalog* engines = nullptr;
  /// The kernel model's parameters, which cost the matrix products; null: the analytical
  /// model's efficiencies do (and the fit includes them).
  const kernel::KernelParameters* kernels = nullptr;
  bool cross_validate = true;
  /// Told how many of the fits are done (for a progress line); may be empty.
  ProgressCallback progress;
};

/// Predicts every run of `data` with `calibration` applied.
std::vector<ServingPrediction> predict_runs(const ServeFitInputs& inputs,
                                            const serve::ServeCalibration& calibration);

/// Scores `predictions`: all, by source and by GPU, per quantity the runs are scored on.
std::vector<ServingScore> score(const std::vector<ServingPrediction>& predictions);

/// Fits, per GPU generation, the GEMM and streaming efficiencies and the tensor-core energy
/// scale, and per engine its host time per step (and per kernel for eager engines), by
/// Levenberg–Marquardt on the log ratios of predicted to measured figures with weak priors
/// (the catalog's defaults); then, when asked, the same fit with each GPU, each source and each
/// model held out, scoring the held-out runs (a held-out generation or engine takes what
/// ServeCalibration transfers, or the documented defaults).
ServeFitReport fit_serving(const ServeFitInputs& inputs);

}  // namespace nnergy::calibration
