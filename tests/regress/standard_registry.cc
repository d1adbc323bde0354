#include "regressor_conformance.h"

namespace nnergy::regress::testing {

const RegressorRegistry& conformance_registry() {
  static const RegressorRegistry registry = [] {
    RegressorRegistry r;
    register_standard_regressors(r);
    return r;
  }();
  return registry;
}

}  // namespace nnergy::regress::testing
