// The regressors `nnergy train`, `evaluate` and `predict --predictor FILE` can use.
#include "command.h"

#ifdef NNERGY_HAVE_TORCH_REGRESSORS
#include "nnergy/predict/torch_regressors.h"
#include "torch_plugin.h"
#endif

namespace nnergy::cli {

predict::RegressorRegistry available_regressors() {
  predict::RegressorRegistry registry;
  predict::register_standard_regressors(registry);
#ifdef NNERGY_HAVE_TORCH_REGRESSORS
  // Made by the LibTorch plugin, loaded only when a resnet is made.
  registry.add("resnet", predict::kResnetRegressorSummary,
               [] { return torch_plugin().make_resnet(); });
#endif
  return registry;
}

}  // namespace nnergy::cli
