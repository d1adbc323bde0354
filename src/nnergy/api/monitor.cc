#include "nnergy/api/monitor.h"

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "nnergy/api/power_meter.h"
#include "nnergy/core/carbon.h"
#include "nnergy/core/error.h"
#include "nnergy/fleet/gpu_exporter.h"
#include "nnergy/fleet/listen_address.h"
#include "nnergy/fleet/live_readings.h"
#include "nnergy/fleet/metrics_endpoint.h"
#include "nnergy/measure/child_process.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/power_source.h"
#include "nnergy/measure/sampler.h"
#include "nnergy/measure/trace_output.h"

namespace nnergy::api {

namespace {

std::string join_words(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

report::MonitorReport monitor(const MonitorRequest& r) {
  if (r.command.empty()) throw InvalidInput("monitor: expected a command to run, found none");
  check_interval_ms(r.interval_ms, r.names);
  check_grid_gco2e_per_kwh(r.grid_gco2e_per_kwh, r.names);
  std::optional<fleet::ListenAddress> prometheus_address;
  if (!r.prometheus_listen.empty()) {
    prometheus_address = fleet::parse_listen_address(
        r.prometheus_listen, setting_name(r.names, "prometheus_listen", "prometheus"));
  }
  measure::Detection detection = open_power_sources(r.sources, r.names);
  std::vector<measure::SourceInfo> infos;
  for (const auto& s : detection.sources) infos.push_back(s->info());

  report::MonitorReport report;
  report.command = join_words(r.command);
  report.interval_ms = r.interval_ms;
  report.trace_file = r.output.string();
  report.grid_gco2e_per_kwh = r.grid_gco2e_per_kwh.value_or(kWorldGridGco2ePerKwh);
  report.grid_source = r.grid_gco2e_per_kwh
                           ? "as given"
                           : fmt::format("{}; {} for your grid", kWorldGridSource,
                                         setting_name(r.names, "grid_gco2e_per_kwh"));
  report.context = RunContext::now(r.command_line);
  report.context.add("command", report.command).add("interval_ms", r.interval_ms);
  measure::TraceOutput trace(r.output, report.context, infos, setting_name(r.names, "output"));

  measure::SamplerOptions sampler_options;
  sampler_options.period_s = r.interval_ms / 1000.0;
  fleet::LiveReadings readings(infos);
  sampler_options.on_sample = [&trace, &readings](std::size_t source,
                                                  const measure::PowerSample& sample) {
    trace.write(source, sample);
    readings.update(source, sample);
  };
  measure::Sampler sampler(std::move(detection.sources), sampler_options);
  measure::Meter meter(sampler);
  // Served from before the command starts until it has ended; destroyed before the sampler.
  std::unique_ptr<fleet::MetricsEndpoint> endpoint;
  if (prometheus_address) {
    endpoint = std::make_unique<fleet::MetricsEndpoint>(
        *prometheus_address,
        [&readings, &sampler] { return fleet::readings_with_failures(readings, sampler); },
        setting_name(r.names, "prometheus_listen", "prometheus"));
    report.prometheus_url = endpoint->url();
  }

  measure::Measurement measurement;
  {
    sampler.start();
    const std::size_t window = meter.begin();
    measure::ChildProcess child(r.command);
    report.exit_code = child.wait();
    measure::WindowOptions window_options;
    window_options.exclude_off_clock = r.exclude_off_clock;
    window_options.exclude_throttled = r.exclude_throttled;
    measurement = meter.end(window, window_options);
    endpoint.reset();
    sampler.stop();
  }
  report.wall_time_s = measurement.end_s - measurement.begin_s;
  report.sampler_cpu_fraction =
      report.wall_time_s > 0 ? sampler.cpu_time_s() / report.wall_time_s : 0;
  report.sources = std::move(measurement.sources);
  report.unavailable = std::move(detection.unavailable);
  report.warnings = std::move(detection.warnings);

  std::vector<measure::PowerTrace> traces;
  if (trace.is_json()) {
    for (std::size_t i = 0; i < sampler.source_count(); ++i) {
      traces.push_back({sampler.info(i), sampler.samples(i)});
    }
  }
  trace.finish(traces);
  if (!r.output.empty()) {
    // Said while recording, so that a session is not found powerless only when it is accounted.
    std::string warning = powerless_trace_warning(infos, setting_name(r.names, "output"), r.output);
    if (!warning.empty()) report.warnings.push_back(std::move(warning));
  }
  return report;
}

}  // namespace nnergy::api
