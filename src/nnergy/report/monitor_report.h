#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/power_source.h"

namespace nnergy::report {

/// What `nnergy monitor` measured over one run of a command.
struct MonitorReport {
  RunContext context;
  std::string command;  ///< the command's words, joined with spaces
  int exit_code = 0;    ///< the command's exit status as a shell gives it (128 + N: signal N)
  double wall_time_s = 0;
  double interval_ms = 0;  ///< sampling period, ms
  /// CPU time of the sampler threads over the wall time: the fraction of one core it used.
  double sampler_cpu_fraction = 0;
  std::string trace_file;  ///< the raw trace written; empty: none
  /// Where the live metrics were served while the command ran ("http://HOST:PORT/metrics");
  /// empty: not served.
  std::string prometheus_url;
  std::vector<measure::SourceMeasurement> sources;
  std::vector<measure::Unavailable> unavailable;  ///< sources not available here, with reasons
  double grid_gco2e_per_kwh = 0;  ///< carbon intensity the CO2e figure uses, g CO2e per kWh
  std::string grid_source;        ///< where it comes from ("as given", or the default's source)
  /// Usable-but-imperfect input (rows a replayed trace dropped) and problems with the recording
  /// (a trace without power).
  std::vector<std::string> warnings;
};

/// The energy of every source with one, summed, J (0 when none has one). Sources that overlap
/// (a RAPL package and its DRAM zone) are summed as they are.
double total_energy_j(const MonitorReport& report);

/// `perf stat`-like text: the command, its exit code and wall time, the sampling, one row per
/// source (energy and how it was obtained, average and peak power, SM clocks, throttling,
/// samples), the total energy in J and kWh with its CO2e and the carbon intensity used, then the
/// unavailable sources and the warnings.
std::string render_text(const MonitorReport& report);

/// {"context", "exit_code", "wall_time_s", "sampler_cpu_fraction_of_one_core", "total_energy_j",
/// "total_energy_kwh", "co2e_g", "grid_gco2e_per_kwh", "grid_source", "sources": [{"id",
/// "kind", "name", "uuid", "time_s", "energy_j", "energy_sigma_j", "energy_method", ...,
/// "source_failed", "source_error"}], "warnings", "unavailable": [{"source", "reason"}]}; absent
/// values are null.
nlohmann::ordered_json to_json(const MonitorReport& report);

/// One source's statistics over a window, as an element of "sources" above: {"id", "kind",
/// "name", "uuid", "time_s", "energy_j", ..., "source_failed", "source_error"}; absent values are
/// null. Times s, energies J, powers W, clocks MHz, temperatures °C.
nlohmann::ordered_json to_json(const measure::SourceMeasurement& measurement);

/// A closed measurement window (measure::Meter, api::PowerMeter): {"begin_s", "end_s" (sampler
/// steady time, s), "time_s", "sources": [one element per source, as above]}.
nlohmann::ordered_json to_json(const measure::Measurement& measurement);

}  // namespace nnergy::report
