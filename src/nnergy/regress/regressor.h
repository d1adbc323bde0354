#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/registry.h"
#include "nnergy/features/feature_matrix.h"

/// Learned regressors (seed 000 ch. 5, seed 002, seed 004): one interface, a registry filled by
/// an explicit call, and one conformance suite (tests/predict) run against every implementation.
namespace nnergy::regress {

/// One predicted value with its uncertainty, in the unit of the target (s for time, W for power).
struct Prediction {
  double value = 0;
  double stddev = 0;  ///< 1σ uncertainty of `value` as the model estimates it; 0 when unknown
};

/// Settings every regressor understands. Implementation-specific settings go in `extra`
/// (documented by each implementation) so that they are saved with the model.
struct FitOptions {
  std::uint64_t seed = 1;  ///< random seed: the same seed and data give the same model
  int threads = 0;         ///< worker threads; 0 = the implementation's default
  nlohmann::json extra = nlohmann::json::object();
};

/// A model of one positive target (time per iteration or average power) from a
/// features::FeatureMatrix. fit() may be called once; predict() and save() after fit() or load().
/// After fitting or loading, predict() is const and safe to call from several threads.
class Regressor {
 public:
  virtual ~Regressor() = default;

  /// Registry name, e.g. "forest", "boost", "poly-lasso", "resnet", "hybrid", "analytical".
  virtual std::string name() const = 0;
  /// One line on what the model is, shown beside its predictions.
  virtual std::string description() const = 0;

  /// Fits the model to (`x`, `y`). `y` holds positive, finite target values, one per row of `x`.
  /// Throws InvalidInput for mismatched sizes, too few rows for the model, or non-positive or
  /// non-finite targets.
  virtual void fit(const features::FeatureMatrix& x, std::span<const double> y,
                   const FitOptions& options) = 0;

  /// Predictions for every row of `x`, whose columns must be those the model was fitted on
  /// (same names, same order; InvalidInput naming the first difference otherwise).
  virtual std::vector<Prediction> predict(const features::FeatureMatrix& x) const = 0;

  /// The fitted model as language-neutral JSON (coefficients, trees, weights: never pickles),
  /// including the feature names it expects.
  virtual nlohmann::json save() const = 0;
  /// Restores a model written by save(). Throws InvalidInput naming what is wrong for JSON of
  /// another regressor or a malformed model.
  virtual void load(const nlohmann::json& model) = 0;

  /// Relative importance of each feature (name, share; shares sum to 1), most important first.
  /// Empty when the model has none to give.
  virtual std::vector<std::pair<std::string, double>> feature_importance() const { return {}; }
};

/// Makes a fresh, unfitted regressor.
using RegressorFactory = std::function<std::unique_ptr<Regressor>()>;

/// Regressors by name (core/registry.h), each a factory of fresh ones. Filled by explicit calls
/// (register_standard_regressors, and register_torch_regressors where LibTorch is built), never
/// by static initialisers. Not thread-safe to modify; safe to read concurrently.
class RegressorRegistry : public Registry<RegressorFactory> {
 public:
  RegressorRegistry() : Registry("predictor") {}
  /// A new regressor called `name`; throws InvalidInput listing the accepted names otherwise.
  std::unique_ptr<Regressor> create(std::string_view name) const { return get(name)(); }
};

/// Adds the regressors of this library: forest, boost, poly-lasso, hybrid, analytical.
void register_standard_regressors(RegressorRegistry& registry);

}  // namespace nnergy::regress
