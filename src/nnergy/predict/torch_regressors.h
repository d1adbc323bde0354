#pragma once

#include "nnergy/predict/regressor.h"

namespace nnergy::predict {

/// Adds the regressors built on LibTorch (library nnergy::predict_torch, only where
/// NNERGY_HAVE_TORCH): "resnet" (ResnetRegressor). Call it next to register_standard_regressors.
void register_torch_regressors(RegressorRegistry& registry);

}  // namespace nnergy::predict
