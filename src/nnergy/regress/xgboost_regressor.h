#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nnergy/regress/regressor.h"

namespace nnergy::regress {

/// Tree ensembles through the XGBoost C API: a random forest ("forest") or gradient-boosted
/// trees ("boost"), the predictors of seed 000 ch. 5.
///
/// Both fit log(y) and predict exp(·): measured op times span six orders of magnitude (µs
/// elementwise ops to 100 ms convolutions), and a squared error on y itself would spend every
/// split on the few largest ops; in log space the loss is a relative error for every op.
/// Hence the point prediction is the geometric-mean estimate.
///
/// Settings (FitOptions::extra; every one is saved with the model; an unknown key is
/// InvalidInput):
///   - both: "target" ("time_s" default or "power_w": recorded, the log transform suits both),
///     "tree_method" ("exact", "hist" or "approx"), "max_depth", "subsample" (share of rows
///     per tree), "colsample_bynode" (share of features per split), "min_child_weight" (rows
///     per leaf, squared error), "lambda" (L2 on leaf values).
///   - forest (random-forest mode: one round of "num_parallel_tree" trees, eta 1, no boosting):
///     defaults num_parallel_tree 100 (sklearn's and seed 000's forest size), tree_method exact,
///     max_depth 14, subsample 0.8, colsample_bynode 0.8, min_child_weight 3, lambda 0 (plain
///     leaf means, as in a random forest).
///   - boost: "rounds" 500, "eta" 0.05, tree_method hist, max_depth 6, subsample 0.8,
///     colsample_bynode 1, min_child_weight 3, lambda 1, "uncertainty_bags" 5.
/// Why these: on the CPU dataset (923 training rows, 269 columns, one busy core) 100 exact trees
/// fit in 2.4 s into a 2 MB model that loads in 0.2 s; 300 trees took 7.7 s and 6 MB for a test
/// R² 0.04 higher; hist was slower for the forest (3.5 s) and faster for boosting.
/// FitOptions::seed makes fits reproducible (same seed, data and thread count: same model);
/// FitOptions::threads 0 means 1 (XGBoost's OpenMP threads busy-wait: on a machine whose cores
/// are busy, 2 threads were ~25× slower than 1).
///
/// Uncertainty (Prediction::stddev), by the delta method σ_y = ŷ·σ_z from a spread σ_z in log
/// space:
///   - forest: σ_z is the standard deviation across the trees of each tree's own prediction
///     (XGBoost leaf indices looked up in the saved model's leaf values). It measures how much
///     the bootstrap-like trees disagree, not the measurement noise.
///   - boost: the trees of one booster are not separate estimates (each corrects the previous
///     ones), so σ_z is the sample standard deviation of `uncertainty_bags` further boosters,
///     each fitted on a bootstrap resample of the rows (instance weights drawn from the seed);
///     the point prediction stays the booster fitted on all rows. 0 bags gives stddev 0 and a
///     fit 1/(1+bags) as long.
///
/// save(): {"regressor", "format_version", "feature_names", "settings",
/// "xgboost_model_ubj_base64": XGBoost's own UBJSON model (binary JSON, XGBoost's recommended
/// format; XGBoost's Python `Booster.load_model` takes the decoded bytes as a bytearray), base64;
/// forest: "tree_leaf_values" (per tree, the XGBoost JSON model's split_conditions: leaf values
/// at leaf nodes, indexed by node id) and "base_score" (log-space intercept), the per-tree
/// spread's inputs; boost: "bagged_models_ubj_base64": [...]}. UBJSON rather than XGBoost's JSON
/// text because XGBoost parses the text of a 100-tree forest in ~60 ms and the UBJSON in ~6 ms,
/// which decides whether `nnergy predict --predictor` answers in under 100 ms. Thread-safe after
/// fit() or load() (XGBoost calls are serialized by a mutex). Do not keep a fitted instance in
/// static storage: XGBoost frees its thread-local state at exit before static destructors run, and
/// freeing a booster after that corrupts the heap.
class XgboostRegressor : public Regressor {
 public:
  enum class Kind { kForest, kBoost };

  explicit XgboostRegressor(Kind kind);
  ~XgboostRegressor() override;
  XgboostRegressor(const XgboostRegressor&) = delete;
  XgboostRegressor& operator=(const XgboostRegressor&) = delete;
  XgboostRegressor(XgboostRegressor&&) noexcept;
  XgboostRegressor& operator=(XgboostRegressor&&) noexcept;

  std::string name() const override;
  std::string description() const override;
  void fit(const features::FeatureMatrix& x, std::span<const double> y,
           const FitOptions& options) override;
  std::vector<Prediction> predict(const features::FeatureMatrix& x) const override;
  nlohmann::json save() const override;
  void load(const nlohmann::json& model) override;
  /// Total gain of each feature's splits (XGBoost "total_gain"), as shares summing to 1; only
  /// features that split somewhere; for boost, of the booster fitted on all rows.
  std::vector<std::pair<std::string, double>> feature_importance() const override;

  /// The settings of the fitted or loaded model, every key present (see the class comment).
  nlohmann::json settings() const;

 private:
  struct Settings;
  struct Model;

  Kind kind_;
  std::vector<std::string> feature_names_;  ///< empty until fit() or load()
  std::unique_ptr<Settings> settings_;
  std::unique_ptr<Model> model_;
};

}  // namespace nnergy::regress
