#include "nnergy/regress/hybrid_regressor.h"

#include <fmt/format.h>

#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/regress/regressor_checks.h"

namespace nnergy::regress {

namespace {

constexpr const char* kName = "hybrid";

}  // namespace

HybridRegressor::HybridRegressor() : correction_(XgboostRegressor::Kind::kBoost) {}

std::string HybridRegressor::description() const {
  return fmt::format("analytical {} times a learned correction: {}",
                     correction_.settings()["target"].get<std::string>(),
                     correction_.description());
}

std::vector<double> HybridRegressor::base_values(const features::FeatureMatrix& x) const {
  const std::vector<Prediction> base = base_.predict(x);
  std::vector<double> out(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) {
    if (!std::isfinite(base[i].value) || base[i].value <= 0) {
      throw InvalidInput(fmt::format(
          "{}: the analytical estimate of row {} ({}) is {}; the hybrid model needs a positive one",
          kName, i, x.families.at(i), base[i].value));
    }
    out[i] = base[i].value;
  }
  return out;
}

void HybridRegressor::fit(const features::FeatureMatrix& x, std::span<const double> y,
                          const FitOptions& options) {
  // The analytical part checks the data and finds the target's column; the correction checks
  // its own settings.
  FitOptions base_options = options;
  base_options.extra = nlohmann::json::object();
  if (options.extra.is_object() && options.extra.contains("target")) {
    base_options.extra["target"] = options.extra["target"];
  }
  check_training_data(kName, x, y, 1);
  base_.fit(x, y, base_options);
  const std::vector<double> base = base_values(x);
  std::vector<double> ratio(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) ratio[i] = y[i] / base[i];
  correction_.fit(x, ratio, options);
  feature_names_ = x.names;
}

std::vector<Prediction> HybridRegressor::predict(const features::FeatureMatrix& x) const {
  if (feature_names_.empty()) {
    throw InternalError("hybrid regressor: predict() before fit() or load()");
  }
  check_feature_names(kName, feature_names_, x);
  const std::vector<double> base = base_values(x);
  std::vector<Prediction> out = correction_.predict(x);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].value *= base[i];
    out[i].stddev *= base[i];
  }
  return out;
}

nlohmann::json HybridRegressor::save() const {
  if (feature_names_.empty()) {
    throw InternalError("hybrid regressor: save() before fit() or load()");
  }
  nlohmann::json model = saved_model_header(kName, feature_names_);
  model["settings"] = {{"target", correction_.settings()["target"]}};
  model["correction"] = correction_.save();
  return model;
}

void HybridRegressor::load(const nlohmann::json& model) {
  std::vector<std::string> names = read_saved_model_header(kName, model);
  const nlohmann::json& settings = saved_field(kName, model, "settings");
  check_setting_names(kName, settings, {"target"});
  const nlohmann::json& correction = saved_field(kName, model, "correction");
  XgboostRegressor loaded_correction(XgboostRegressor::Kind::kBoost);
  loaded_correction.load(correction);
  if (correction["feature_names"] != model["feature_names"] ||
      loaded_correction.settings()["target"] != nlohmann::json(target_setting(kName, settings))) {
    throw InvalidInput(
        "hybrid model: the correction's feature names or target differ from the model's");
  }
  nlohmann::json base_model = saved_model_header("analytical", names);
  base_model["settings"] = settings;
  AnalyticalRegressor loaded_base;
  loaded_base.load(base_model);
  base_ = std::move(loaded_base);
  correction_ = std::move(loaded_correction);
  feature_names_ = std::move(names);
}

std::vector<std::pair<std::string, double>> HybridRegressor::feature_importance() const {
  if (feature_names_.empty()) return {};
  return correction_.feature_importance();
}

}  // namespace nnergy::regress
