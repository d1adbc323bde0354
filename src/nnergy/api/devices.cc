#include "nnergy/api/devices.h"

#include <utility>

#include "nnergy/core/data_directory.h"
#include "nnergy/measure/power_source.h"

namespace nnergy::api {

report::DevicesReport devices(const DevicesRequest& r) {
  report::DevicesReport report;
  report.catalog = device::DeviceCatalog::load_with_user(data_directory(), r.devices_file);
  if (!r.device.empty()) report.device = report.catalog.find(r.device);
  report.context = RunContext::now(r.command_line);
  report.context.add("catalog", report.catalog.sources());
  return report;
}

report::PowerSourcesReport detect_power_sources() {
  measure::Detection found = measure::SourceRegistry::standard().detect();
  report::PowerSourcesReport report;
  for (const auto& source : found.sources) {
    report.sources.push_back({source->info(), source->read(0.0)});
  }
  report.unavailable = std::move(found.unavailable);
  return report;
}

}  // namespace nnergy::api
