#include "nnergy/api/exporter.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "nnergy/api/power_meter.h"
#include "nnergy/core/error.h"
#include "nnergy/fleet/gpu_exporter.h"

namespace nnergy::api {

namespace {

// How often the serving loop looks at the stop flag, s.
constexpr double kStopPollS = 0.05;

}  // namespace

report::ExporterReport run_exporter(
    const ExporterRequest& r, const std::atomic<bool>& stop,
    const std::function<void(const report::ExporterReport&)>& on_ready) {
  const std::string listen_setting = setting_name(r.names, "listen");
  fleet::GpuExporterOptions options;
  options.address = fleet::parse_listen_address(r.listen, listen_setting);
  options.listen_setting = listen_setting;
  options.access_control_list = fleet::access_control_list(r.allow, setting_name(r.names, "allow"));
  check_interval_ms(r.interval_ms, r.names);
  options.period_s = r.interval_ms / 1000.0;
  if (r.duration_s && !(std::isfinite(*r.duration_s) && *r.duration_s > 0)) {
    throw InvalidInput(fmt::format("{}: expected a duration > 0 in seconds, found {}",
                                   setting_name(r.names, "duration_s"), *r.duration_s));
  }
  if (!r.job_mapping_dir.empty()) {
    std::error_code error;
    if (!std::filesystem::is_directory(r.job_mapping_dir, error)) {
      throw InvalidInput(fmt::format(
          "{} {}: expected a directory (a file per GPU index listing Slurm job ids), found {}",
          setting_name(r.names, "job_mapping_dir"), r.job_mapping_dir.string(),
          std::filesystem::exists(r.job_mapping_dir, error) ? "another kind of file"
                                                            : "nothing there"));
    }
    options.job_mapping_dir = r.job_mapping_dir;
  }
  measure::Detection detection = open_power_sources(r.sources, r.names);

  report::ExporterReport report;
  report.context = RunContext::now(r.command_line);
  report.interval_ms = r.interval_ms;
  report.unavailable = std::move(detection.unavailable);
  const auto started = std::chrono::steady_clock::now();
  fleet::GpuExporter exporter(std::move(detection.sources), options);
  report.url = exporter.url();
  report.context.add("url", report.url).add("interval_ms", r.interval_ms);
  report.sources = exporter.readings();
  if (on_ready) on_ready(report);

  const auto deadline =
      r.duration_s ? started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(*r.duration_s))
                   : std::chrono::steady_clock::time_point::max();
  while (!stop.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kStopPollS));
  }
  report.uptime_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  report.scrapes = exporter.scrapes();
  report.sources = exporter.readings();
  return report;
}

}  // namespace nnergy::api
