// The regressors `nnergy train`, `evaluate` and `predict --predictor FILE` can use.
#include "command.h"

#ifdef NNERGY_HAVE_TORCH_REGRESSORS
#include "nnergy/predict/torch_regressors.h"
#endif

namespace nnergy::cli {

predict::RegressorRegistry available_regressors() {
  predict::RegressorRegistry registry;
  predict::register_standard_regressors(registry);
#ifdef NNERGY_HAVE_TORCH_REGRESSORS
  predict::register_torch_regressors(registry);
#endif
  return registry;
}

}  // namespace nnergy::cli
