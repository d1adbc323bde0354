#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/monitor_report.h"

namespace nnergy::api {

/// Everything `nnergy monitor` needs: the command to run and how to sample while it runs.
struct MonitorRequest {
  /// The command and its arguments; the first word is searched on PATH.
  std::vector<std::string> command;
  double interval_ms = 20;  ///< sampling period, ms; 1 to 60000
  /// The raw trace (both timestamps per sample): ".json" for nnergy JSON, anything else for
  /// nnergy CSV (measure/trace_output.h); empty: none.
  std::filesystem::path output;
  /// Power sources instead of detection ("nvml[:INDEX]", "rapl[:ZONE]", "synthetic:SPEC",
  /// "replay:PATH"; measure::SourceRegistry); empty: detect NVML and RAPL.
  std::vector<std::string> sources;
  /// Drop samples at another SM clock than the run's dominant one from the statistics.
  bool exclude_off_clock = false;
  /// Drop samples taken under a throttle reason from the statistics.
  bool exclude_throttled = false;
  /// Serve the sources' live metrics for Prometheus while the command runs (as `nnergy exporter`
  /// does) at this address ("HOST:PORT", "[IPV6]:PORT" or ":PORT"); empty: do not.
  std::string prometheus_listen;
  /// The invocation, for the result's context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  /// Carbon intensity of the electricity, g CO2e per kWh (≥ 0); absent: the world's average
  /// (core/carbon.h), said as such in the output.
  std::optional<double> grid_gco2e_per_kwh;
  SettingNames names = SettingNames::kKeyword;
};

/// Runs the command while sampling every power source (measure::ChildProcess: its stdio, its exit
/// status; SIGINT and SIGQUIT reach it from the terminal, SIGTERM and SIGHUP sent here are passed
/// on) and returns the time, energy, power, clocks and throttling per source. Writes the raw
/// trace when asked. A failing command is not an error: its exit status is in the result.
///
/// With prometheus_listen, the metrics are served from before the command starts until it has
/// ended (fleet::MetricsEndpoint).
///
/// Throws InvalidInput for an empty command or one that cannot be started, an interval out of
/// range, a prometheus_listen address that is malformed or cannot be listened at, a malformed or
/// unknown source, or a trace file that cannot be written; DeviceError when a source named in
/// `sources` is not available here (e.g. "nvml" without an NVIDIA driver), before the command is
/// started; RuntimeFailure when waiting for the command fails. Detected sources that are absent are
/// listed in the result, not thrown. Not thread-safe: one monitor per process at a time (it
/// forwards the process's signals).
report::MonitorReport monitor(const MonitorRequest& request);

}  // namespace nnergy::api
