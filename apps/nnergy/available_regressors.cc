// The regressors `nnergy train`, `evaluate` and `predict --predictor FILE` can use.
#include "command.h"

#ifdef NNERGY_HAVE_TORCH_REGRESSORS
#include "nnergy/regress/torch_regressors.h"
#include "torch_plugin.h"
#endif

namespace nnergy::cli {

regress::RegressorRegistry available_regressors() {
  regress::RegressorRegistry registry;
  regress::register_standard_regressors(registry);
#ifdef NNERGY_HAVE_TORCH_REGRESSORS
  // Made by the LibTorch plugin, loaded only when a resnet is made.
  registry.add("resnet", regress::kResnetRegressorSummary,
               [] { return torch_plugin().make_resnet(); });
#endif
  return registry;
}

}  // namespace nnergy::cli
