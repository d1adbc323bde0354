#include "nnergy/report/archline_report.h"

#include <fmt/format.h>

#include "nnergy/archline/derived_quantities.h"
#include "nnergy/core/units.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using archline::ArchlineModel;
using nlohmann::ordered_json;

constexpr double kJouleToPicojoule = units::joules_to_picojoules(1.0);
// The model behind every figure, named for the reader (docs/archline.md has the references).
constexpr const char* kModel = "archline E = W·ε_flop + Q·ε_mem + T·π0 (docs/archline.md)";

std::string pj(double joules) { return fmt::format("{:.4g}", joules * kJouleToPicojoule); }

ordered_json derived_json(const ArchlineModel& m) {
  ordered_json j = ordered_json::object();
  for (const archline::DerivedQuantity& d : archline::derived_quantities(m)) j[d.key] = d.value;
  return j;
}

ordered_json estimate_json(const archline::ParameterEstimate& e, double scale) {
  return {{"value", e.value * scale},
          {"standard_error", e.standard_error * scale},
          {"ci_low", e.ci_low * scale},
          {"ci_high", e.ci_high * scale}};
}

ordered_json equation_json(const archline::EquationFit& e) {
  ordered_json j;
  j["equation"] = e.equation;
  j["eps_flop_pj"] = estimate_json(e.eps_flop_j, kJouleToPicojoule);
  j["eps_mem_pj_per_byte"] = estimate_json(e.eps_mem_j_per_byte, kJouleToPicojoule);
  j["pi0_w"] = estimate_json(e.pi0_w, 1);
  if (e.intercept_j) j["intercept_j"] = estimate_json(*e.intercept_j, 1);
  j["r_squared"] = e.r_squared;
  j["condition_number"] = e.condition_number;
  j["points"] = e.point_count;
  return j;
}

std::string estimate_text(const archline::ParameterEstimate& e, double scale, const char* unit) {
  return fmt::format("{:.4g} {} [{:.4g}, {:.4g}]", e.value * scale, unit, e.ci_low * scale,
                     e.ci_high * scale);
}

std::string fit_text(const ArchlineFitReport& report, const ArchlineFitReport::Fit& f) {
  const archline::ArchlineFitResult& fit = f.result;
  std::string out = fmt::format(
      "{} {}: {} of {} {} points admitted; OLS fit of E = W·ε_flop + Q·ε_mem + T·π0, {:.0f} % "
      "confidence intervals\n",
      report.file, device::to_string(fit.precision), fit.points_admitted, fit.points_total,
      report.data.points_origin(), report.confidence * 100);
  TextTable table;
  table.add_column("fit", TextTable::Align::kLeft);
  table.add_column("ε_flop pJ/flop [CI]", TextTable::Align::kRight);
  table.add_column("ε_mem pJ/B [CI]", TextTable::Align::kRight);
  table.add_column("π0 W [CI]", TextTable::Align::kRight);
  table.add_column("R²", TextTable::Align::kRight);
  table.add_column("points", TextTable::Align::kRight);
  auto add = [&](const std::string& name, const archline::EquationFit& e) {
    table.add_row({name, estimate_text(e.eps_flop_j, kJouleToPicojoule, "pJ"),
                   estimate_text(e.eps_mem_j_per_byte, kJouleToPicojoule, "pJ/B"),
                   estimate_text(e.pi0_w, 1, "W"), fmt::format("{:.4f}", e.r_squared),
                   fmt::format("{}", e.point_count)});
  };
  add("E (the parameters)", fit.energy);
  if (fit.per_flop) add("E/W per flop", *fit.per_flop);
  if (fit.per_byte) add("E/Q per byte", *fit.per_byte);
  out += table.render();
  out += fmt::format("  R² {:.4f} on admitted points, R²* {} on all points\n", fit.energy.r_squared,
                     fit.r_squared_all ? fmt::format("{:.4f}", *fit.r_squared_all) : "-");
  if (fit.energy_with_intercept && fit.energy_with_intercept->intercept_j) {
    const archline::ParameterEstimate& c = *fit.energy_with_intercept->intercept_j;
    out += fmt::format("  E with an intercept: c = {:.4g} J [{:.4g}, {:.4g}] (≈ 0 expected)\n",
                       c.value, c.ci_low, c.ci_high);
  }
  for (const archline::ReferenceFit& r : fit.reference) {
    out += fmt::format("  reference {} ({} points): ", r.benchmark, r.point_count);
    if (r.eps_flop_j) out += fmt::format("ε_flop {} pJ/flop, ", pj(*r.eps_flop_j));
    if (r.eps_mem_j_per_byte) out += fmt::format("ε_mem {} pJ/B, ", pj(*r.eps_mem_j_per_byte));
    out += fmt::format("π0 {:.4g} W", r.pi0_w);
    if (r.r_squared) out += fmt::format(", R² {:.4f}", *r.r_squared);
    out += " (one benchmark alone)\n";
  }
  out += fmt::format("  derived quantities at the peaks of the {}:\n", f.peaks.source);
  TextTable derived;
  derived.add_column("quantity", TextTable::Align::kLeft);
  derived.add_column("value", TextTable::Align::kRight);
  for (const archline::DerivedQuantity& d :
       archline::derived_quantities(fit.model(f.peaks.flop_per_s, f.peaks.byte_per_s))) {
    derived.add_row({"  " + d.label, d.text});
  }
  out += derived.render();
  for (const std::string& w : fit.warnings) out += "  warning: " + w + "\n";
  return out;
}

}  // namespace

std::string render_text(const ArchlineShowReport& report) {
  TextTable table;
  table.add_column("quantity", TextTable::Align::kLeft);
  for (const auto& c : report.columns)
    table.add_column(std::string(device::to_string(c.precision)), TextTable::Align::kRight);
  std::vector<std::vector<archline::DerivedQuantity>> columns;
  for (const auto& c : report.columns) columns.push_back(archline::derived_quantities(c.model));
  for (std::size_t r = 0; !columns.empty() && r < columns.front().size(); ++r) {
    std::vector<std::string> cells = {columns.front()[r].label};
    for (const auto& column : columns) cells.push_back(column[r].text);
    table.add_row(cells);
  }
  std::string out = fmt::format("{} ({}): {}\n", report.device_name, report.device_id, kModel);
  out += table.render();
  for (const auto& c : report.columns) {
    const device::ArchlineParameters& a = c.parameters;
    out += fmt::format("  {}: {}{}{}\n", device::to_string(c.precision),
                       a.estimated ? "estimate: " : "measured: ", a.source,
                       a.reference_peak_flop_per_s || a.reference_bandwidth_byte_per_s
                           ? " (derived quantities at the peaks the source used)"
                           : "");
  }
  return out;
}

ordered_json to_json(const ArchlineShowReport& report) {
  ordered_json j;
  j["context"] = report.context.to_json();
  j["device"] = report.device_id;
  j["name"] = report.device_name;
  ordered_json per = ordered_json::object();
  for (const auto& c : report.columns) {
    ordered_json e = derived_json(c.model);
    e["estimated"] = c.parameters.estimated;
    e["source"] = c.parameters.source;
    per[std::string(device::to_string(c.precision))] = e;
  }
  j["archline"] = per;
  return j;
}

std::string render_text(const ArchlineFitReport& report) {
  std::string out;
  for (const auto& f : report.fits) out += fit_text(report, f);
  if (report.saved_device) {
    out += fmt::format("saved the fitted parameters as device '{}' in {}\n", *report.saved_device,
                       report.user_catalog.string());
  }
  return out;
}

ordered_json to_json(const ArchlineFitReport& report) {
  ordered_json j;
  j["context"] = report.context.to_json();
  ordered_json per = ordered_json::object();
  for (const auto& f : report.fits) {
    const archline::ArchlineFitResult& fit = f.result;
    ordered_json e;
    e["points_origin"] = report.data.points_origin();
    e["points_total"] = fit.points_total;
    e["points_admitted"] = fit.points_admitted;
    e["confidence"] = report.confidence;
    e["parameters"] = equation_json(fit.energy);
    e["r_squared"] = fit.energy.r_squared;
    e["r_squared_all_points"] =
        fit.r_squared_all ? ordered_json(*fit.r_squared_all) : ordered_json(nullptr);
    if (fit.energy_with_intercept) e["with_intercept"] = equation_json(*fit.energy_with_intercept);
    if (fit.per_flop) e["per_flop"] = equation_json(*fit.per_flop);
    if (fit.per_byte) e["per_byte"] = equation_json(*fit.per_byte);
    ordered_json refs = ordered_json::array();
    for (const archline::ReferenceFit& r : fit.reference) {
      ordered_json rj;
      rj["benchmark"] = r.benchmark;
      rj["points"] = r.point_count;
      if (r.eps_flop_j) rj["eps_flop_pj"] = *r.eps_flop_j * kJouleToPicojoule;
      if (r.eps_mem_j_per_byte)
        rj["eps_mem_pj_per_byte"] = *r.eps_mem_j_per_byte * kJouleToPicojoule;
      rj["pi0_w"] = r.pi0_w;
      if (r.r_squared) rj["r_squared"] = *r.r_squared;
      refs.push_back(rj);
    }
    e["reference_benchmarks"] = refs;
    e["peaks_from"] = f.peaks.source;
    e["derived"] = derived_json(fit.model(f.peaks.flop_per_s, f.peaks.byte_per_s));
    e["warnings"] = fit.warnings;
    per[std::string(device::to_string(fit.precision))] = e;
  }
  j["fits"] = per;
  if (report.saved_device) j["saved_device"] = *report.saved_device;
  return j;
}

std::string render_text(const ArchlineFileReport& report) {
  return fmt::format("wrote {} {} to {}\n", report.count, report.what, report.path.string());
}

}  // namespace nnergy::report
