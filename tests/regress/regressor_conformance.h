#pragma once

#include "nnergy/regress/regressor.h"

/// The conformance suite (regressor_conformance_test.cc) runs against every regressor of
/// conformance_registry(), which each test binary that compiles the suite defines: the standard
/// regressors in predict_test, the LibTorch ones in their own binary.
namespace nnergy::regress::testing {

/// The regressors to check, by name. Defined once per test binary.
const RegressorRegistry& conformance_registry();

}  // namespace nnergy::regress::testing
