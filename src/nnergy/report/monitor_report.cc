#include "nnergy/report/monitor_report.h"

#include <fmt/format.h>

#include <optional>

#include "nnergy/core/carbon.h"
#include "nnergy/measure/power_sample.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using measure::SourceMeasurement;
using nlohmann::ordered_json;

std::string optional_quantity(const std::optional<double>& value, const char* unit) {
  return value ? format_quantity(*value, unit) : "-";
}

std::string energy_text(const SourceMeasurement& m) {
  if (!m.energy_j) return "-";
  if (!m.energy_sigma_j) return format_quantity(*m.energy_j, "J");
  return format_quantity(*m.energy_j, "J") + " ± " + format_quantity(*m.energy_sigma_j, "J");
}

std::string clocks_text(const SourceMeasurement& m) {
  if (m.sm_clocks_seen.empty()) return "-";
  const double low = m.sm_clocks_seen.begin()->first;
  const double high = m.sm_clocks_seen.rbegin()->first;
  if (low == high) return fmt::format("{:g}", low);
  return fmt::format("{:g}–{:g} (mostly {:g})", low, high, m.dominant_sm_clock_mhz.value_or(0));
}

std::string throttling_text(const SourceMeasurement& m) {
  if (m.throttled_samples == 0) return "none";
  std::string names;
  for (const std::string& n : measure::throttle_reason_names(m.throttle_reasons_seen)) {
    names += (names.empty() ? "" : ",") + n;
  }
  return fmt::format("{} samples: {}", m.throttled_samples, names);
}

}  // namespace

ordered_json to_json(const SourceMeasurement& m) {
  auto opt = [](const std::optional<double>& v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
  };
  ordered_json j;
  j["id"] = m.info.id;
  j["kind"] = m.info.kind;
  j["name"] = m.info.name;
  j["uuid"] = m.info.uuid;
  j["time_s"] = m.time_s;
  j["energy_j"] = opt(m.energy_j);
  j["energy_sigma_j"] = opt(m.energy_sigma_j);
  j["energy_method"] = m.energy_method;
  j["energy_from_counter_j"] = opt(m.energy_from_counter_j);
  j["energy_from_power_j"] = opt(m.energy_from_power_j);
  j["energy_from_power_sigma_j"] = opt(m.energy_from_power_sigma_j);
  j["power_mean_w"] = opt(m.power_mean_w);
  j["power_sigma_w"] = opt(m.power_sigma_w);
  j["power_peak_w"] = opt(m.power_peak_w);
  j["power_is_averaged"] = m.info.power_is_averaged;
  ordered_json clocks = ordered_json::object();
  for (const auto& [clock, count] : m.sm_clocks_seen) clocks[fmt::format("{:g}", clock)] = count;
  j["sm_clocks_mhz_seen"] = clocks;
  j["dominant_sm_clock_mhz"] = opt(m.dominant_sm_clock_mhz);
  j["throttle_reasons"] = measure::throttle_reason_names(m.throttle_reasons_seen);
  j["throttled_samples"] = m.throttled_samples;
  j["temperature_max_c"] = opt(m.temperature_max_c);
  j["samples_total"] = m.samples_total;
  j["samples_used"] = m.samples_used;
  j["dropped_sigma"] = m.dropped_sigma;
  j["dropped_off_clock"] = m.dropped_off_clock;
  j["dropped_throttled"] = m.dropped_throttled;
  j["source_failed"] = m.source_failed;
  j["source_error"] = m.source_error;
  return j;
}

ordered_json to_json(const measure::Measurement& measurement) {
  ordered_json j;
  j["begin_s"] = measurement.begin_s;
  j["end_s"] = measurement.end_s;
  j["time_s"] = measurement.end_s - measurement.begin_s;
  j["sources"] = ordered_json::array();
  for (const SourceMeasurement& m : measurement.sources) j["sources"].push_back(to_json(m));
  return j;
}

double total_energy_j(const MonitorReport& report) {
  double total = 0;
  for (const SourceMeasurement& m : report.sources) total += m.energy_j.value_or(0);
  return total;
}

std::string render_text(const MonitorReport& report) {
  std::string text =
      fmt::format("\n nnergy monitor: '{}' exited with code {} after {} (wall)\n", report.command,
                  report.exit_code, format_quantity(report.wall_time_s, "s"));
  text += fmt::format(" sampling every {:g} ms; sampler CPU {:.2f} % of one core{}\n\n",
                      report.interval_ms, 100 * report.sampler_cpu_fraction,
                      report.trace_file.empty() ? "" : "; trace in " + report.trace_file);
  if (!report.prometheus_url.empty()) {
    text.insert(text.size() - 1,
                fmt::format(" metrics were served at {}\n", report.prometheus_url));
  }
  TextTable table;
  using A = TextTable::Align;
  table.add_column("source", A::kLeft);
  table.add_column("energy", A::kRight);
  table.add_column("how", A::kLeft);
  table.add_column("avg power", A::kRight);
  table.add_column("peak power", A::kRight);
  table.add_column("SM clock MHz", A::kLeft);
  table.add_column("throttling", A::kLeft);
  table.add_column("samples", A::kRight);
  for (const SourceMeasurement& m : report.sources) {
    std::string how = m.energy_method == "counter" ? "energy counter" : "mean power × time";
    if (m.energy_method.empty()) how = "-";
    if (m.source_failed) how += " (source failed: " + m.source_error + ")";
    const bool named =
        !m.info.name.empty() && m.info.name != m.info.id && m.info.name != m.info.kind;
    table.add_row({named ? m.info.id + " (" + m.info.name + ")" : m.info.id, energy_text(m), how,
                   optional_quantity(m.power_mean_w, "W"), optional_quantity(m.power_peak_w, "W"),
                   clocks_text(m), throttling_text(m), std::to_string(m.samples_total)});
  }
  if (!report.sources.empty()) {
    text += table.render();
    const double joules = total_energy_j(report);
    text += fmt::format(" total {} = {:.3g} kWh{}: {} CO2e at {:g} g CO2e/kWh ({})\n",
                        format_quantity(joules, "J"), joules / kJoulesPerKwh,
                        report.sources.size() > 1 ? " (the sources summed)" : "",
                        format_quantity(co2e_g(joules, report.grid_gco2e_per_kwh), "g"),
                        report.grid_gco2e_per_kwh, report.grid_source);
  }
  for (const measure::Unavailable& u : report.unavailable) {
    text += fmt::format(" {}: unavailable — {}\n", u.source, u.reason);
  }
  for (const std::string& w : report.warnings) text += " warning: " + w + "\n";
  if (report.sources.empty()) {
    text += " no power source available: only the wall time is measured\n";
  }
  return text;
}

ordered_json to_json(const MonitorReport& report) {
  ordered_json summary;
  summary["context"] = report.context.to_json();
  summary["exit_code"] = report.exit_code;
  summary["wall_time_s"] = report.wall_time_s;
  summary["sampler_cpu_fraction_of_one_core"] = report.sampler_cpu_fraction;
  const double joules = total_energy_j(report);
  summary["total_energy_j"] = joules;
  summary["total_energy_kwh"] = joules / kJoulesPerKwh;
  summary["co2e_g"] = co2e_g(joules, report.grid_gco2e_per_kwh);
  summary["grid_gco2e_per_kwh"] = report.grid_gco2e_per_kwh;
  summary["grid_source"] = report.grid_source;
  summary["sources"] = ordered_json::array();
  for (const SourceMeasurement& m : report.sources) {
    summary["sources"].push_back(to_json(m));
  }
  summary["warnings"] = report.warnings;
  summary["unavailable"] = ordered_json::array();
  for (const measure::Unavailable& u : report.unavailable) {
    summary["unavailable"].push_back({{"source", u.source}, {"reason", u.reason}});
  }
  return summary;
}

}  // namespace nnergy::report
