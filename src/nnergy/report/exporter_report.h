#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/fleet/live_readings.h"
#include "nnergy/measure/power_source.h"

namespace nnergy::report {

/// What `nnergy exporter` served, when it stops (or as it starts, with no scrapes yet).
struct ExporterReport {
  RunContext context;
  std::string url;  ///< "http://HOST:PORT/metrics"
  double interval_ms = 0;
  double uptime_s = 0;
  std::uint64_t scrapes = 0;
  /// Every source as the last scrape saw it: energy total (J), failed or not.
  std::vector<fleet::SourceReading> sources;
  std::vector<measure::Unavailable> unavailable;  ///< detected kinds absent here, with reasons
};

/// One line for stderr when serving starts: "nnergy exporter: serving URL: SOURCES (every N ms);
/// stop with Ctrl-C or SIGTERM", plus a line per unavailable kind.
std::string render_ready(const ExporterReport& report);

/// The summary: URL, uptime, scrapes, then one row per source (id, kind, name, energy total J,
/// last power W, up or the failure).
std::string render_text(const ExporterReport& report);

/// {"context", "url", "interval_ms", "uptime_s", "scrapes", "sources": [{"id", "kind", "name",
/// "uuid", "energy_total_j", "power_w", "up", "error", "slurm_job"}], "unavailable"}; absent values
/// null.
nlohmann::ordered_json to_json(const ExporterReport& report);

}  // namespace nnergy::report
