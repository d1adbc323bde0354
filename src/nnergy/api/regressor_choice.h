#pragma once

// What api/train.cc and api/evaluate.cc share: the registry a request names and the check of a
// regressor name against it, the thread-count check, and the training table of a dataset.
// Internal to nnergy::api.

#include <filesystem>
#include <optional>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/regress/regressor.h"

namespace nnergy::api::detail {

/// The regressors a request may use: `*requested`, or the standard ones when it is null.
class RegressorChoice {
 public:
  explicit RegressorChoice(const regress::RegressorRegistry* requested);
  const regress::RegressorRegistry& registry() const {
    return requested_ ? *requested_ : standard_;
  }
  /// Throws InvalidInput "<setting NAME>: unknown predictor 'NAME'; accepted: ..." (setting
  /// `predictor` as `names` spells it) unless the registry has `name`.
  void check(const std::string& name, SettingNames names) const;

 private:
  const regress::RegressorRegistry* requested_;
  regress::RegressorRegistry standard_;
};

/// Throws InvalidInput naming the `threads` setting unless `threads` ≥ 0 (0: the default).
void check_threads(int threads, SettingNames names);

/// The training table of the dataset `db`, its device resolved in the built-in catalog merged
/// with `devices_file` (`device`: a catalog id; default: matched by the dataset device's name).
learn::TrainingTable training_table(const std::filesystem::path& db,
                                    const std::optional<std::string>& device,
                                    const std::filesystem::path& devices_file);

}  // namespace nnergy::api::detail
