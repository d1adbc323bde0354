#include "nnergy/fleet/metric_families.h"

#include <optional>

#include "nnergy/core/units.h"

namespace nnergy::fleet {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void add(MetricFamily& f, const std::vector<ClientMetric::Label>& labels,
         std::optional<double> value) {
  if (!value) return;
  ClientMetric metric;
  metric.label = labels;
  if (f.type == MetricType::Counter) {
    metric.counter.value = *value;
  } else {
    metric.gauge.value = *value;
  }
  f.metric.push_back(std::move(metric));
}

// "nvml:3" → "3"; any other id as it is.
std::string gpu_label(const measure::SourceInfo& info) {
  const std::string prefix = "nvml:";
  return info.id.rfind(prefix, 0) == 0 ? info.id.substr(prefix.size()) : info.id;
}

std::optional<double> hertz(std::optional<double> mhz) {
  if (!mhz) return std::nullopt;
  return units::megahertz_to_hertz(*mhz);
}

}  // namespace

bool is_gpu_like(const std::string& kind) {
  return kind == "gpu" || kind == "synthetic" || kind == "replay";
}

std::vector<MetricFamily> metric_families(const std::vector<SourceReading>& readings) {
  MetricFamily gpu_energy =
      family("nnergy_gpu_energy_joules_total",
             "GPU energy since an unspecified origin (J); rate() is power", MetricType::Counter);
  MetricFamily gpu_power =
      family("nnergy_gpu_power_watts", "GPU board power as last read (W)", MetricType::Gauge);
  MetricFamily sm_clock =
      family("nnergy_gpu_sm_clock_hertz", "GPU SM (core) clock (Hz)", MetricType::Gauge);
  MetricFamily memory_clock =
      family("nnergy_gpu_memory_clock_hertz", "GPU memory clock (Hz)", MetricType::Gauge);
  MetricFamily temperature =
      family("nnergy_gpu_temperature_celsius", "GPU die temperature (°C)", MetricType::Gauge);
  MetricFamily reasons =
      family("nnergy_gpu_throttle_reasons",
             "Active NVML clock-event (throttle) reason bits (bitmask)", MetricType::Gauge);
  MetricFamily throttled = family(
      "nnergy_gpu_throttled", "1 while a clock-event reason holds the SM clock below the asked one",
      MetricType::Gauge);
  MetricFamily cpu_energy =
      family("nnergy_cpu_energy_joules_total", "CPU energy of a RAPL zone (J); rate() is power",
             MetricType::Counter);
  MetricFamily cpu_power =
      family("nnergy_cpu_power_watts", "CPU power of a RAPL zone over the last sampling period (W)",
             MetricType::Gauge);
  MetricFamily up = family("nnergy_source_up", "1 while the power source is read, 0 once it failed",
                           MetricType::Gauge);

  for (const SourceReading& r : readings) {
    add(up, {{"source", r.info.id}}, r.failed ? 0.0 : 1.0);
    if (r.failed || !r.latest) continue;
    const measure::PowerSample& s = *r.latest;
    if (is_gpu_like(r.info.kind)) {
      std::vector<ClientMetric::Label> labels = {
          {"gpu", gpu_label(r.info)}, {"uuid", r.info.uuid}, {"name", r.info.name}};
      if (!r.slurm_job.empty()) labels.push_back({"slurm_job", r.slurm_job});
      add(gpu_energy, labels, r.energy_total_j);
      add(gpu_power, labels, s.power_w);
      add(sm_clock, labels, hertz(s.sm_clock_mhz));
      add(memory_clock, labels, hertz(s.memory_clock_mhz));
      add(temperature, labels, s.temperature_c);
      add(reasons, labels, static_cast<double>(s.throttle_reasons));
      add(throttled, labels, measure::is_throttling(s.throttle_reasons) ? 1.0 : 0.0);
    } else {
      const std::vector<ClientMetric::Label> labels = {{"zone", r.info.name}};
      add(cpu_energy, labels, r.energy_total_j);
      add(cpu_power, labels, s.power_w);
    }
  }
  std::vector<MetricFamily> families;
  for (MetricFamily* f : {&gpu_energy, &gpu_power, &sm_clock, &memory_clock, &temperature, &reasons,
                          &throttled, &cpu_energy, &cpu_power, &up}) {
    if (!f->metric.empty()) families.push_back(std::move(*f));
  }
  return families;
}

}  // namespace nnergy::fleet
