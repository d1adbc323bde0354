#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/exporter_report.h"

namespace nnergy::api {

/// `nnergy exporter`: GPU and CPU energy, power, clocks and throttling as Prometheus metrics.
struct ExporterRequest {
  /// Where to listen: "HOST:PORT", "[IPV6]:PORT" or ":PORT" (fleet/listen_address.h).
  std::string listen = "127.0.0.1:9464";
  /// Who may connect: comma-separated addresses or CIDR ranges (fleet::access_control_list);
  /// empty: anyone who can reach the address (on the default 127.0.0.1, every local user).
  std::string allow;
  /// Power sources instead of detection ("nvml[:INDEX]", "rapl[:ZONE]", "synthetic:SPEC",
  /// "replay:PATH"); empty: detect NVML and RAPL.
  std::vector<std::string> sources;
  double interval_ms = 1000;  ///< sampling period, ms; 1 to 60000
  /// dcgm-exporter-style job-mapping directory (a file per GPU index listing job ids, as a site's
  /// Slurm prolog/epilog writes it); empty: none (jobs are still found from GPU processes).
  std::filesystem::path job_mapping_dir;
  /// Serve this long, s, then stop; nullopt: until `stop` is set.
  std::optional<double> duration_s;
  std::string command_line;  ///< for the report's context block
  SettingNames names = SettingNames::kKeyword;
};

/// Serves the metrics (fleet::GpuExporter) until `stop` is set (e.g. by SIGTERM) or duration_s
/// has passed; `on_ready` (may be empty) is called once serving has started, with the report so
/// far (URL, sources, unavailable kinds). Returns the report at the end (uptime, scrapes, each
/// source's last reading). Throws InvalidInput naming the setting for a malformed or unusable
/// listen address (in use, not this machine's), an interval out of range, a bad duration, a
/// malformed source or a job-mapping directory that is not a directory; DeviceError for a named
/// source that is absent.
report::ExporterReport run_exporter(
    const ExporterRequest& request, const std::atomic<bool>& stop,
    const std::function<void(const report::ExporterReport&)>& on_ready = {});

}  // namespace nnergy::api
