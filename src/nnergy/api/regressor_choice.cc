#include "nnergy/api/regressor_choice.h"

#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::api::detail {

RegressorChoice::RegressorChoice(const predict::RegressorRegistry* requested)
    : requested_(requested) {
  if (requested_ == nullptr) predict::register_standard_regressors(standard_);
}

void RegressorChoice::check(const std::string& name, SettingNames names) const {
  if (registry().contains(name)) return;
  std::vector<std::string> known;
  for (const auto& [n, summary] : registry().entries()) known.push_back(n);
  throw InvalidInput(setting_with_value(names, "predictor", name) +
                     ": unknown predictor; known: " + join_with_commas(known));
}

}  // namespace nnergy::api::detail
