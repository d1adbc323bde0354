#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/device/device_spec.h"

namespace nnergy::device {

/// The device catalog: data/devices.json, optionally overridden by a user file whose devices
/// replace built-in ones with the same id and add new ones.
class DeviceCatalog {
 public:
  /// Parses a catalog file (schema_version 1, see data/devices.md). Throws InvalidInput naming
  /// the file, the device and the field for a malformed file.
  static DeviceCatalog load(const std::filesystem::path& path);
  /// Parses catalog JSON text; `source` names it in messages.
  static DeviceCatalog parse(const std::string& text, const std::string& source);
  /// The built-in catalog of `data_dir` with the calibrated parameters of
  /// `data_dir`/calibration/calibrated.json applied to its devices (when that file exists; see
  /// apply_calibration), overridden by the user catalog when it exists: `$NNERGY_USER_DEVICES`,
  /// else `$XDG_CONFIG_HOME/nnergy/devices.json` (or ~/.config/...) (see merge).
  static DeviceCatalog load_default(const std::filesystem::path& data_dir);
  /// load_default(data_dir), then the devices of `devices_file` (a front end's extra catalog,
  /// e.g. `--devices-file`) merged over it; an empty path adds nothing. Throws as load.
  static DeviceCatalog load_with_user(const std::filesystem::path& data_dir,
                                      const std::filesystem::path& devices_file);
  /// Path of the calibrated parameters in `data_dir`.
  static std::filesystem::path calibrated_parameters_path(const std::filesystem::path& data_dir);
  /// Path of the user catalog (it may not exist).
  static std::filesystem::path user_catalog_path();

  /// Replaces or adds the devices of `other`; once calibrated, a device whose file gives no
  /// "efficiency" takes the calibration (apply_calibration).
  void merge(const DeviceCatalog& other);

  /// The device with this id or alias (case-insensitive); InvalidInput listing the ids otherwise.
  const DeviceSpec& find(const std::string& id_or_alias) const;
  const std::vector<DeviceSpec>& devices() const { return devices_; }
  /// Files the catalog was read from, in order.
  const std::vector<std::string>& sources() const { return sources_; }
  /// The calibrated parameters applied to the built-in devices, if any.
  const std::optional<CalibratedParameters>& calibration() const { return calibration_; }
  /// Applies `parameters` to every device (apply_calibration) and keeps them; `source` names
  /// them in sources().
  void calibrate(const CalibratedParameters& parameters, const std::string& source);

 private:
  std::vector<DeviceSpec> devices_;
  std::vector<std::string> sources_;
  std::optional<CalibratedParameters> calibration_;
};

}  // namespace nnergy::device
