#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// Fitted archline parameters of one precision, to be stored in a device catalog.
struct FittedParameters {
  device::Precision precision = device::Precision::kFp32;
  double eps_flop_j = 0;          ///< J/flop
  double eps_mem_j_per_byte = 0;  ///< J/B
  double pi0_w = 0;               ///< W
  std::string source;             ///< e.g. "nnergy archline fit of h100.csv, 2026-11-22"
};

/// Stores `fits` as the archline parameters of device `name` in the user catalog `user_catalog`
/// (data/devices.md format), keeping every other entry and field. When `name` is not in that
/// file yet, the new entry copies device `base_device` (default: `name` itself) from the user
/// catalog or the built-in catalog `builtin_catalog`, so peaks, clocks and limits come with it.
/// The result is validated with the catalog loader before it replaces the file atomically.
/// Throws InvalidInput naming the setting (save_device, base_device, as `names` spells them) and
/// the file.
void save_fitted_device(const std::filesystem::path& user_catalog, const std::string& name,
                        const std::vector<FittedParameters>& fits,
                        const std::filesystem::path& builtin_catalog,
                        const std::optional<std::string>& base_device,
                        SettingNames names = SettingNames::kFlag);

}  // namespace nnergy::archline
