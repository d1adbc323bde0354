#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "nnergy/core/progress.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/regress/regressor.h"
#include "nnergy/report/train_report.h"

namespace nnergy::api {

/// Everything `nnergy train` needs: which dataset, which regressor, where to write the model.
struct TrainRequest {
  std::filesystem::path db;          ///< the measured dataset (see `nnergy profile`)
  std::string predictor = "forest";  ///< regressor name (forest, boost, poly-lasso, ...)
  std::filesystem::path out;         ///< the model file to write (.nnp); its folder must exist
  /// Catalog id of the device the dataset was measured on; default: matched by the dataset
  /// device's name (a CPU not in the catalog is cpu-core).
  std::optional<std::string> device;
  /// A device catalog (JSON) whose devices replace or add to the built-in ones; empty: none.
  std::filesystem::path devices_file;
  std::uint64_t seed = 1;  ///< random seed of the regressor
  int threads = 0;         ///< worker threads, ≥ 0; 0: the regressor's default
  /// Regressor settings (regress::FitOptions::extra), e.g. {"max_depth": 8}; saved with the model.
  nlohmann::json settings = nlohmann::json::object();
  /// The regressors `predictor` may name; null: the standard ones (regress/regressor.h).
  const regress::RegressorRegistry* regressors = nullptr;
  /// Told the targets fitted (time, and power when the dataset has power) of those to fit.
  ProgressCallback progress;
  /// The invocation, for the model file's context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// Builds the training table of `db`, fits the regressor to every row's time (and power where
/// measured) and writes the model file atomically. Throws InvalidInput naming the setting for an
/// output folder that does not exist, negative threads or an unknown predictor (checked before
/// any work, so that nothing is written), and whatever building the table and fitting throw (a
/// missing or malformed dataset, an unmatched device, a regressor setting it rejects).
report::TrainReport train(const TrainRequest& request);

}  // namespace nnergy::api
