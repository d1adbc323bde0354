#pragma once

#include "nnergy/regress/regressor.h"

namespace nnergy::regress {

/// The registry summary of "resnet", shared with the `nnergy` executable, which registers it
/// without loading LibTorch until a resnet is made (apps/nnergy/torch_plugin.h).
inline constexpr const char* kResnetRegressorSummary =
    "ResPerfNet residual 1-D CNN (LibTorch), MAPLE loss, MC-dropout σ";

/// Adds the regressors built on LibTorch (library nnergy::predict_torch, only where
/// NNERGY_HAVE_TORCH): "resnet" (ResnetRegressor). Call it next to register_standard_regressors.
void register_torch_regressors(RegressorRegistry& registry);

}  // namespace nnergy::regress
