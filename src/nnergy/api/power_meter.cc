#include "nnergy/api/power_meter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/measure/sampler.h"
#include "nnergy/measure/trace_output.h"

namespace nnergy::api {

measure::Detection open_power_sources(const std::vector<std::string>& sources, SettingNames names) {
  const measure::SourceRegistry registry = measure::SourceRegistry::standard();
  if (sources.empty()) return registry.detect();
  measure::Detection detection;
  for (const std::string& spec : sources) {
    measure::Detection found;
    try {
      found = registry.open(spec);
    } catch (const InvalidInput& e) {
      throw InvalidInput(setting_with_value(names, "source", spec) + ": " + e.what());
    }
    if (found.sources.empty() && !found.unavailable.empty()) {
      // Asked for by name, so its absence is a failure, not a note: nothing would be measured.
      std::vector<std::string> reasons;
      for (const measure::Unavailable& u : found.unavailable) {
        reasons.push_back(u.source + ": " + u.reason);
      }
      throw DeviceError(fmt::format("{}: the power source is not available here ({})",
                                    setting_with_value(names, "source", spec),
                                    join_with_commas(reasons)));
    }
    for (auto& s : found.sources) detection.sources.push_back(std::move(s));
    for (auto& u : found.unavailable) detection.unavailable.push_back(std::move(u));
    for (auto& w : found.warnings) detection.warnings.push_back(std::move(w));
  }
  return detection;
}

void check_interval_ms(double interval_ms, SettingNames names) {
  if (!(interval_ms >= 1 && interval_ms <= 60000)) {
    throw InvalidInput(
        fmt::format("{}: expected 1 to 60000",
                    setting_with_value(names, "interval_ms", fmt::format("{:g}", interval_ms))));
  }
}

std::string powerless_trace_warning(const std::vector<measure::SourceInfo>& infos,
                                    const std::string& setting,
                                    const std::filesystem::path& trace) {
  if (std::any_of(infos.begin(), infos.end(),
                  [](const measure::SourceInfo& i) { return i.has_power; })) {
    return "";
  }
  return fmt::format(
      "{} {}: the trace holds no power samples ({}), so `nnergy account` has no energy to "
      "attribute with it",
      setting, trace.string(),
      infos.empty() ? "no power source was available" : "no source reports power");
}

struct PowerMeter::Impl {
  Impl(measure::Detection detection, const PowerMeterRequest& request)
      : unavailable(std::move(detection.unavailable)),
        warnings(std::move(detection.warnings)),
        interval_ms(request.interval_ms),
        trace(request.trace_file, trace_context(request), infos_of(detection),
              setting_name(request.names, "trace_file")),
        sampler(std::move(detection.sources), options(request.interval_ms, trace)),
        meter(sampler) {}

  static std::vector<measure::SourceInfo> infos_of(const measure::Detection& detection) {
    std::vector<measure::SourceInfo> infos;
    for (const auto& s : detection.sources) infos.push_back(s->info());
    return infos;
  }

  static RunContext trace_context(const PowerMeterRequest& request) {
    RunContext context = RunContext::now(request.command_line);
    context.add("interval_ms", request.interval_ms);
    return context;
  }

  static measure::SamplerOptions options(double interval_ms, measure::TraceOutput& trace) {
    measure::SamplerOptions o;
    o.period_s = interval_ms / 1000;
    o.on_sample = [&trace](std::size_t source, const measure::PowerSample& sample) {
      trace.write(source, sample);
    };
    return o;
  }

  std::vector<measure::Unavailable> unavailable;
  std::vector<std::string> warnings;
  double interval_ms;
  measure::TraceOutput trace;  ///< before the sampler, which writes to it until stopped
  measure::Sampler sampler;
  measure::Meter meter;
  mutable std::mutex mutex;
  bool stopped = false;
  bool trace_finished = false;
  std::map<std::size_t, std::string> open;  ///< open windows: handle → name
};

PowerMeter::PowerMeter(const PowerMeterRequest& request) {
  check_interval_ms(request.interval_ms, request.names);
  impl_ = std::make_unique<Impl>(open_power_sources(request.sources, request.names), request);
  if (!request.trace_file.empty()) {
    // Said when recording starts, so that a trace is not found powerless only when accounted.
    std::string warning = powerless_trace_warning(
        sources(), setting_name(request.names, "trace_file"), request.trace_file);
    if (!warning.empty()) impl_->warnings.push_back(std::move(warning));
  }
  impl_->sampler.start();
}

PowerMeter::~PowerMeter() { impl_->sampler.stop(); }

std::size_t PowerMeter::begin(const std::string& name) {
  const std::lock_guard lock(impl_->mutex);
  if (impl_->stopped) {
    throw InvalidInput("begin window '" + name +
                       "': the power meter was stopped; create a new one to measure again");
  }
  const std::size_t handle = impl_->meter.begin();
  impl_->open.emplace(handle, name);
  return handle;
}

measure::Measurement PowerMeter::end(std::size_t handle, const measure::WindowOptions& options) {
  {
    const std::lock_guard lock(impl_->mutex);
    if (impl_->open.erase(handle) == 0) {
      throw InvalidInput(fmt::format(
          "end window {}: expected a window that is open, found one that was never opened or "
          "is already closed; close each window once",
          handle));
    }
  }
  return impl_->meter.end(handle, options);
}

measure::Measurement PowerMeter::end_named(const std::string& name,
                                           const measure::WindowOptions& options) {
  std::size_t handle = 0;
  {
    const std::lock_guard lock(impl_->mutex);
    auto found = impl_->open.end();
    for (auto it = impl_->open.begin(); it != impl_->open.end(); ++it) {
      if (it->second == name) found = it;  // handles grow: the last match is the latest
    }
    if (found == impl_->open.end()) {
      std::vector<std::string> names;
      for (const auto& [h, n] : impl_->open) names.push_back("'" + n + "'");
      throw InvalidInput(fmt::format("end window '{}': no window of that name is open (open: {})",
                                     name, names.empty() ? "none" : join_with_commas(names)));
    }
    handle = found->first;
    impl_->open.erase(found);
  }
  return impl_->meter.end(handle, options);
}

std::string PowerMeter::name_of(std::size_t handle) const {
  const std::lock_guard lock(impl_->mutex);
  const auto it = impl_->open.find(handle);
  return it == impl_->open.end() ? std::string() : it->second;
}

void PowerMeter::stop() {
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopped = true;
  }
  impl_->sampler.stop();
  const std::lock_guard lock(impl_->mutex);
  if (impl_->trace_finished) return;
  impl_->trace_finished = true;
  std::vector<measure::PowerTrace> traces;
  if (impl_->trace.is_json()) {
    for (std::size_t i = 0; i < impl_->sampler.source_count(); ++i) {
      traces.push_back({impl_->sampler.info(i), impl_->sampler.samples(i)});
    }
  }
  impl_->trace.finish(traces);
}

std::vector<measure::SourceInfo> PowerMeter::sources() const {
  std::vector<measure::SourceInfo> infos;
  for (std::size_t i = 0; i < impl_->sampler.source_count(); ++i) {
    infos.push_back(impl_->sampler.info(i));
  }
  return infos;
}

const std::vector<measure::Unavailable>& PowerMeter::unavailable() const {
  return impl_->unavailable;
}

const std::vector<std::string>& PowerMeter::warnings() const { return impl_->warnings; }

double PowerMeter::interval_ms() const { return impl_->interval_ms; }

double PowerMeter::now_s() const { return impl_->sampler.now_s(); }

double PowerMeter::epoch_offset_s() const { return impl_->sampler.epoch_offset_s(); }

double PowerMeter::sampler_cpu_time_s() const { return impl_->sampler.cpu_time_s(); }

}  // namespace nnergy::api
