#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/features/feature_matrix.h"
#include "nnergy/regress/regressor.h"

namespace nnergy::regress {

/// "poly-lasso": NeuralPower's sparse polynomial regression (seed 004 §3.1, Eqs. 1–2, and §4.1.1
/// for the model selection), one model per op family.
///
/// One pooled model is fitted over all rows, then one model per family
/// (features::FeatureMatrix::families) with at least `min_family_rows` rows. A family keeps its own
/// model only when the model's CV RMSE is no larger than the pooled model's out-of-fold RMSE on
/// that family's rows; otherwise, and for smaller families and families never seen in training, the
/// pooled model predicts. Each model is fitted as follows:
///  1. Base features: the columns that vary within the family, without the `op=` one-hots (they
///     are constant within a family), and log(1 + x) of every non-negative, non-binary column
///     not already a log — for target power_w as seed 004 §3.1 does ("we include the
///     logarithmic terms of the features"), and for the log transform because a polynomial in
///     log features is a product of powers of the features, the form time takes against size.
///     Each base feature is z-scored over the family's rows.
///  2. A degree-d expansion of m features has C(m+d, d) − 1 terms, which explodes for degree 3,
///     so only the m base features with the highest |Pearson correlation| with the fitted target
///     enter the polynomial, m the largest keeping the terms within `max_terms` (default 500:
///     m = 12 for degree 3, 30 for degree 2). The special terms (flop_count, byte_count,
///     roofline_time_s, …: Eq. 1, second sum) and, in the pooled model, the `op=` one-hots are
///     added linearly when they are not already among them.
///  3. Lasso by cyclic coordinate descent over a geometric λ path from λ_max (the smallest λ
///     that keeps every coefficient at 0) down to 10⁻³·λ_max, with warm starts. At each λ the
///     kept terms are also refitted by least squares (relaxed Lasso), which removes the Lasso's
///     shrinkage when the data support it.
///  4. The degree d ∈ {1, …, max_degree}, λ and plain-or-refitted are chosen together by
///     `folds`-fold CV (default 10) on the RMSE of the fitted target (seed 004 §4.1.1); among
///     settings within 0.1 % of the best, the lowest degree, then the largest λ, then the plain
///     Lasso wins.
///
/// The fitted target is log(y) by default ("transform": "log"): measured times span six orders
/// of magnitude, so a fit of y would serve the largest ops only, and exp() keeps predictions
/// positive. "transform": "identity" fits y itself as seed 004 does. A polynomial explodes
/// outside the range it was fitted on (a cubic of an unseen size, or of an op kind the pooled
/// model never saw, predicted hours for a ViT MatMul), so at prediction each base feature is
/// clamped to the range it had in the model's training rows, and predictions are kept within
/// [min y / 10³, max y · 10³] of the training targets. Ops larger than any seen are therefore
/// predicted as the largest seen: poly-lasso does not extrapolate (the hybrid model does).
///
/// Uncertainty: σ, the out-of-fold RMSE of the chosen setting in the fitted space (for a family
/// served by the pooled model, the pooled model's on that family's rows). For the log transform
/// the delta method gives stddev(y) ≈ y·σ; for identity, stddev = σ.
///
/// FitOptions.extra (all optional): "target" ("time_s" | "power_w", default "time_s"),
/// "transform" ("log" | "identity"), "max_degree" (1–3, default 3), "max_terms" (1–5000,
/// default 500), "min_family_rows" (≥ folds, default folds), "folds" (2–20, default 10),
/// "lambda_count" (2–200, default 40). Other keys, wrong types or values throw InvalidInput.
/// fit() is deterministic for a given FitOptions.seed (it shuffles the CV folds).
class PolyLassoRegressor : public Regressor {
 public:
  /// One input of the polynomial: a matrix column, optionally log(1 + x), z-scored.
  struct BaseFeature {
    std::string name;        ///< the column name, or "log1p(<column>)"
    std::size_t column = 0;  ///< index into features::FeatureMatrix::names
    bool log1p = false;      ///< the value is log(1 + x) of the column
    bool expanded = false;   ///< enters the polynomial (true) or only linearly (special term)
    double mean = 0;         ///< z = (value − mean) / stddev
    double stddev = 1;
    double min = 0;  ///< smallest value over the training rows; predictions clamp to [min, max]
    double max = 0;  ///< largest value over the training rows
  };
  /// One kept term: coefficient · Π z_i^power_i over the family's base features.
  struct Term {
    std::string name;                                 ///< e.g. "flop_count^2*byte_count"
    std::vector<std::pair<std::size_t, int>> powers;  ///< (index into base features, power)
    double coefficient = 0;  ///< in the fitted space per unit of the product
    double stddev = 0;       ///< of the product over the training rows (for feature_importance)
  };
  /// The model of one family (or the pooled model).
  struct FamilyModel {
    std::size_t rows = 0;   ///< training rows
    int degree = 1;         ///< chosen polynomial degree
    double lambda = 0;      ///< chosen Lasso penalty, on the z-scored terms
    bool relaxed = false;   ///< kept terms refitted by least squares
    double cv_rmse = 0;     ///< CV RMSE of the chosen setting, in the fitted space
    double intercept = 0;   ///< in the fitted space
    double min_target = 0;  ///< smallest and largest training target (y, not transformed)
    double max_target = 0;
    std::vector<BaseFeature> base;
    std::vector<Term> terms;  ///< non-zero terms only
  };

  std::string name() const override { return "poly-lasso"; }
  std::string description() const override;
  void fit(const features::FeatureMatrix& x, std::span<const double> y,
           const FitOptions& options) override;
  std::vector<Prediction> predict(const features::FeatureMatrix& x) const override;
  nlohmann::json save() const override;
  void load(const nlohmann::json& model) override;
  std::vector<std::pair<std::string, double>> feature_importance() const override;

  /// A training family served by the pooled model.
  struct PooledFamily {
    std::size_t rows = 0;  ///< its training rows
    double cv_rmse = 0;    ///< the pooled model's CV RMSE on those rows, in the fitted space
  };

  /// The model fitted for `family`, or nullptr when that family uses the pooled model.
  const FamilyModel* family_model(const std::string& family) const;
  /// The model over all rows. Throws InternalError before fit() or load().
  const FamilyModel& pooled_model() const;
  /// The training families the pooled model serves, by name.
  const std::map<std::string, PooledFamily>& pooled_families() const;

 private:
  std::vector<std::string> feature_names_;
  std::string target_ = "time_s";
  bool log_transform_ = true;
  nlohmann::json settings_;  ///< the extra options in effect, saved with the model
  std::optional<FamilyModel> pooled_;
  std::map<std::string, FamilyModel> families_;
  std::map<std::string, PooledFamily> pooled_families_;
};

}  // namespace nnergy::regress
