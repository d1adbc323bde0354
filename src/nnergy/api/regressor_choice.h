#pragma once

// What api/train.cc and api/evaluate.cc share: the registry a request names and the check of a
// regressor name against it. Internal to nnergy::api.

#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/predict/regressor.h"

namespace nnergy::api::detail {

/// The regressors a request may use: `*requested`, or the standard ones when it is null.
class RegressorChoice {
 public:
  explicit RegressorChoice(const predict::RegressorRegistry* requested);
  const predict::RegressorRegistry& registry() const {
    return requested_ ? *requested_ : standard_;
  }
  /// Throws InvalidInput "<setting NAME>: unknown predictor; known: ..." (setting `predictor`
  /// as `names` spells it) unless the registry has `name`.
  void check(const std::string& name, SettingNames names) const;

 private:
  const predict::RegressorRegistry* requested_;
  predict::RegressorRegistry standard_;
};

}  // namespace nnergy::api::detail
