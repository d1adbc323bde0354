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
  /// Usable-but-imperfect input (rows a replayed trace dropped) and problems with the recording
  /// (a trace without power).
  std::vector<std::string> warnings;
};

/// `perf stat`-like text: the command, its exit code and wall time, the sampling, one row per
/// source (energy and how it was obtained, average and peak power, SM clocks, throttling,
/// samples), then the unavailable sources and the warnings.
std::string render_text(const MonitorReport& report);

/// {"context", "exit_code", "wall_time_s", "sampler_cpu_fraction_of_one_core", "sources": [{"id",
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
