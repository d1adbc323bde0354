#pragma once

#include <filesystem>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/devices_report.h"

namespace nnergy::api {

/// What `nnergy devices` shows.
struct DevicesRequest {
  /// A device id or alias to show in detail; empty: the whole catalog.
  std::string device;
  /// A device catalog (JSON) whose devices replace or add to the built-in ones; empty: none.
  std::filesystem::path devices_file;
  /// The invocation, for the result's context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// The device catalog (built-in, calibrated, with the user's and `devices_file`'s devices) and,
/// when asked, one device of it. Throws InvalidInput for a malformed catalog file and an unknown
/// device (listing the ids). Thread-safe (no shared state).
report::DevicesReport devices(const DevicesRequest& request);

/// The power sources present on this machine (NVML GPUs, RAPL zones), each read once, and why
/// the others are unavailable. Never throws for an absent source.
report::PowerSourcesReport detect_power_sources();

}  // namespace nnergy::api
