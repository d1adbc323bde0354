#include "nnergy/regress/analytical_regressor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/regress/regressor_checks.h"

namespace nnergy::regress {

namespace {

constexpr const char* kName = "analytical";

}  // namespace

std::string AnalyticalRegressor::column_for_target(const std::string& target) {
  if (target == "time_s") return "analytical_time_s";
  if (target == "power_w") return "analytical_power_w";
  throw InvalidInput(
      fmt::format("analytical: target must be \"time_s\" or \"power_w\", found '{}'", target));
}

std::string AnalyticalRegressor::description() const {
  return fmt::format(
      "analytical {} (roofline time, archline power, see docs/archline.md), not fitted "
      "to measurements",
      target_);
}

std::size_t AnalyticalRegressor::target_column(const std::vector<std::string>& names,
                                               const std::string& target) {
  const std::string column = column_for_target(target);
  const auto it = std::find(names.begin(), names.end(), column);
  if (it == names.end()) {
    throw InvalidInput(
        fmt::format("{}: no feature column '{}' for target {}", kName, column, target));
  }
  return static_cast<std::size_t>(it - names.begin());
}

void AnalyticalRegressor::fit(const features::FeatureMatrix& x, std::span<const double> y,
                              const FitOptions& options) {
  check_setting_names(kName, options.extra, {"target"});
  check_training_data(kName, x, y, 1);
  const std::string target = target_setting(kName, options.extra);
  column_ = target_column(x.names, target);
  target_ = target;
  feature_names_ = x.names;
}

std::vector<Prediction> AnalyticalRegressor::predict(const features::FeatureMatrix& x) const {
  if (feature_names_.empty()) {
    throw InternalError("analytical regressor: predict() before fit() or load()");
  }
  check_feature_names(kName, feature_names_, x);
  std::vector<Prediction> out;
  out.reserve(x.rows());
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const double value = x.row(i)[column_];
    if (!std::isfinite(value) || value < 0) {
      throw InvalidInput(fmt::format("{}: feature '{}' of row {} is {}", kName,
                                     feature_names_[column_], i, value));
    }
    out.push_back({value, 0});
  }
  return out;
}

nlohmann::json AnalyticalRegressor::save() const {
  if (feature_names_.empty()) {
    throw InternalError("analytical regressor: save() before fit() or load()");
  }
  nlohmann::json model = saved_model_header(kName, feature_names_);
  model["settings"] = {{"target", target_}};
  return model;
}

void AnalyticalRegressor::load(const nlohmann::json& model) {
  std::vector<std::string> names = read_saved_model_header(kName, model);
  const nlohmann::json& settings = saved_field(kName, model, "settings");
  check_setting_names(kName, settings, {"target"});
  const std::string target = target_setting(kName, settings);
  column_ = target_column(names, target);
  target_ = target;
  feature_names_ = std::move(names);
}

std::vector<std::pair<std::string, double>> AnalyticalRegressor::feature_importance() const {
  if (feature_names_.empty()) return {};
  return {{feature_names_[column_], 1.0}};
}

}  // namespace nnergy::regress
