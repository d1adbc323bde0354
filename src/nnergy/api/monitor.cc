#include "nnergy/api/monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "nnergy/core/error.h"
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

// The sources of the request: detection, or every named source, which must then be present.
measure::Detection open_sources(const MonitorRequest& r) {
  const measure::SourceRegistry registry = measure::SourceRegistry::standard();
  if (r.sources.empty()) return registry.detect();
  measure::Detection detection;
  for (const std::string& spec : r.sources) {
    measure::Detection found = registry.open(spec);
    if (found.sources.empty() && !found.unavailable.empty()) {
      // Asked for by name, so its absence is a failure, not a note: nothing would be measured.
      std::vector<std::string> reasons;
      for (const measure::Unavailable& u : found.unavailable) {
        reasons.push_back(u.source + ": " + u.reason);
      }
      throw DeviceError(fmt::format("{}: the power source is not available here ({})",
                                    setting_with_value(r.names, "source", spec),
                                    join_with_commas(reasons)));
    }
    for (auto& s : found.sources) detection.sources.push_back(std::move(s));
    for (auto& u : found.unavailable) detection.unavailable.push_back(std::move(u));
    for (auto& w : found.warnings) detection.warnings.push_back(std::move(w));
  }
  return detection;
}

}  // namespace

report::MonitorReport monitor(const MonitorRequest& r) {
  if (r.command.empty()) throw InvalidInput("monitor: expected a command to run, found none");
  if (!(r.interval_ms >= 1 && r.interval_ms <= 60000)) {
    throw InvalidInput(fmt::format(
        "{}: expected 1 to 60000",
        setting_with_value(r.names, "interval_ms", fmt::format("{:g}", r.interval_ms))));
  }
  measure::Detection detection = open_sources(r);
  std::vector<measure::SourceInfo> infos;
  for (const auto& s : detection.sources) infos.push_back(s->info());

  report::MonitorReport report;
  report.command = join_words(r.command);
  report.interval_ms = r.interval_ms;
  report.trace_file = r.output.string();
  report.context = RunContext::now(r.command_line);
  report.context.add("command", report.command).add("interval_ms", r.interval_ms);
  measure::TraceOutput trace(r.output, report.context, infos, setting_name(r.names, "output"));

  measure::SamplerOptions sampler_options;
  sampler_options.period_s = r.interval_ms / 1000.0;
  sampler_options.on_sample = [&trace](std::size_t source, const measure::PowerSample& sample) {
    trace.write(source, sample);
  };
  measure::Sampler sampler(std::move(detection.sources), sampler_options);
  measure::Meter meter(sampler);

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
  const bool has_power = std::any_of(infos.begin(), infos.end(),
                                     [](const measure::SourceInfo& i) { return i.has_power; });
  if (!r.output.empty() && !has_power) {
    // Said while recording, so that a session is not found powerless only when it is accounted.
    report.warnings.push_back(fmt::format(
        "{} {}: the trace holds no power samples ({}), so `nnergy account` has no energy to "
        "attribute with it",
        setting_name(r.names, "output"), r.output.string(),
        infos.empty() ? "no power source was available" : "no source reports power"));
  }
  return report;
}

}  // namespace nnergy::api
