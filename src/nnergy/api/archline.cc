#include "nnergy/api/archline.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/archline/archline_plot.h"
#include "nnergy/archline/benchmark_runner.h"
#include "nnergy/archline/synthetic_benchmark.h"
#include "nnergy/archline/user_catalog_update.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/units.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/report/html_report.h"

namespace nnergy::api {

namespace {

using archline::ArchlineModel;
using device::Precision;

// The archline kernels use the vector units: only fp32 and fp64 have benchmarks and parameters.
std::vector<Precision> vector_precisions(const std::vector<Precision>& asked,
                                         std::vector<Precision> fallback, SettingNames names) {
  if (asked.empty()) return fallback;
  for (Precision p : asked) {
    if (p != Precision::kFp32 && p != Precision::kFp64) {
      throw InvalidInput(setting_with_value(names, "precision", device::to_string(p)) +
                         ": the archline kernels use the vector units; accepted: fp32, fp64");
    }
  }
  return asked;
}

device::DeviceCatalog load_catalog(const std::filesystem::path& devices_file) {
  return device::DeviceCatalog::load_with_user(data_directory(), devices_file);
}

void require_out(const std::filesystem::path& out, SettingNames names, const char* what) {
  if (out.empty())
    throw InvalidInput(
        fmt::format("{}: expected the path of the {} to write", setting_name(names, "out"), what));
}

// The catalog device the fit reads peaks from (the request's, else the CSV's catalog_device) as
// the archline model of precision `p`, with its id; empty when none is named or it has no peak
// for `p`.
std::optional<std::pair<ArchlineModel, std::string>> catalog_model(
    const ArchlineFitRequest& r, const device::DeviceCatalog& catalog,
    const archline::ArchlineDataSet& data, Precision p) {
  const std::string id = r.device.value_or(data.context_value("catalog_device").value_or(""));
  if (id.empty()) return std::nullopt;
  const device::DeviceSpec& d = catalog.find(id, setting_name(r.names, "device"));
  if (!d.peak(p)) return std::nullopt;
  return std::make_pair(ArchlineModel::from_device(d, p), d.id);
}

// The peaks to read fitted parameters against: the catalog device's, else the highest measured
// rates.
report::ArchlinePeaks peaks_for(
    const ArchlineFitRequest& r,
    const std::optional<std::pair<ArchlineModel, std::string>>& catalog_device,
    const archline::ArchlineFitResult& fit) {
  if (catalog_device) {
    const ArchlineModel& m = catalog_device->first;
    return {m.peak_flop_per_s, m.bandwidth_byte_per_s, "catalog device " + catalog_device->second};
  }
  if (!(fit.measured_peak_flop_per_s > 0 && fit.measured_bandwidth_byte_per_s > 0)) {
    throw InvalidInput(fmt::format(
        "the data have no point with W > 0 or none with Q > 0, so no measured peak; name a "
        "catalog device ({}) to read the parameters against its peaks",
        setting_name(r.names, "device")));
  }
  return {fit.measured_peak_flop_per_s, fit.measured_bandwidth_byte_per_s,
          "highest measured rates (W/T, Q/T)"};
}

// Rates above this multiple of the catalog peak cannot have been measured: the kernel did less
// work than its W or Q count (as the flop kernel did on an H100 before it was fixed).
constexpr double kImpossibleRateFactor = 1.5;

// Marks the points of `p` whose flop rate or bandwidth exceeds kImpossibleRateFactor × the
// catalog device's peak as not admitted, and returns a warning naming them (empty when none).
std::string exclude_impossible_rates(
    std::vector<archline::ArchlinePoint>& points, Precision p,
    const std::optional<std::pair<ArchlineModel, std::string>>& catalog_device) {
  if (!catalog_device) return "";
  const ArchlineModel& m = catalog_device->first;
  std::size_t excluded = 0;
  double worst = 0;
  for (archline::ArchlinePoint& pt : points) {
    if (pt.precision != p || !pt.admitted || !(pt.time_s > 0)) continue;
    const double ratio = std::max(pt.flop_count / pt.time_s / m.peak_flop_per_s,
                                  pt.byte_count / pt.time_s / m.bandwidth_byte_per_s);
    if (ratio > kImpossibleRateFactor) {
      pt.admitted = false;
      ++excluded;
      worst = std::max(worst, ratio);
    }
  }
  if (excluded == 0) return "";
  return fmt::format(
      "{}: {} points excluded because their flop rate or bandwidth is above {:g}× the peak of "
      "{} (up to {:.3g}×): their kernel did less work than W and Q count — check its machine "
      "code (cuobjdump -sass)",
      device::to_string(p), excluded, kImpossibleRateFactor, catalog_device->second, worst);
}

// The fits of the request's file, without saving anything.
report::ArchlineFitReport fit_file(const ArchlineFitRequest& r) {
  if (!(r.confidence > 0 && r.confidence < 1)) {
    throw InvalidInput(
        setting_with_value(r.names, "confidence", fmt::format("{:g}", r.confidence)) +
        ": expected a level in (0, 1), e.g. 0.95");
  }
  report::ArchlineFitReport report;
  report.file = r.file.string();
  report.confidence = r.confidence;
  report.data = archline::read_archline_csv(r.file);
  if (report.data.points.empty()) throw InvalidInput(report.file + ": no points after the header");
  const device::DeviceCatalog catalog = load_catalog(r.devices_file);
  const std::vector<Precision> precisions =
      r.precisions.empty() ? archline::precisions_in(report.data.points) : r.precisions;
  for (Precision p : precisions) {
    const auto catalog_device = catalog_model(r, catalog, report.data, p);
    const std::string impossible = exclude_impossible_rates(report.data.points, p, catalog_device);
    archline::ArchlineFitResult fit =
        archline::fit_archline(report.data.points, p, report.file, r.confidence);
    if (!impossible.empty()) fit.warnings.insert(fit.warnings.begin(), impossible);
    report::ArchlinePeaks peaks = peaks_for(r, catalog_device, fit);
    report.fits.push_back({std::move(fit), std::move(peaks)});
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("input", report.file);
  for (const auto& [key, value] : report.data.context) report.context.add("input_" + key, value);
  return report;
}

}  // namespace

report::ArchlineShowReport archline_show(const ArchlineShowRequest& r) {
  const device::DeviceCatalog catalog = load_catalog(r.devices_file);
  const device::DeviceSpec& d = catalog.find(r.device, setting_name(r.names, "device"));
  report::ArchlineShowReport report;
  report.device_id = d.id;
  report.device_name = d.name;
  for (Precision p :
       vector_precisions(r.precisions, {Precision::kFp32, Precision::kFp64}, r.names)) {
    if (d.peak(p))
      report.columns.push_back({p, ArchlineModel::from_device(d, p), d.archline_for(p)});
  }
  if (report.columns.empty()) {
    throw InvalidInput(
        fmt::format("{}: has no fp32 or fp64 peak in the catalog, so no archline", d.id));
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("device", d.id).add("catalog", catalog.sources());
  return report;
}

report::ArchlineFileReport archline_synth(const ArchlineSynthRequest& r) {
  require_out(r.out, r.names, "CSV");
  if (!(r.noise >= 0 && r.noise < 1)) {
    throw InvalidInput(setting_with_value(r.names, "noise", fmt::format("{:g}", r.noise)) +
                       ": expected a relative noise in [0, 1)");
  }
  const device::DeviceCatalog catalog = load_catalog(r.devices_file);
  const device::DeviceSpec& d = catalog.find(r.device, setting_name(r.names, "device"));
  std::vector<archline::ArchlinePoint> points;
  RunContext context = RunContext::now(r.command_line);
  context.add("kind", "archline benchmark points (synthetic)")
      .add("catalog_device", d.id)
      .add("noise_relative", r.noise)
      .add("seed", r.seed);
  for (Precision p : vector_precisions(r.precisions, {Precision::kFp32}, r.names)) {
    archline::SyntheticOptions s;
    s.truth = ArchlineModel::from_device(d, p);
    s.precision = p;
    s.noise = r.noise;
    s.seed = r.seed + static_cast<std::uint64_t>(p);
    s.off_clock_fraction = r.off_clock_fraction;
    context.add(
        "truth_" + std::string(device::to_string(p)),
        fmt::format("eps_flop {:.4g} pJ/flop, eps_mem {:.4g} pJ/B, pi0 {:g} W",
                    units::joules_to_picojoules(s.truth.eps_flop_j),
                    units::joules_to_picojoules(s.truth.eps_mem_j_per_byte), s.truth.pi0_w));
    const std::vector<archline::ArchlinePoint> generated = archline::generate_synthetic_points(s);
    points.insert(points.end(), generated.begin(), generated.end());
  }
  write_file_atomically(r.out, archline::to_csv(points, context), setting_name(r.names, "out"));
  return {r.out, points.size(), "synthetic points of " + d.id};
}

report::ArchlineFileReport archline_run(const ArchlineRunRequest& r) {
  require_out(r.out, r.names, "CSV");
  if (!(r.batch_time_s >= 1)) {
    throw InvalidInput(
        setting_with_value(r.names, "batch_time_s", fmt::format("{:g}", r.batch_time_s)) +
        ": expected at least 1 s (NVML averages power over ~1 s)");
  }
  const std::optional<int> gpu = measure::parse_cuda_ordinal(r.gpu);
  if (!gpu) {
    throw InvalidInput(setting_with_value(r.names, "gpu", r.gpu) +
                       ": expected cuda:N or N, a CUDA device ordinal");
  }
  if (r.catalog_device && measure::parse_cuda_ordinal(*r.catalog_device)) {
    throw InvalidInput(
        fmt::format("{}: expected a catalog id (see `nnergy devices`); the CUDA device to measure "
                    "is {}",
                    setting_with_value(r.names, "catalog_device", *r.catalog_device),
                    setting_with_value(r.names, "gpu", *r.catalog_device)));
  }
  archline::BenchmarkRunOptions options;
  options.gpu_index = *gpu;
  options.precisions = vector_precisions(r.precisions, {Precision::kFp32}, r.names);
  options.batch_time_s = r.batch_time_s;
  options.progress = r.progress;
  const archline::BenchmarkRun run = archline::run_benchmarks(options);
  RunContext context = RunContext::now(r.command_line);
  context.add("kind", "archline benchmark points (measured)");
  if (r.catalog_device) context.add("catalog_device", *r.catalog_device);
  for (const auto& [key, value] : run.context) context.add(key, value);
  write_file_atomically(r.out, archline::to_csv(run.points, context), setting_name(r.names, "out"));
  return {r.out, run.points.size(), "measured points"};
}

report::ArchlineFitReport archline_fit(const ArchlineFitRequest& r) {
  report::ArchlineFitReport report = fit_file(r);
  if (!r.save_device) return report;
  std::vector<archline::FittedParameters> params;
  for (const auto& f : report.fits) {
    const archline::ArchlineFitResult& fit = f.result;
    params.push_back(
        {fit.precision, fit.energy.eps_flop_j.value, fit.energy.eps_mem_j_per_byte.value,
         fit.energy.pi0_w.value,
         fmt::format("nnergy archline fit of {} ({} {} points, R² {:.4f}), {}",
                     r.file.filename().string(), fit.points_admitted, report.data.points_origin(),
                     fit.energy.r_squared, report.context.date_utc)});
  }
  std::optional<std::string> base = r.base_device;
  if (!base) base = report.data.context_value("catalog_device");
  report.user_catalog = device::DeviceCatalog::user_catalog_path();
  archline::save_fitted_device(report.user_catalog, *r.save_device, params,
                               data_directory() / "devices.json", base);
  report.saved_device = r.save_device;
  return report;
}

report::ArchlineFileReport archline_plot(const ArchlineFitRequest& r,
                                         const std::filesystem::path& out,
                                         const std::filesystem::path& html) {
  require_out(out, r.names, "SVG");
  const report::ArchlineFitReport f = fit_file(r);
  const std::string name = f.data.context_value("catalog_device").value_or(r.file.stem().string());
  std::vector<archline::ArchlinePlotRow> rows;
  for (const auto& fit : f.fits) {
    archline::ArchlinePlotRow row;
    row.precision = fit.result.precision;
    row.model = fit.result.model(fit.peaks.flop_per_s, fit.peaks.byte_per_s);
    row.points = f.data.points;
    row.label = fmt::format("{} {}", name, device::to_string(row.precision));
    row.points_origin = f.data.points_origin();
    rows.push_back(std::move(row));
  }
  const std::string svg = archline::render_archline_svg(rows, f.context.to_json().dump());
  if (html.empty()) {
    write_file_atomically(out, svg, setting_name(r.names, "out"));
  } else {
    nlohmann::ordered_json data = report::to_json(f);
    data["charts"] = nlohmann::ordered_json::array(
        {{{"title", fmt::format("{}: roofline, archline and powerline", name)}, {"svg", svg}}});
    const std::string page =
        report::render_html(report::HtmlKind::kArchline, "nnergy archline: " + name, data,
                            setting_name(r.names, "html"));
    write_files_atomically(
        {{out, svg, setting_name(r.names, "out")}, {html, page, setting_name(r.names, "html")}});
  }
  return {out, rows.size(), "precision(s) as roofline, archline and powerline"};
}

}  // namespace nnergy::api
