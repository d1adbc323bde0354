#include "nnergy/regress/regressor_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"

namespace nnergy::regress {

void check_training_data(const std::string& regressor, const features::FeatureMatrix& x,
                         std::span<const double> y, std::size_t min_rows) {
  if (x.values.size() != x.rows() * x.columns()) {
    throw InvalidInput(fmt::format("{}: feature matrix holds {} values for {} rows x {} columns",
                                   regressor, x.values.size(), x.rows(), x.columns()));
  }
  if (y.size() != x.rows()) {
    throw InvalidInput(
        fmt::format("{}: {} target values for {} feature rows", regressor, y.size(), x.rows()));
  }
  if (x.rows() < min_rows) {
    throw InvalidInput(fmt::format("{}: {} training rows, the model needs at least {}", regressor,
                                   x.rows(), min_rows));
  }
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i]) || y[i] <= 0) {
      throw InvalidInput(fmt::format(
          "{}: target of row {} is {}; targets must be positive and finite", regressor, i, y[i]));
    }
  }
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const auto row = x.row(i);
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (!std::isfinite(row[c])) {
        throw InvalidInput(fmt::format("{}: feature '{}' of row {} is {}; features must be finite",
                                       regressor, x.names[c], i, row[c]));
      }
    }
  }
}

void check_feature_names(const std::string& regressor, const std::vector<std::string>& expected,
                         const features::FeatureMatrix& x) {
  if (x.values.size() != x.rows() * x.columns()) {
    throw InvalidInput(fmt::format("{}: feature matrix holds {} values for {} rows x {} columns",
                                   regressor, x.values.size(), x.rows(), x.columns()));
  }
  const std::size_t common = std::min(expected.size(), x.names.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (x.names[i] != expected[i]) {
      throw InvalidInput(fmt::format(
          "{}: feature column {} is '{}', the model was fitted with '{}' (another feature schema)",
          regressor, i, x.names[i], expected[i]));
    }
  }
  if (x.names.size() != expected.size()) {
    throw InvalidInput(
        fmt::format("{}: {} feature columns, the model was fitted on {} (another feature schema)",
                    regressor, x.names.size(), expected.size()));
  }
}

void check_setting_names(const std::string& regressor, const nlohmann::json& extra,
                         const std::vector<std::string>& accepted) {
  if (!extra.is_object()) {
    throw InvalidInput(
        fmt::format("{}: settings must be a JSON object, found {}", regressor, extra.type_name()));
  }
  for (const auto& [key, value] : extra.items()) {
    if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
      throw InvalidInput(fmt::format("{}: unknown setting '{}'; accepted: {}", regressor, key,
                                     join_with_commas(accepted)));
    }
  }
}

std::string target_setting(const std::string& regressor, const nlohmann::json& extra) {
  const auto it = extra.find("target");
  if (it == extra.end()) return "time_s";
  if (it->is_string() && (*it == "time_s" || *it == "power_w")) return it->get<std::string>();
  throw InvalidInput(fmt::format("{}: setting 'target' must be \"time_s\" or \"power_w\", found {}",
                                 regressor, core::describe_json_value(*it)));
}

nlohmann::json saved_model_header(const std::string& regressor,
                                  const std::vector<std::string>& feature_names) {
  return {{"regressor", regressor},
          {"format_version", kRegressorFormatVersion},
          {"feature_names", feature_names}};
}

const nlohmann::json& saved_field(const std::string& regressor, const nlohmann::json& model,
                                  const std::string& key) {
  const auto it = model.find(key);
  if (it == model.end()) {
    throw InvalidInput(fmt::format("{} model: missing \"{}\"", regressor, key));
  }
  return *it;
}

std::vector<std::string> read_saved_model_header(const std::string& regressor,
                                                 const nlohmann::json& model) {
  if (!model.is_object()) {
    throw InvalidInput(
        fmt::format("{} model: expected a JSON object, found {}", regressor, model.type_name()));
  }
  const nlohmann::json& name = saved_field(regressor, model, "regressor");
  if (!name.is_string() || name.get<std::string>() != regressor) {
    throw InvalidInput(fmt::format("{} model: the file holds a {} model", regressor,
                                   core::describe_json_value(name)));
  }
  const nlohmann::json& version = saved_field(regressor, model, "format_version");
  if (!version.is_number_integer() || version.get<int>() != kRegressorFormatVersion) {
    throw InvalidInput(
        fmt::format("{} model: format version {} is not supported (this nnergy "
                    "reads version {})",
                    regressor, core::describe_json_value(version), kRegressorFormatVersion));
  }
  const nlohmann::json& names = saved_field(regressor, model, "feature_names");
  if (!names.is_array() || names.empty() ||
      !std::all_of(names.begin(), names.end(),
                   [](const nlohmann::json& n) { return n.is_string(); })) {
    throw InvalidInput(
        fmt::format("{} model: \"feature_names\" must be a non-empty array of strings", regressor));
  }
  return names.get<std::vector<std::string>>();
}

}  // namespace nnergy::regress
