#include <memory>

#include "nnergy/regress/resnet_regressor.h"
#include "regressor_conformance.h"

namespace nnergy::regress::testing {

/// ResPerfNet with test-sized defaults: register_torch_regressors' seed defaults (width 128,
/// 200 epochs) take minutes per fit, and the suite fits twice. The class and its contract are
/// the same; resnet_regressor_test checks register_torch_regressors itself.
const RegressorRegistry& conformance_registry() {
  static const RegressorRegistry registry = [] {
    ResnetRegressor::Settings small;
    small.width = 32;
    small.epochs = 40;
    small.batch_size = 32;
    small.learning_rate = 5e-3;
    small.lr_decay_period_epochs = 8;
    RegressorRegistry r;
    r.add("resnet", "ResPerfNet, test-sized",
          [small] { return std::make_unique<ResnetRegressor>(small); });
    return r;
  }();
  return registry;
}

}  // namespace nnergy::regress::testing
