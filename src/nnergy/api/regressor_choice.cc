#include "nnergy/api/regressor_choice.h"

#include <vector>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::api::detail {

RegressorChoice::RegressorChoice(const regress::RegressorRegistry* requested)
    : requested_(requested) {
  if (requested_ == nullptr) regress::register_standard_regressors(standard_);
}

void RegressorChoice::check(const std::string& name, SettingNames names) const {
  if (registry().contains(name)) return;
  throw InvalidInput(setting_with_value(names, "predictor", name) + ": " +
                     registry().unknown_message(name));
}

void check_threads(int threads, SettingNames names) {
  if (threads < 0) {
    throw InvalidInput(setting_with_value(names, "threads", std::to_string(threads)) +
                       ": expected >= 0");
  }
}

learn::TrainingTable training_table(const std::filesystem::path& db,
                                    const std::optional<std::string>& device,
                                    const std::filesystem::path& devices_file) {
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load_with_user(data_directory(), devices_file);
  return learn::build_training_table(db.string(), catalog, device);
}

}  // namespace nnergy::api::detail
