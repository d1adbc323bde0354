#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "nnergy/features/feature_matrix.h"

/// Input checks and the saved-model header shared by the Regressor implementations, so that
/// every regressor rejects the same bad input with the same message.
namespace nnergy::regress {

/// Version of the JSON written by the save() of the regressors in this library.
inline constexpr int kRegressorFormatVersion = 1;

/// Throws InvalidInput naming `regressor` when `y` does not have one value per row of `x`, `x`
/// has fewer than `min_rows` rows, a target is not positive and finite, or a feature is not
/// finite (row and column named).
void check_training_data(const std::string& regressor, const features::FeatureMatrix& x,
                         std::span<const double> y, std::size_t min_rows);

/// Throws InvalidInput naming `regressor` and the first difference when the columns of `x` are
/// not `expected` (same names, same order).
void check_feature_names(const std::string& regressor, const std::vector<std::string>& expected,
                         const features::FeatureMatrix& x);

/// Throws InvalidInput naming `regressor` when `extra` is not an object or has a key outside
/// `accepted` (a misspelt setting would otherwise be ignored silently).
void check_setting_names(const std::string& regressor, const nlohmann::json& extra,
                         const std::vector<std::string>& accepted);

/// The target a regressor models, from FitOptions::extra["target"]: "time_s" (the default when
/// absent) or "power_w"; InvalidInput naming `regressor` otherwise.
std::string target_setting(const std::string& regressor, const nlohmann::json& extra);

/// The fields every saved model starts with: {"regressor", "format_version", "feature_names"}.
nlohmann::json saved_model_header(const std::string& regressor,
                                  const std::vector<std::string>& feature_names);

/// Checks the header written by saved_model_header and returns the feature names. Throws
/// InvalidInput for JSON that is not an object, a model of another regressor or version, or
/// malformed feature names.
std::vector<std::string> read_saved_model_header(const std::string& regressor,
                                                 const nlohmann::json& model);

/// `model[key]`; throws InvalidInput naming `regressor` and `key` when `model` lacks it.
const nlohmann::json& saved_field(const std::string& regressor, const nlohmann::json& model,
                                  const std::string& key);

}  // namespace nnergy::regress
