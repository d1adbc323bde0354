// `nnergy archline`: measure (run), fit, plot, show and synthesize the energy roofline of a GPU
// (seed 003: E = W·ε_flop + Q·ε_mem + T·π0).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/archline/archline_fit.h"
#include "nnergy/archline/archline_model.h"
#include "nnergy/archline/archline_plot.h"
#include "nnergy/archline/benchmark_runner.h"
#include "nnergy/archline/synthetic_benchmark.h"
#include "nnergy/archline/user_catalog_update.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/report/text_table.h"

namespace nnergy::cli {

namespace {

using archline::ArchlineModel;
using device::Precision;
using nlohmann::ordered_json;

constexpr double kPico = 1e12;  // J → pJ, at the edge only

struct ArchlineOptions {
  // run
  std::string gpu = "cuda:0";
  double batch_time_s = 3;
  // run, synth
  std::string precisions;
  std::string out;
  // synth, show, fit, plot
  std::string device;
  std::string devices_file;
  double noise = 0.02;
  std::uint64_t seed = 1;
  double off_clock_fraction = 0;
  // fit, plot
  std::string file;
  bool json = false;
  double confidence = 0.95;
  std::string save_device;
  std::string base_device;
};

std::vector<Precision> parse_precisions(const std::string& list, std::vector<Precision> fallback) {
  if (list.empty()) return fallback;
  std::vector<Precision> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string name =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const Precision p = device::parse_precision(name, "--precision");
    if (p != Precision::kFp32 && p != Precision::kFp64) {
      throw InvalidInput("--precision " + name +
                         ": the archline kernels use the vector units; accepted: fp32, fp64");
    }
    out.push_back(p);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

device::DeviceCatalog load_catalog(const ArchlineOptions& o) {
  device::DeviceCatalog catalog = device::DeviceCatalog::load_default(data_directory());
  if (!o.devices_file.empty()) catalog.merge(device::DeviceCatalog::load(o.devices_file));
  return catalog;
}

std::string pj(double joules) { return fmt::format("{:.4g}", joules * kPico); }

// Derived quantities of seed 003 §3.2, Tables 7, 9, 11, as (label with unit, text, json key,
// value) rows.
struct Derived {
  std::string label;
  std::string text;
  std::string key;
  double value;
};

std::vector<Derived> derived_quantities(const ArchlineModel& m) {
  const double b_tau = m.time_balance_flop_per_byte();
  return {
      {"ε_flop energy per flop [pJ/flop]", pj(m.eps_flop_j), "eps_flop_pj", m.eps_flop_j * kPico},
      {"ε_mem energy per byte [pJ/B]", pj(m.eps_mem_j_per_byte), "eps_mem_pj_per_byte",
       m.eps_mem_j_per_byte * kPico},
      {"ε_mop energy per word [pJ/word]", fmt::format("{:.4g}", m.energy_per_word_j() * kPico),
       "eps_mop_pj_per_word", m.energy_per_word_j() * kPico},
      {"π0 baseline power [W]", fmt::format("{:.4g}", m.pi0_w), "pi0_w", m.pi0_w},
      {"peak performance [TFLOP/s]", fmt::format("{:.4g}", m.peak_flop_per_s / 1e12),
       "peak_flop_per_s", m.peak_flop_per_s},
      {"peak bandwidth [TB/s]", fmt::format("{:.4g}", m.bandwidth_byte_per_s / 1e12),
       "bandwidth_byte_per_s", m.bandwidth_byte_per_s},
      {"B_τ time balance [flop/B]", fmt::format("{:.3g}", b_tau), "time_balance_flop_per_byte",
       b_tau},
      {"B_ε energy balance ε_mem/ε_flop [flop/B]",
       fmt::format("{:.3g}", m.energy_balance_flop_per_byte()), "energy_balance_flop_per_byte",
       m.energy_balance_flop_per_byte()},
      {"B̂_ε effective balance point, I = B̂_ε(I) [flop/B] (Eq. 8)",
       fmt::format("{:.3g}", m.effective_energy_balance_point_flop_per_byte()),
       "effective_energy_balance_point_flop_per_byte",
       m.effective_energy_balance_point_flop_per_byte()},
      {"ε_0,flop = τ_flop·π0 [pJ/flop]", pj(m.baseline_energy_per_flop_j()),
       "baseline_energy_per_flop_pj", m.baseline_energy_per_flop_j() * kPico},
      {"ε̂_flop effective energy per flop [pJ/flop]", pj(m.effective_energy_per_flop_j()),
       "effective_energy_per_flop_pj", m.effective_energy_per_flop_j() * kPico},
      {"η_flop flop energy efficiency [%] (Eq. 13)",
       fmt::format("{:.2f}", m.flop_efficiency() * 100), "flop_efficiency_percent",
       m.flop_efficiency() * 100},
      {"π_flop flop power at peak [W]", fmt::format("{:.4g}", m.flop_power_w()), "pi_flop_w",
       m.flop_power_w()},
      {"π_mem memory power at peak bandwidth [W]", fmt::format("{:.4g}", m.memory_power_w()),
       "pi_mem_w", m.memory_power_w()},
      {"powerline at B_τ [W] (Eq. 10)", fmt::format("{:.4g}", m.power_w(b_tau)),
       "power_at_time_balance_w", m.power_w(b_tau)},
      {"energy per flop at B_τ [pJ/flop] (Eq. 9)", pj(m.energy_per_flop_j(b_tau)),
       "energy_per_flop_at_time_balance_pj", m.energy_per_flop_j(b_tau) * kPico},
  };
}

ordered_json derived_json(const ArchlineModel& m) {
  ordered_json j = ordered_json::object();
  for (const Derived& d : derived_quantities(m)) j[d.key] = d.value;
  return j;
}

// ---------------------------------------------------------------------------------------- show

CommandResult run_show(const ArchlineOptions& o, const std::string& command_line) {
  const device::DeviceCatalog catalog = load_catalog(o);
  const device::DeviceSpec& d = catalog.find(o.device);
  std::vector<Precision> precisions;
  for (Precision p : parse_precisions(o.precisions, {Precision::kFp32, Precision::kFp64})) {
    if (d.peak(p)) precisions.push_back(p);
  }
  std::vector<ArchlineModel> models;
  for (Precision p : precisions) models.push_back(ArchlineModel::from_device(d, p));
  if (o.json) {
    ordered_json j;
    j["context"] = RunContext::now(command_line)
                       .add("device", d.id)
                       .add("catalog", catalog.sources())
                       .to_json();
    j["device"] = d.id;
    j["name"] = d.name;
    ordered_json per = ordered_json::object();
    for (std::size_t i = 0; i < precisions.size(); ++i) {
      ordered_json e = derived_json(models[i]);
      const device::ArchlineParameters a = d.archline_for(precisions[i]);
      e["estimated"] = a.estimated;
      e["source"] = a.source;
      per[std::string(device::to_string(precisions[i]))] = e;
    }
    j["archline"] = per;
    return {j.dump(2) + "\n", 0};
  }
  report::TextTable table;
  table.add_column("quantity", report::TextTable::Align::kLeft);
  for (Precision p : precisions) {
    table.add_column(std::string(device::to_string(p)), report::TextTable::Align::kRight);
  }
  const std::size_t rows = derived_quantities(models.front()).size();
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::string> cells = {derived_quantities(models.front())[r].label};
    for (const ArchlineModel& m : models) cells.push_back(derived_quantities(m)[r].text);
    table.add_row(cells);
  }
  std::string out =
      fmt::format("{} ({}): archline E = W·ε_flop + Q·ε_mem + T·π0 (seed 003 Eqs. 5, 8–10, 13)\n",
                  d.name, d.id);
  out += table.render();
  for (Precision p : precisions) {
    const device::ArchlineParameters a = d.archline_for(p);
    out += fmt::format("  {}: {}{}{}\n", device::to_string(p),
                       a.estimated ? "estimate: " : "measured: ", a.source,
                       a.reference_peak_flop_per_s || a.reference_bandwidth_byte_per_s
                           ? " (derived quantities at the peaks the source used)"
                           : "");
  }
  return {out, 0};
}

// ----------------------------------------------------------------------------------- synth

std::string context_comments(const RunContext& context) { return context.to_csv_comments(); }

CommandResult run_synth(const ArchlineOptions& o, const std::string& command_line) {
  if (o.out.empty()) throw InvalidInput("--out: expected the path of the CSV to write");
  if (!(o.noise >= 0 && o.noise < 1)) {
    throw InvalidInput(fmt::format("--noise {:g}: expected a relative noise in [0, 1)", o.noise));
  }
  const device::DeviceCatalog catalog = load_catalog(o);
  const device::DeviceSpec& d = catalog.find(o.device);
  std::vector<archline::ArchlinePoint> points;
  RunContext context = RunContext::now(command_line);
  context.add("kind", "archline benchmark points (synthetic)")
      .add("catalog_device", d.id)
      .add("noise_relative", o.noise)
      .add("seed", o.seed);
  for (Precision p : parse_precisions(o.precisions, {Precision::kFp32})) {
    archline::SyntheticOptions s;
    s.truth = ArchlineModel::from_device(d, p);
    s.precision = p;
    s.noise = o.noise;
    s.seed = o.seed + static_cast<std::uint64_t>(p);
    s.off_clock_fraction = o.off_clock_fraction;
    const std::string prec(device::to_string(p));
    context.add("truth_" + prec,
                fmt::format("eps_flop {} pJ/flop, eps_mem {} pJ/B, pi0 {:g} W",
                            pj(s.truth.eps_flop_j), pj(s.truth.eps_mem_j_per_byte), s.truth.pi0_w));
    const std::vector<archline::ArchlinePoint> generated = archline::generate_synthetic_points(s);
    points.insert(points.end(), generated.begin(), generated.end());
  }
  write_file_atomically(o.out, archline::to_csv(points, context_comments(context)), "--out");
  return {fmt::format("wrote {} synthetic points of {} to {}\n", points.size(), d.id, o.out), 0};
}

// ------------------------------------------------------------------------------------- run

CommandResult run_run(const ArchlineOptions& o, const std::string& command_line) {
  if (o.out.empty()) throw InvalidInput("--out: expected the path of the CSV to write");
  archline::BenchmarkRunOptions r;
  const std::optional<int> index = measure::parse_cuda_ordinal(o.gpu);
  if (!index) {
    throw InvalidInput("--device " + o.gpu + ": expected cuda:N or N, a CUDA device ordinal");
  }
  r.gpu_index = *index;
  r.precisions = parse_precisions(o.precisions, {Precision::kFp32});
  if (!(o.batch_time_s >= 1)) {
    throw InvalidInput(
        fmt::format("--batch-time-s {:g}: expected at least 1 s (NVML averages power over ~1 s)",
                    o.batch_time_s));
  }
  r.batch_time_s = o.batch_time_s;
  r.progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  const archline::BenchmarkRun run = archline::run_benchmarks(r);
  RunContext context = RunContext::now(command_line);
  context.add("kind", "archline benchmark points (measured)");
  if (!o.device.empty()) context.add("catalog_device", o.device);
  for (const auto& [key, value] : run.context) context.add(key, value);
  write_file_atomically(o.out, archline::to_csv(run.points, context_comments(context)), "--out");
  return {fmt::format("wrote {} measured points to {}\n", run.points.size(), o.out), 0};
}

// ------------------------------------------------------------------------------- fit, plot

// The peaks to read fitted parameters against: a catalog device (--device, else the CSV's
// catalog_device), else the highest measured rates.
struct Peaks {
  double flop_per_s = 0;
  double byte_per_s = 0;
  std::string source;
};

Peaks peaks_for(const ArchlineOptions& o, const archline::ArchlineDataSet& data,
                const archline::ArchlineFitResult& fit) {
  std::string id = o.device;
  if (id.empty()) id = data.context_value("catalog_device").value_or("");
  if (!id.empty()) {
    const device::DeviceCatalog catalog = load_catalog(o);
    const device::DeviceSpec& d = catalog.find(id);
    if (d.peak(fit.precision)) {
      const ArchlineModel m = ArchlineModel::from_device(d, fit.precision);
      return {m.peak_flop_per_s, m.bandwidth_byte_per_s, "catalog device " + d.id};
    }
  }
  if (!(fit.measured_peak_flop_per_s > 0 && fit.measured_bandwidth_byte_per_s > 0)) {
    throw InvalidInput(
        "the data have no point with W > 0 or none with Q > 0, so no measured peak; give "
        "--device ID to read the parameters against a catalog device's peaks");
  }
  return {fit.measured_peak_flop_per_s, fit.measured_bandwidth_byte_per_s,
          "highest measured rates (W/T, Q/T)"};
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
  j["eps_flop_pj"] = estimate_json(e.eps_flop_j, kPico);
  j["eps_mem_pj_per_byte"] = estimate_json(e.eps_mem_j_per_byte, kPico);
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

struct FittedFile {
  archline::ArchlineDataSet data;
  std::vector<archline::ArchlineFitResult> fits;
  std::vector<Peaks> peaks;
};

FittedFile fit_file(const ArchlineOptions& o) {
  if (!(o.confidence > 0 && o.confidence < 1)) {
    throw InvalidInput(
        fmt::format("--confidence {:g}: expected a level in (0, 1), e.g. 0.95", o.confidence));
  }
  FittedFile f;
  f.data = archline::read_archline_csv(o.file);
  if (f.data.points.empty()) throw InvalidInput(o.file + ": no points after the header");
  for (Precision p : parse_precisions(o.precisions, archline::precisions_in(f.data.points))) {
    f.fits.push_back(archline::fit_archline(f.data.points, p, o.file, o.confidence));
    f.peaks.push_back(peaks_for(o, f.data, f.fits.back()));
  }
  return f;
}

CommandResult run_fit(const ArchlineOptions& o, const std::string& command_line) {
  const FittedFile f = fit_file(o);
  std::string saved;
  if (!o.save_device.empty()) {
    std::vector<archline::FittedParameters> params;
    for (const archline::ArchlineFitResult& fit : f.fits) {
      params.push_back({fit.precision, fit.energy.eps_flop_j.value,
                        fit.energy.eps_mem_j_per_byte.value, fit.energy.pi0_w.value,
                        fmt::format("nnergy archline fit of {} ({} {} points, R² {:.4f}), {}",
                                    std::filesystem::path(o.file).filename().string(),
                                    fit.points_admitted, f.data.points_origin(),
                                    fit.energy.r_squared, RunContext::now("").date_utc)});
    }
    std::optional<std::string> base;
    if (!o.base_device.empty()) {
      base = o.base_device;
    } else if (auto from_file = f.data.context_value("catalog_device")) {
      base = *from_file;
    }
    const std::filesystem::path user = device::DeviceCatalog::user_catalog_path();
    archline::save_fitted_device(user, o.save_device, params, data_directory() / "devices.json",
                                 base);
    saved = fmt::format("saved the fitted parameters as device '{}' in {}\n", o.save_device,
                        user.string());
  }
  if (o.json) {
    ordered_json j;
    RunContext context = RunContext::now(command_line);
    context.add("input", o.file);
    for (const auto& [key, value] : f.data.context) context.add("input_" + key, value);
    j["context"] = context.to_json();
    ordered_json per = ordered_json::object();
    for (std::size_t i = 0; i < f.fits.size(); ++i) {
      const archline::ArchlineFitResult& fit = f.fits[i];
      ordered_json e;
      e["points_origin"] = f.data.points_origin();
      e["points_total"] = fit.points_total;
      e["points_admitted"] = fit.points_admitted;
      e["confidence"] = o.confidence;
      e["parameters"] = equation_json(fit.energy);
      e["r_squared"] = fit.energy.r_squared;
      e["r_squared_all_points"] =
          fit.r_squared_all ? ordered_json(*fit.r_squared_all) : ordered_json(nullptr);
      if (fit.energy_with_intercept)
        e["with_intercept"] = equation_json(*fit.energy_with_intercept);
      if (fit.per_flop) e["per_flop"] = equation_json(*fit.per_flop);
      if (fit.per_byte) e["per_byte"] = equation_json(*fit.per_byte);
      ordered_json refs = ordered_json::array();
      for (const archline::ReferenceFit& r : fit.reference) {
        ordered_json rj;
        rj["benchmark"] = r.benchmark;
        rj["points"] = r.point_count;
        if (r.eps_flop_j) rj["eps_flop_pj"] = *r.eps_flop_j * kPico;
        if (r.eps_mem_j_per_byte) rj["eps_mem_pj_per_byte"] = *r.eps_mem_j_per_byte * kPico;
        rj["pi0_w"] = r.pi0_w;
        if (r.r_squared) rj["r_squared"] = *r.r_squared;
        refs.push_back(rj);
      }
      e["reference_benchmarks"] = refs;
      e["peaks_from"] = f.peaks[i].source;
      e["derived"] = derived_json(fit.model(f.peaks[i].flop_per_s, f.peaks[i].byte_per_s));
      e["warnings"] = fit.warnings;
      per[std::string(device::to_string(fit.precision))] = e;
    }
    j["fits"] = per;
    if (!saved.empty()) j["saved_device"] = o.save_device;
    return {j.dump(2) + "\n", 0};
  }
  std::string out;
  for (std::size_t i = 0; i < f.fits.size(); ++i) {
    const archline::ArchlineFitResult& fit = f.fits[i];
    const std::string prec(device::to_string(fit.precision));
    out += fmt::format(
        "{} {}: {} of {} {} points admitted; Eq. 5 OLS fit, {:.0f} % confidence intervals\n",
        o.file, prec, fit.points_admitted, fit.points_total, f.data.points_origin(),
        o.confidence * 100);
    report::TextTable table;
    table.add_column("fit", report::TextTable::Align::kLeft);
    table.add_column("ε_flop pJ/flop [CI]", report::TextTable::Align::kRight);
    table.add_column("ε_mem pJ/B [CI]", report::TextTable::Align::kRight);
    table.add_column("π0 W [CI]", report::TextTable::Align::kRight);
    table.add_column("R²", report::TextTable::Align::kRight);
    table.add_column("points", report::TextTable::Align::kRight);
    auto add = [&](const std::string& name, const archline::EquationFit& e) {
      table.add_row({name, estimate_text(e.eps_flop_j, kPico, "pJ"),
                     estimate_text(e.eps_mem_j_per_byte, kPico, "pJ/B"),
                     estimate_text(e.pi0_w, 1, "W"), fmt::format("{:.4f}", e.r_squared),
                     fmt::format("{}", e.point_count)});
    };
    add("Eq. 5 E (parameters)", fit.energy);
    if (fit.per_flop) add("Eq. 6 E/W", *fit.per_flop);
    if (fit.per_byte) add("Eq. 7 E/Q", *fit.per_byte);
    out += table.render();
    out += fmt::format("  R² {:.4f} on admitted points, R²* {} on all points (Table 4)\n",
                       fit.energy.r_squared,
                       fit.r_squared_all ? fmt::format("{:.4f}", *fit.r_squared_all) : "-");
    if (fit.energy_with_intercept && fit.energy_with_intercept->intercept_j) {
      const archline::ParameterEstimate& c = *fit.energy_with_intercept->intercept_j;
      out += fmt::format("  Eq. 5 with intercept: c = {:.4g} J [{:.4g}, {:.4g}] (≈ 0 expected)\n",
                         c.value, c.ci_low, c.ci_high);
    }
    for (const archline::ReferenceFit& r : fit.reference) {
      out += fmt::format("  reference {} ({} points): ", r.benchmark, r.point_count);
      if (r.eps_flop_j) out += fmt::format("ε_flop {} pJ/flop, ", pj(*r.eps_flop_j));
      if (r.eps_mem_j_per_byte) out += fmt::format("ε_mem {} pJ/B, ", pj(*r.eps_mem_j_per_byte));
      out += fmt::format("π0 {:.4g} W", r.pi0_w);
      if (r.r_squared) out += fmt::format(", R² {:.4f}", *r.r_squared);
      out += " (Table 5)\n";
    }
    out += fmt::format("  derived quantities at the peaks of the {}:\n", f.peaks[i].source);
    report::TextTable derived;
    derived.add_column("quantity", report::TextTable::Align::kLeft);
    derived.add_column("value", report::TextTable::Align::kRight);
    for (const Derived& d :
         derived_quantities(fit.model(f.peaks[i].flop_per_s, f.peaks[i].byte_per_s))) {
      derived.add_row({"  " + d.label, d.text});
    }
    out += derived.render();
    for (const std::string& w : fit.warnings) out += "  warning: " + w + "\n";
  }
  return {out + saved, 0};
}

CommandResult run_plot(const ArchlineOptions& o, const std::string& command_line) {
  if (o.out.empty()) throw InvalidInput("--out: expected the path of the SVG to write");
  const FittedFile f = fit_file(o);
  std::vector<archline::ArchlinePlotRow> rows;
  const std::string name = f.data.context_value("catalog_device")
                               .value_or(std::filesystem::path(o.file).stem().string());
  for (std::size_t i = 0; i < f.fits.size(); ++i) {
    archline::ArchlinePlotRow row;
    row.precision = f.fits[i].precision;
    row.model = f.fits[i].model(f.peaks[i].flop_per_s, f.peaks[i].byte_per_s);
    row.points = f.data.points;
    row.label = fmt::format("{} {}", name, device::to_string(row.precision));
    row.points_origin = f.data.points_origin();
    rows.push_back(std::move(row));
  }
  RunContext context = RunContext::now(command_line);
  context.add("input", o.file);
  for (const auto& [key, value] : f.data.context) context.add("input_" + key, value);
  write_file_atomically(o.out, archline::render_archline_svg(rows, context.to_json().dump()),
                        "--out");
  return {fmt::format("wrote {} (roofline, archline, powerline for {} precision(s))\n", o.out,
                      rows.size()),
          0};
}

}  // namespace

void add_archline_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<ArchlineOptions>();
  CLI::App* cmd = app.add_subcommand(
      "archline", "Energy roofline of a GPU: energy per flop, per byte and baseline power");
  cmd->require_subcommand(1);

  CLI::App* run = cmd->add_subcommand(
      "run", "Run the microbenchmarks (baseline, copy, flop, roofline) on a GPU; write a CSV");
  run->add_option("--device", o->gpu, "CUDA device: cuda:N or N")->capture_default_str();
  run->add_option("--precision", o->precisions, "fp32, fp64 or fp32,fp64 (default fp32)");
  run->add_option("--out", o->out, "CSV file to write")->required();
  run->add_option("--batch-time-s", o->batch_time_s, "length of each batch of launches, s")
      ->capture_default_str();
  run->add_option("--catalog-device", o->device,
                  "catalog id of this GPU, recorded so that fit and plot use its peaks");
  run->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_run(*o, command_line); };
  });

  CLI::App* fit = cmd->add_subcommand(
      "fit", "Fit E = W·ε_flop + Q·ε_mem + T·π0 (OLS) to a CSV of benchmark points");
  fit->add_option("file", o->file, "archline CSV (from `archline run` or `archline synth`)")
      ->required();
  fit->add_option("--precision", o->precisions, "precisions to fit (default: all in the file)");
  fit->add_option("--device", o->device,
                  "catalog device whose peaks the derived quantities use (default: the file's "
                  "catalog_device, else the highest measured rates)");
  fit->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  fit->add_option("--confidence", o->confidence, "level of the confidence intervals")
      ->capture_default_str();
  fit->add_option("--save-device", o->save_device,
                  "store the fitted parameters as this device in the user catalog "
                  "($NNERGY_USER_DEVICES or ~/.config/nnergy/devices.json)");
  fit->add_option("--base-device", o->base_device,
                  "with --save-device: catalog device the new entry copies peaks, clocks and "
                  "limits from (default: the file's catalog_device)");
  fit->add_flag("--json", o->json, "write JSON instead of text");
  fit->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_fit(*o, command_line); };
  });

  CLI::App* plot = cmd->add_subcommand(
      "plot", "Draw roofline, archline and powerline with the measured points (SVG)");
  plot->add_option("file", o->file, "archline CSV")->required();
  plot->add_option("--out", o->out, "SVG file to write")->required();
  plot->add_option("--precision", o->precisions, "precisions to draw (default: all in the file)");
  plot->add_option("--device", o->device, "catalog device whose peaks the lines use");
  plot->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  plot->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_plot(*o, command_line); };
  });

  CLI::App* show = cmd->add_subcommand(
      "show", "Archline parameters of a catalog device and the quantities derived from them");
  show->add_option("device", o->device, "device id or alias")->required();
  show->add_option("--precision", o->precisions, "fp32, fp64 or both (default both)");
  show->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  show->add_flag("--json", o->json, "write JSON instead of text");
  show->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_show(*o, command_line); };
  });

  CLI::App* synth = cmd->add_subcommand(
      "synth", "Synthetic benchmark points from a catalog device's parameters, with noise");
  synth->add_option("--device", o->device, "catalog device whose parameters and peaks to use")
      ->required();
  synth->add_option("--precision", o->precisions, "fp32, fp64 or fp32,fp64 (default fp32)");
  synth->add_option("--noise", o->noise, "relative standard deviation of the energy noise")
      ->capture_default_str();
  synth->add_option("--seed", o->seed, "random seed")->capture_default_str();
  synth
      ->add_option("--off-clock-fraction", o->off_clock_fraction,
                   "fraction of points marked as taken at another clock")
      ->capture_default_str();
  synth->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  synth->add_option("--out", o->out, "CSV file to write")->required();
  synth->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_synth(*o, command_line); };
  });
}

}  // namespace nnergy::cli
