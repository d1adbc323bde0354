#include "nnergy/report/kernel_calibration_report.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using json = nlohmann::ordered_json;
using Align = TextTable::Align;

json scores_json(const std::vector<calibration::KernelScore>& scores) {
  json out = json::array();
  for (const calibration::KernelScore& s : scores) {
    out.push_back(json{{"device", s.device_id},
                       {"engine", s.engine},
                       {"format", s.format},
                       {"quantity", s.quantity},
                       {"count", s.count},
                       {"mape", s.mape},
                       {"median_ratio", s.median_ratio},
                       {"log_sigma", s.log_sigma}});
  }
  return out;
}

// Parameters of the GEMM time model by engine and format (the GEMMs' and the MoE layers').
std::string gemm_table(
    const std::map<std::string, std::map<std::string, kernel::GemmParameters>>& m) {
  TextTable g;
  g.add_column("engine", Align::kLeft);
  g.add_column("format", Align::kLeft);
  for (const char* h : {"eta compute", "eta memory", "t0 (us)", "K half", "tile exp",
                        "overlap loss", "quantize (us)", "kernels"})
    g.add_column(h, Align::kRight);
  for (const auto& [engine, formats] : m) {
    for (const auto& [format, p] : formats) {
      g.add_row({engine, format, fmt::format("{:.0f} %", p.compute_efficiency * 100),
                 fmt::format("{:.0f} %", p.memory_efficiency * 100),
                 fmt::format("{:.1f}", p.latency_s * 1e6), fmt::format("{:.0f}", p.k_half),
                 fmt::format("{:.2f}", p.tile_exponent), fmt::format("{:.2f}", p.overlap_loss),
                 fmt::format("{:.1f}", p.quantize_latency_s * 1e6),
                 std::to_string(p.measurements)});
    }
  }
  return g.render();
}

}  // namespace

std::string render_text(const KernelCalibrationReport& r) {
  const kernel::KernelParameters& k = r.fit.parameters;
  std::string out = fmt::format(
      "nnergy calibrate --kernels: {} measured GEMMs ({} with sustained power; {} table rows of "
      "GPUs, formats or engines nnergy does not know left out)\n\n",
      r.fit.rows, r.fit.power_rows, r.skipped);
  out += "GEMM time t = t0 + max(t_c, t_m) + beta*min(t_c, t_m) (+ input quantization):\n" +
         gemm_table(k.gemm) + "\n";
  if (!k.moe.empty()) {
    out += fmt::format(
        "fused MoE layers (two grouped GEMMs over the active experts + the permutation), {} "
        "measured:\n",
        r.fit.moe_rows);
    out += gemm_table(k.moe) + "\n";
  }
  if (!k.attention.empty()) {
    TextTable a;
    a.add_column("engine", Align::kLeft);
    a.add_column("kernels", Align::kLeft);
    for (const char* h : {"eta compute", "eta exp", "eta memory", "t0 (us)", "CTA (us)",
                          "overlap loss", "CTAs/SM", "kernels"})
      a.add_column(h, Align::kRight);
    for (const auto& [engine, keys] : k.attention) {
      for (const auto& [key, p] : keys) {
        a.add_row({engine, key, fmt::format("{:.0f} %", p.compute_efficiency * 100),
                   fmt::format("{:.0f} %", p.exp_efficiency * 100),
                   fmt::format("{:.0f} %", p.memory_efficiency * 100),
                   fmt::format("{:.1f}", p.latency_s * 1e6), fmt::format("{:.2f}", p.cta_s * 1e6),
                   fmt::format("{:.2f}", p.overlap_loss), fmt::format("{:.2f}", p.saturating_ctas),
                   std::to_string(p.measurements)});
      }
    }
    out += fmt::format(
        "fused attention (prefill: query tiles x key blocks; decode: KV-cache streaming), {} "
        "measured kernels:\n",
        r.fit.attention_rows);
    out += a.render() + "\n";
  }
  if (!k.collective.empty()) {
    TextTable c;
    c.add_column("library", Align::kLeft);
    c.add_column("collective", Align::kLeft);
    for (const char* h : {"t0 (us)", "per step (us)", "eta link", "one-shot", "kernels"})
      c.add_column(h, Align::kRight);
    for (const auto& [library, keys] : k.collective) {
      for (const auto& [key, p] : keys) {
        c.add_row({library, key, fmt::format("{:.1f}", p.latency_s * 1e6),
                   fmt::format("{:.2f}", p.step_s * 1e6),
                   fmt::format("{:.0f} %", p.efficiency * 100), p.one_shot ? "yes" : "no",
                   std::to_string(p.measurements)});
      }
    }
    out += fmt::format(
        "collectives in one node (t = t0 + steps*alpha + wire bytes/(eta*link)), {} measured:\n",
        r.fit.collective_rows);
    out += c.render() + "\n";
  }
  std::string weights;
  for (const auto& [format, w] : k.power.format_weight)
    weights += fmt::format(", {} x{:.2f}", format, w);
  out += fmt::format(
      "board power P = P_idle + (P_limit - P_idle)*({:.2f} + {:.2f}*u_compute*w + "
      "{:.2f}*u_memory){}; fitted on {}\n\n",
      k.power.base, k.power.compute, k.power.memory, weights,
      k.power.fitted_on.empty() ? "nothing (defaults)" : k.power.fitted_on);

  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           const calibration::KernelScore*>
      in_sample;
  for (const calibration::KernelScore& s : r.fit.in_sample)
    in_sample[{s.device_id, s.engine, s.format, s.quantity}] = &s;
  TextTable t;
  for (const char* h : {"GPU", "engine", "format", "quantity"}) t.add_column(h, Align::kLeft);
  for (const char* h : {"kernels", "MAPE held out", "median ratio", "MAPE in sample"})
    t.add_column(h, Align::kRight);
  for (const calibration::KernelScore& s : r.fit.out_of_sample) {
    const auto in = in_sample.find({s.device_id, s.engine, s.format, s.quantity});
    t.add_row({s.device_id, s.engine, s.format, s.quantity, std::to_string(s.count),
               fmt::format("{:.1f} %", s.mape * 100), fmt::format("{:.2f}", s.median_ratio),
               in == in_sample.end() ? "" : fmt::format("{:.1f} %", in->second->mape * 100)});
  }
  out += "leave-one-GPU-out (each GPU predicted with parameters fitted on the others only):\n" +
         t.render() + "\n";
  out += k.accuracy.time + "\n";
  if (!k.accuracy.power.empty()) out += k.accuracy.power + "\n";
  if (!k.accuracy.attention.empty()) out += k.accuracy.attention + "\n";
  if (!k.accuracy.collective.empty()) out += k.accuracy.collective + "\n";
  if (!k.accuracy.moe.empty()) out += k.accuracy.moe + "\n";
  if (!r.written.empty()) out += "wrote " + r.written + "\n";
  return out;
}

json to_json(const KernelCalibrationReport& r) {
  json j;
  j["context"] = r.context.to_json();
  j["fitted"] = json::parse(r.fit.parameters.to_json_text());
  j["out_of_sample"] = scores_json(r.fit.out_of_sample);
  j["in_sample"] = scores_json(r.fit.in_sample);
  j["skipped_rows"] = r.skipped;
  j["written"] = r.written.empty() ? json() : json(r.written);
  return j;
}

}  // namespace nnergy::report
