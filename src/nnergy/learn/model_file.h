#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/progress.h"
#include "nnergy/features/feature_encoder.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/regress/regressor.h"

namespace nnergy::learn {

/// The `format` of every nnergy model file.
inline constexpr const char* kModelFileFormat = "nnergy-predictor";
/// Version of the model file layout; loading any other version is an error (no silent
/// migration).
inline constexpr int kModelFileFormatVersion = 1;

/// How to train a model file from a training table.
struct TrainSettings {
  std::string predictor = "forest";  ///< registry name of the regressor for every target
  std::uint64_t seed = 1;
  int threads = 0;                                  ///< 0 = the regressor's default
  nlohmann::json extra = nlohmann::json::object();  ///< FitOptions::extra, saved with the model
  std::string command_line;                         ///< for the context block
  /// Told the targets fitted of those to fit (time, and power when measured); empty: not told.
  ProgressCallback progress;
};

/// One fitted target of a model file.
struct TargetModel {
  std::unique_ptr<regress::Regressor> regressor;
  std::vector<std::string> feature_names;  ///< the columns the regressor was fitted on
  /// Quality figures saved with the model, e.g. {"training_set": {"inference": FitMetrics...}}.
  nlohmann::json metrics = nlohmann::json::object();
};

/// A trained predictor as stored in a `.nnp` file: one JSON document
///
///     {"format": "nnergy-predictor", "format_version": 1,
///      "context": {"tool_version", "created_utc", "command_line"},
///      "predictor": NAME,
///      "device": {"catalog_id", "dataset_name", "kind"},
///      "dataset": {"path", "digest_algorithm": "fnv1a-64", "digest", "rows_used",
///                  "rows_dropped", "power_values_dropped", "error_rows"},
///      "features": FeatureEncoder::to_json(),
///      "targets": {"time_s": {"regressor", "feature_names", "model", "metrics"},
///                  "power_w": {...} (absent when the dataset has no power)},
///      "training": {"seed", "threads", "settings", "modes", "dtypes", "clocks_mhz"}}
///
/// The regressors' models are their own language-neutral JSON (Regressor::save): no pickles.
/// Move-only; after construction read-only and safe to use from several threads.
class ModelFile {
 public:
  /// Fits `settings.predictor` to the time of every row of `table`, and to the power of the rows
  /// that have one (no power model when none has). Throws InvalidInput from the regressor (too
  /// few rows, ...) and for an unknown predictor name.
  static ModelFile train(const TrainingTable& table, const regress::RegressorRegistry& registry,
                         const TrainSettings& settings);

  /// Reads `path`. Throws InvalidInput naming the file and the problem for a file that cannot be
  /// read, is not JSON, is not an nnergy model file, has another format_version, names an
  /// unknown regressor, or whose feature schema differs from a target's saved feature names.
  static ModelFile load(const std::string& path, const regress::RegressorRegistry& registry);
  /// The same from the file's text; `source` names it in messages.
  static ModelFile parse(const std::string& text, const std::string& source,
                         const regress::RegressorRegistry& registry);

  /// Writes the file atomically (a temporary file in the same directory, then rename), so that a
  /// reader never sees half a model. Throws InvalidInput naming `path` when its directory does
  /// not exist or the file cannot be written.
  void save(const std::string& path) const;
  nlohmann::json to_json() const;

  const std::string& predictor() const { return predictor_; }
  const nlohmann::json& context() const { return context_; }
  const DeviceResolution& device() const { return device_; }
  const nlohmann::json& dataset() const { return dataset_; }
  const features::FeatureEncoder& encoder() const { return encoder_; }
  const TargetModel& time() const { return time_; }
  /// The power model; null when the dataset had no power measurements.
  const TargetModel* power() const { return power_ ? &*power_ : nullptr; }
  const nlohmann::json& training() const { return training_; }
  /// Modes, dtypes and clocks (MHz, 0 = default) of the training rows.
  std::vector<std::string> trained_modes() const;
  std::vector<std::string> trained_dtypes() const;
  std::vector<std::int64_t> trained_clocks_mhz() const;

 private:
  std::string predictor_;
  nlohmann::json context_;
  DeviceResolution device_;
  nlohmann::json dataset_;
  features::FeatureEncoder encoder_;
  TargetModel time_;
  std::optional<TargetModel> power_;
  nlohmann::json training_;
};

/// Throws InvalidInput naming `flag` and `path` when the directory that would hold `path` does
/// not exist or is not a directory (checked before any work, so that nothing is half-written).
void check_output_directory(const std::string& path, const std::string& flag);

}  // namespace nnergy::learn
