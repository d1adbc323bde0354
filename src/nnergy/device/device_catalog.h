#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/device/device_spec.h"

namespace nnergy::device {

/// `name` as DeviceCatalog::find compares it: ASCII lower case; '-', '_' and spaces all read as
/// one space, repeats and ends dropped; then leading vendor words ("nvidia", "tesla", "geforce",
/// "amd", "instinct"; any number of them) dropped, unless nothing would be left. "NVIDIA
/// GeForce RTX 2080 Ti" → "rtx 2080 ti", "Tesla V100-SXM2-32GB" → "v100 sxm2 32gb".
std::string normalize_device_name(std::string_view name);

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

  /// The device `name` refers to: its id, an alias, its catalog name or the name the driver
  /// reports for it (nvidia-smi's "NVIDIA A100-SXM4-40GB", "Tesla T4"). Tried in order:
  ///  1. an id equal to `name` apart from ASCII case, then such an alias;
  ///  2. the normalised `name` (normalize_device_name) equal to the normalised id, an alias or
  ///     the catalog name of exactly one device ("nvidia geforce rtx_4090" → rtx-4090).
  /// Driver names that normalisation cannot reach ("NVIDIA H100 80GB HBM3" for the SXM5 part)
  /// are listed as aliases in the catalog file. Throws InvalidInput naming `where` (a flag, a
  /// file and field, …): listing the candidates when the normalised name matches several
  /// devices (possible only once a user catalog adds look-alike ids), or, when nothing
  /// matches, with "did you mean" the nearest id or alias by edit distance if it is close (see
  /// nearest_name) and the accepted ids.
  const DeviceSpec& find(const std::string& name, std::string_view where = "device") const;
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
