#pragma once

#include <string>
#include <vector>

#include "nnergy/regress/regressor.h"

namespace nnergy::regress {

/// The analytical model (roofline time, archline power: AnalyticalPredictor) behind the
/// Regressor interface, so that it is evaluated and reported like the learned ones. It learns
/// nothing: it reads the feature column `analytical_time_s` (target "time_s") or
/// `analytical_power_w` (target "power_w") that features::FeatureEncoder computed.
///
/// Settings (FitOptions::extra, saved with the model): "target": "time_s" (default) or
/// "power_w". fit() only checks the data and that the column exists; predictions carry
/// stddev 0 (the model gives no uncertainty), and are 0 for an op with no work. Thread-safe
/// after fit() or load().
class AnalyticalRegressor : public Regressor {
 public:
  /// The feature column holding the analytical estimate of `target` ("time_s" or "power_w").
  static std::string column_for_target(const std::string& target);

  std::string name() const override { return "analytical"; }
  std::string description() const override;
  void fit(const features::FeatureMatrix& x, std::span<const double> y,
           const FitOptions& options) override;
  std::vector<Prediction> predict(const features::FeatureMatrix& x) const override;
  nlohmann::json save() const override;
  void load(const nlohmann::json& model) override;
  std::vector<std::pair<std::string, double>> feature_importance() const override;

 private:
  /// Index of the analytical column of `target` in `names`; InvalidInput when it is missing.
  static std::size_t target_column(const std::vector<std::string>& names,
                                   const std::string& target);

  std::vector<std::string> feature_names_;  ///< empty until fit() or load()
  std::string target_ = "time_s";
  std::size_t column_ = 0;  ///< index of the target's analytical column
};

}  // namespace nnergy::regress
