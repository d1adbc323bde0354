#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/measure/power_sample.h"
#include "nnergy/measure/power_source.h"

namespace nnergy::report {

/// What `nnergy devices` shows: the catalog, or one device of it.
struct DevicesReport {
  RunContext context;  ///< with the catalog's files ("catalog")
  device::DeviceCatalog catalog;
  /// The device asked for; absent: the whole catalog is listed.
  std::optional<device::DeviceSpec> device;
};

/// One device in detail (when `report.device` is set), else the catalog as one table with the
/// host launch time predict uses by default.
std::string render_text(const DevicesReport& report);
/// One device: its object (id, peaks, archline per precision, efficiency, time_model,
/// power_model, ...). The catalog: {"context", "devices": [those objects]}.
nlohmann::ordered_json to_json(const DevicesReport& report);

/// A power source found on this machine, with one reading.
struct DetectedSource {
  measure::SourceInfo info;
  measure::PowerSample reading;
};

/// What `nnergy devices --detect` shows: the power sources present, and why the others are not.
struct PowerSourcesReport {
  std::vector<DetectedSource> sources;
  std::vector<measure::Unavailable> unavailable;
};

/// A table of the sources found, then one line per unavailable source with the reason.
std::string render_text(const PowerSourcesReport& report);
/// {"sources": [{id, kind, name, uuid, driver_version, has_energy_counter, power_is_averaged,
/// power_w}], "unavailable": [{source, reason}]}.
nlohmann::ordered_json to_json(const PowerSourcesReport& report);

}  // namespace nnergy::report
