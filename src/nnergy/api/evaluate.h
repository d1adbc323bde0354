#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/progress.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/regress/regressor.h"
#include "nnergy/report/evaluation_report.h"

namespace nnergy::api {

/// Everything `nnergy evaluate --db` needs: which predictors to score on which dataset, and how
/// to split it.
struct EvaluateRequest {
  std::filesystem::path db;                          ///< the measured dataset
  std::vector<std::string> predictors = {"forest"};  ///< regressor names, compared side by side
  std::size_t folds = 15;                            ///< k of the k-fold cross-validation, ≥ 2
  double test_fraction = 0.2;                        ///< share of the unique ops tested, [0, 1)
  /// Networks of the dataset whose ops are kept out of training (adds network-level scores).
  std::vector<std::string> holdout_networks;
  /// Where to write predicted vs measured per op and split (CSV); empty: not written.
  std::filesystem::path scatter_csv;
  /// Where to write the encoded features, targets and split of every row (CSV); empty: not.
  std::filesystem::path features_csv;
  /// Catalog id of the device the dataset was measured on; default: matched by name.
  std::optional<std::string> device;
  /// A device catalog (JSON) whose devices replace or add to the built-in ones; empty: none.
  std::filesystem::path devices_file;
  std::uint64_t seed = 1;  ///< seed of the splits and the regressors
  int threads = 0;         ///< worker threads, ≥ 0; 0: the regressor's default
  /// Regressor settings given to every predictor (regress::FitOptions::extra).
  nlohmann::json settings = nlohmann::json::object();
  /// The regressors `predictors` may name; null: the standard ones (regress/regressor.h).
  const regress::RegressorRegistry* regressors = nullptr;
  /// Told the regressor fits done of all (every fold, test split and hold-out of every
  /// predictor and target); a run of several minutes makes about a hundred.
  ProgressCallback progress;
  /// The invocation, for the result's and the CSV files' context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// Builds the training table of `db`, splits it by unique op (test split, k folds of the rest,
/// held-out networks) and scores every predictor (learn::evaluate_predictor), then writes the
/// CSV files asked for (atomically, with the context as "# " lines). Throws InvalidInput naming
/// the setting for an output folder that does not exist, negative threads, no predictor or an
/// unknown one (all checked before any work), too few ops for the folds, a held-out network the
/// dataset lacks, and what building the table and fitting throw.
report::EvaluationReport evaluate(const EvaluateRequest& request);

/// Everything `nnergy evaluate --published` needs.
struct PublishedEvaluationRequest {
  /// Published measurements (e.g. data/calibration/measured_public.json).
  std::filesystem::path published;
  std::vector<std::string> grades = {"A", "B"};  ///< grades of the records used (A, B, C)
  /// Host CPU time per kernel launch, µs, ≥ 0; default: the calibrated value (0 without one).
  std::optional<double> host_launch_us;
  /// Where to write predicted vs measured per record (CSV); empty: not written.
  std::filesystem::path scatter_csv;
  /// A device catalog (JSON) whose devices replace or add to the built-in ones; empty: none.
  std::filesystem::path devices_file;
  /// Told the records prepared (each network imported and reduced) of all: times, then average
  /// powers and energies.
  ProgressCallback progress;
  std::string command_line;  ///< the invocation, for the context blocks
  SettingNames names = SettingNames::kKeyword;
};

/// Predicts every published whole-network time, average power and energy per iteration of the
/// grades asked with the analytical model (calibrated, as predict uses it) and scores the
/// predictions; a power or energy record is predicted as the run it measured (device, network,
/// batch, precision, mode), its average power and energy from the same prediction as `nnergy
/// predict`'s. Records of other quantities, or that cannot be mapped, are skipped and those that
/// cannot be predicted are failures, each with its reason. Says whether the file's records are
/// in the calibration corpus (in-sample) and which devices the corpus has no measurement of.
/// Writes the scatter CSV when asked. Throws InvalidInput naming the setting for a negative host
/// launch time, an unknown grade or a missing output folder, and for a published file that
/// cannot be read.
report::PublishedEvaluationReport evaluate_published(const PublishedEvaluationRequest& request);

}  // namespace nnergy::api
