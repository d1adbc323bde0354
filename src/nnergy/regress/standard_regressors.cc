#include <memory>

#include "nnergy/regress/analytical_regressor.h"
#include "nnergy/regress/hybrid_regressor.h"
#include "nnergy/regress/poly_lasso_regressor.h"
#include "nnergy/regress/regressor.h"
#include "nnergy/regress/xgboost_regressor.h"

namespace nnergy::regress {

void register_standard_regressors(RegressorRegistry& registry) {
  registry.add("analytical", "roofline time / archline power from the op's features, not fitted",
               [] { return std::make_unique<AnalyticalRegressor>(); });
  registry.add("forest", "random forest (XGBoost) on log target, uncertainty from tree spread",
               [] { return std::make_unique<XgboostRegressor>(XgboostRegressor::Kind::kForest); });
  registry.add("boost", "gradient-boosted trees (XGBoost) on log target, bagged uncertainty",
               [] { return std::make_unique<XgboostRegressor>(XgboostRegressor::Kind::kBoost); });
  registry.add("poly-lasso", "NeuralPower sparse polynomial per op family (Lasso, degree by CV)",
               [] { return std::make_unique<PolyLassoRegressor>(); });
  registry.add("hybrid",
               "analytical estimate times a boosted-tree correction of log(measured/analytical)",
               [] { return std::make_unique<HybridRegressor>(); });
}

}  // namespace nnergy::regress
