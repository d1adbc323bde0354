#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nnergy/regress/analytical_regressor.h"
#include "nnergy/regress/regressor.h"
#include "nnergy/regress/xgboost_regressor.h"

namespace nnergy::regress {

/// The analytical estimate times a learned correction: ŷ = a · exp(c(x)), where a is the
/// feature column analytical_time_s (target "time_s") or analytical_power_w (target
/// "power_w") and c is a gradient-boosted tree model (XgboostRegressor "boost", which fits
/// log of its target) of log(y / a) on the same features.
///
/// Why: trees cannot extrapolate beyond the sizes they saw — a forest predicts at most the
/// largest time of its training set, however large the op — whereas the analytical term grows
/// with the op's flops and bytes; the trees only learn the (bounded) ratio of measured to
/// analytical, which is what a device's real efficiency makes of the roofline.
///
/// Settings (FitOptions::extra): those of "boost" (XgboostRegressor), "target" included,
/// saved with the model. Rows whose analytical column is not positive and finite are
/// InvalidInput (an op with no work has no ratio to learn). Uncertainty: a · σ of the
/// correction. Thread-safe after fit() or load().
class HybridRegressor : public Regressor {
 public:
  HybridRegressor();

  std::string name() const override { return "hybrid"; }
  std::string description() const override;
  void fit(const features::FeatureMatrix& x, std::span<const double> y,
           const FitOptions& options) override;
  std::vector<Prediction> predict(const features::FeatureMatrix& x) const override;
  nlohmann::json save() const override;
  void load(const nlohmann::json& model) override;
  /// The correction model's importances.
  std::vector<std::pair<std::string, double>> feature_importance() const override;

 private:
  /// The analytical column of every row; InvalidInput naming a row whose value is not positive.
  std::vector<double> base_values(const features::FeatureMatrix& x) const;

  AnalyticalRegressor base_;
  XgboostRegressor correction_;
  std::vector<std::string> feature_names_;  ///< empty until fit() or load()
};

}  // namespace nnergy::regress
