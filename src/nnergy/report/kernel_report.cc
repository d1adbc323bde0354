#include "nnergy/report/kernel_report.h"

#include <fmt/format.h>

namespace nnergy::report {

namespace {

using json = nlohmann::ordered_json;

std::string time_text(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

std::string plus_minus(double std, const std::string& text) {
  return std > 0 ? " ± " + text : std::string(" (no uncertainty: not calibrated)");
}

}  // namespace

std::string render_text(const KernelReport& r) {
  const kernel::KernelEstimate& e = r.estimate;
  std::string out = fmt::format("nnergy kernel {}: {} on {} ({} kernels)\n\n", r.kernel,
                                r.description, r.device_name, r.engine);
  const double tflops = e.time_s > 0 ? e.flop_count / e.time_s / 1e12 : 0;
  const double gbs = e.time_s > 0 ? e.byte_count / e.time_s / 1e9 : 0;
  out += fmt::format("  time          {}{}\n", time_text(e.time_s),
                     plus_minus(e.time_std_s, time_text(e.time_std_s)));
  if (r.peak_flop_per_s > 0) {
    out += fmt::format("  achieved      {:.1f} TFLOP/s ({:.0f} % of the {} peak), {:.0f} GB/s\n",
                       tflops, 100 * tflops * 1e12 / r.peak_flop_per_s, r.format, gbs);
  } else {
    out += fmt::format("  achieved      {:.0f} GB/s sent per GPU (bus bandwidth)\n", gbs);
  }
  std::string bound(kernel::to_string(e.bound));
  if (e.bound == kernel::Bound::kPowerCap) {
    bound += fmt::format(" (clocks {:.0f} -> {:.0f} MHz to stay at the {:.0f} W limit)",
                         r.boost_mhz, e.clock_mhz, r.power_limit_w);
  }
  if (r.peak_flop_per_s == 0) {  // a collective: no units' peak, the link bounds it
    out +=
        fmt::format("  bound         {} (bytes over the link {})\n", bound, time_text(e.memory_s));
  } else {
    out += fmt::format("  bound         {} (compute {}, memory {})\n", bound,
                       time_text(e.compute_s), time_text(e.memory_s));
  }
  if (!r.tile_meaning.empty())
    out += fmt::format(
        "  tiles         {}x{} ({}), {:.0f} wave(s) over {} SMs: tile use {:.0f} %, wave use "
        "{:.0f} "
        "%\n",
        e.tile_m, e.tile_n, r.tile_meaning, e.waves, r.sm_count, e.tile_utilisation * 100,
        e.wave_utilisation * 100);
  out += fmt::format("  board power   {:.0f} W{}\n", e.power_w,
                     plus_minus(e.power_std_w, fmt::format("{:.0f} W", e.power_std_w)));
  out += fmt::format("  energy        {:.3g} J{}\n", e.energy_j,
                     plus_minus(e.energy_std_j, fmt::format("{:.2g} J", e.energy_std_j)));
  if (!r.notes.empty()) {
    out += "\nnotes:\n";
    for (const std::string& n : r.notes) out += "  - " + n + "\n";
  }
  return out;
}

json to_json(const KernelReport& r) {
  const kernel::KernelEstimate& e = r.estimate;
  json j;
  j["context"] = r.context.to_json();
  j["kernel"] = r.kernel;
  j["device"] = json{{"id", r.device_id}, {"name", r.device_name}};
  j["engine"] = r.engine;
  j["format"] = r.format;
  json shape = json::object();
  for (const auto& [name, value] : r.shape) shape[name] = value;
  j["shape"] = shape;
  j["totals"] = json{{"time_s", e.time_s},         {"time_std_s", e.time_std_s},
                     {"avg_power_w", e.power_w},   {"avg_power_std_w", e.power_std_w},
                     {"energy_j", e.energy_j},     {"energy_std_j", e.energy_std_j},
                     {"flop_count", e.flop_count}, {"byte_count", e.byte_count}};
  const double rate = e.time_s > 0 ? e.flop_count / e.time_s : 0;
  j["achieved"] = json{{"tflop_per_s", rate / 1e12},
                       {"gb_per_s", e.time_s > 0 ? e.byte_count / e.time_s / 1e9 : 0},
                       {"peak_share", r.peak_flop_per_s > 0 ? rate / r.peak_flop_per_s : 0}};
  j["bound"] = std::string(kernel::to_string(e.bound));
  j["times"] = json{{"compute_s", e.compute_s}, {"memory_s", e.memory_s}};
  j["tiles"] = json{{"tile_m", e.tile_m},
                    {"tile_n", e.tile_n},
                    {"waves", e.waves},
                    {"tile_utilisation", e.tile_utilisation},
                    {"wave_utilisation", e.wave_utilisation}};
  j["clock_mhz"] = e.clock_mhz;
  j["notes"] = r.notes;
  return j;
}

}  // namespace nnergy::report
