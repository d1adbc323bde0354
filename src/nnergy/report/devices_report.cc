#include "nnergy/report/devices_report.h"

#include <fmt/format.h>

#include "nnergy/core/error.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

std::string tflops(const device::DeviceSpec& d, device::Precision p) {
  auto peak = d.peak(p);
  return peak ? fmt::format("{:.1f}", *peak / 1e12) : "-";
}

// Where the device's efficiencies come from, with the ± of its whole-network times.
std::string time_model_provenance(const device::DeviceSpec& d) {
  if (d.calibration.provenance.empty()) {
    return "not calibrated (the catalog's estimated efficiencies; `nnergy calibrate` fits them)";
  }
  return fmt::format("{}; whole-network times ±{:.0f} % (1σ, leave-one-GPU-out)",
                     d.calibration.provenance, 100 * d.calibration.relative_time_std());
}

nlohmann::ordered_json device_json(const device::DeviceSpec& d) {
  nlohmann::ordered_json j;
  j["id"] = d.id;
  j["aliases"] = d.aliases;
  j["name"] = d.name;
  j["vendor"] = d.vendor;
  j["architecture"] = d.architecture;
  j["sm_count"] = d.sm_count;
  nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
  for (const auto& [p, v] : d.peak_flop_per_s) peaks[std::string(device::to_string(p))] = v;
  j["peak_flop_per_s"] = peaks;
  j["memory_bandwidth_byte_per_s"] = d.memory_bandwidth_byte_per_s;
  j["tdp_w"] = d.tdp_w;
  j["idle_w"] = d.idle_w;
  j["clock_mhz"] = {{"min", d.clock.min_mhz},
                    {"base", d.clock.base_mhz},
                    {"boost", d.clock.boost_mhz},
                    {"step", d.clock.step_mhz}};
  nlohmann::ordered_json archline = nlohmann::ordered_json::object();
  for (device::Precision p : device::all_precisions()) {
    if (!d.peak(p)) continue;
    const device::ArchlineParameters a = d.archline_for(p);
    archline[std::string(device::to_string(p))] = {
        {"eps_flop_pj", a.eps_flop_j * 1e12},
        {"eps_mem_pj_per_byte", a.eps_mem_j_per_byte * 1e12},
        {"pi0_w", a.pi0_w},
        {"estimated", a.estimated},
        {"source", a.source}};
  }
  j["archline"] = archline;
  j["efficiency"] = {{"compute", d.efficiency.compute},
                     {"tensor", d.efficiency.tensor ? nlohmann::ordered_json(*d.efficiency.tensor)
                                                    : nlohmann::ordered_json(nullptr)},
                     {"memory", d.efficiency.memory},
                     {"kernel_overhead_s", d.efficiency.kernel_overhead_s},
                     {"work_half_flop_per_sm", d.efficiency.work_half_flop_per_sm},
                     {"reduction_half", d.efficiency.reduction_half},
                     {"winograd_speedup", d.efficiency.winograd_speedup},
                     {"grouped_conv_efficiency", d.efficiency.grouped_conv_efficiency},
                     {"backward_matrix_efficiency", d.efficiency.backward_matrix_efficiency},
                     {"statistics_memory_efficiency", d.efficiency.statistics_memory_efficiency}};
  j["time_model"] = {{"calibrated", !d.calibration.provenance.empty()},
                     {"transferred", d.calibration.transferred},
                     {"generation", d.generation()},
                     {"provenance", time_model_provenance(d)},
                     {"time_log_sigma", d.calibration.time_log_sigma}};
  j["power_model"] = {{"operand_share", d.power_activity.operand_share},
                      {"provenance", d.power_activity.provenance},
                      {"power_log_sigma", d.power_activity.power_log_sigma}};
  j["estimated_fields"] = d.estimated_fields;
  j["sources"] = d.sources;
  return j;
}

std::string device_detail(const device::DeviceSpec& d) {
  std::string out = fmt::format("{} ({}) — {} {}, {} SMs, {:g} GiB\n", d.name, d.id, d.vendor,
                                d.architecture, d.sm_count, d.memory_gib);
  out += fmt::format("  memory bandwidth {:.3g} TB/s, TDP {:g} W, idle {:g} W\n",
                     d.memory_bandwidth_byte_per_s / 1e12, d.tdp_w, d.idle_w);
  out += fmt::format(
      "  core clock {:g}–{:g} MHz (base {:g}, step {:g}); DVFS model: voltage "
      "{:.2f}·Vmax up to {:g} MHz, linear to Vmax at boost\n",
      d.clock.min_mhz, d.clock.boost_mhz, d.clock.base_mhz, d.clock.step_mhz, d.dvfs.v_min_ratio,
      d.dvfs.knee_mhz);
  out += fmt::format(
      "  efficiency: compute {:.0f} %{}, memory {:.0f} % of peak, {:.1f} µs per kernel\n",
      d.efficiency.compute * 100,
      d.efficiency.tensor ? fmt::format(", tensor cores {:.0f} %", *d.efficiency.tensor * 100)
                          : std::string(),
      d.efficiency.memory * 100, d.efficiency.kernel_overhead_s * 1e6);
  out += "  time model: " + time_model_provenance(d) + "\n";
  out += "  power model: archline" +
         (d.power_activity.provenance.empty() ? std::string(" alone (not calibrated)")
                                              : " + " + d.power_activity.provenance) +
         "\n";
  TextTable table;
  using A = TextTable::Align;
  table.add_column("precision", A::kLeft);
  table.add_column("peak TFLOP/s", A::kRight);
  table.add_column("eps_flop pJ", A::kRight);
  table.add_column("eps_mem pJ/B", A::kRight);
  table.add_column("pi0 W", A::kRight);
  table.add_column("archline source", A::kLeft);
  for (device::Precision p : device::all_precisions()) {
    if (!d.peak(p)) continue;
    const device::ArchlineParameters a = d.archline_for(p);
    table.add_row({std::string(device::to_string(p)), tflops(d, p),
                   fmt::format("{:.2f}", a.eps_flop_j * 1e12),
                   fmt::format("{:.2f}", a.eps_mem_j_per_byte * 1e12),
                   fmt::format("{:.1f}", a.pi0_w),
                   (a.estimated ? "estimate: " : "measured: ") + a.source});
  }
  out += table.render();
  if (!d.estimated_fields.empty()) {
    out += "  estimated fields: " + join_with_commas(d.estimated_fields) + "\n";
  }
  out += "  sources: " + d.sources + "\n";
  return out;
}

std::string catalog_text(const device::DeviceCatalog& catalog) {
  TextTable table;
  using A = TextTable::Align;
  table.add_column("id", A::kLeft);
  table.add_column("name", A::kLeft);
  table.add_column("FP32 TF/s", A::kRight);
  table.add_column("FP16 TF/s", A::kRight);
  table.add_column("TB/s", A::kRight);
  table.add_column("TDP W", A::kRight);
  table.add_column("clock MHz", A::kRight);
  table.add_column("eps_flop pJ", A::kRight);
  table.add_column("eps_mem pJ/B", A::kRight);
  table.add_column("pi0 W", A::kRight);
  table.add_column("archline", A::kLeft);
  table.add_column("time model", A::kLeft);
  for (const auto& d : catalog.devices()) {
    const device::ArchlineParameters a = d.archline_for(device::Precision::kFp32);
    table.add_row(
        {d.id, d.name, tflops(d, device::Precision::kFp32), tflops(d, device::Precision::kFp16),
         fmt::format("{:.2f}", d.memory_bandwidth_byte_per_s / 1e12), fmt::format("{:g}", d.tdp_w),
         fmt::format("{:g}–{:g}", d.clock.min_mhz, d.clock.boost_mhz),
         fmt::format("{:.2f}", a.eps_flop_j * 1e12),
         fmt::format("{:.1f}", a.eps_mem_j_per_byte * 1e12), fmt::format("{:.1f}", a.pi0_w),
         a.estimated ? "estimated" : "measured",
         d.calibration.provenance.empty()
             ? "not calibrated"
             : (d.calibration.transferred ? "transferred from " : "calibrated: ") +
                   d.calibration.from_generation});
  }
  std::string host;
  if (catalog.calibration()) {
    host = fmt::format(
        "host launch time of eager PyTorch (predict's default): {:.1f} µs per kernel in "
        "inference, {:.1f} µs in training, fitted on {}\n",
        catalog.calibration()->host_launch_for(false) * 1e6,
        catalog.calibration()->host_launch_for(true) * 1e6,
        catalog.calibration()->host_launch_source);
  }
  const std::string sources = join_with_commas(catalog.sources());
  return fmt::format(
             "{} devices from {} (peaks dense, at boost clock; archline fp32: E = "
             "W*eps_flop + Q*eps_mem + T*pi0; `nnergy devices ID` for details)\n",
             catalog.devices().size(), sources) +
         table.render() + host;
}

}  // namespace

std::string render_text(const DevicesReport& report) {
  if (report.device) return device_detail(*report.device);
  return catalog_text(report.catalog);
}

nlohmann::ordered_json to_json(const DevicesReport& report) {
  if (report.device) return device_json(*report.device);
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : report.catalog.devices()) j["devices"].push_back(device_json(d));
  return j;
}

std::string render_text(const PowerSourcesReport& report) {
  TextTable table;
  using A = TextTable::Align;
  table.add_column("source", A::kLeft);
  table.add_column("kind", A::kLeft);
  table.add_column("name", A::kLeft);
  table.add_column("power now", A::kRight);
  table.add_column("energy counter", A::kLeft);
  table.add_column("SM clock MHz", A::kRight);
  for (const DetectedSource& s : report.sources) {
    table.add_row({s.info.id, s.info.kind, s.info.name,
                   s.reading.power_w ? fmt::format("{:.1f} W", *s.reading.power_w) : "-",
                   s.info.has_energy_counter ? "yes" : "no",
                   s.reading.sm_clock_mhz ? fmt::format("{:g}", *s.reading.sm_clock_mhz) : "-"});
  }
  std::string out = fmt::format("{} power source(s) present here\n", report.sources.size());
  if (!report.sources.empty()) out += table.render();
  for (const measure::Unavailable& u : report.unavailable) {
    out += fmt::format("{}: unavailable — {}\n", u.source, u.reason);
  }
  return out;
}

nlohmann::ordered_json to_json(const PowerSourcesReport& report) {
  nlohmann::ordered_json j;
  j["sources"] = nlohmann::ordered_json::array();
  for (const DetectedSource& s : report.sources) {
    j["sources"].push_back(
        {{"id", s.info.id},
         {"kind", s.info.kind},
         {"name", s.info.name},
         {"uuid", s.info.uuid},
         {"driver_version", s.info.driver_version},
         {"has_energy_counter", s.info.has_energy_counter},
         {"power_is_averaged", s.info.power_is_averaged},
         {"power_w", s.reading.power_w ? nlohmann::ordered_json(*s.reading.power_w)
                                       : nlohmann::ordered_json(nullptr)}});
  }
  j["unavailable"] = nlohmann::ordered_json::array();
  for (const measure::Unavailable& u : report.unavailable) {
    j["unavailable"].push_back({{"source", u.source}, {"reason", u.reason}});
  }
  return j;
}

}  // namespace nnergy::report
