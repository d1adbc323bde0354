#include "nnergy/api/calibrate.h"

#include <chrono>

#include "nnergy/calibration/published_times.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/dataset/published_measurement.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::api {

report::CalibrationReport calibrate(const CalibrateRequest& r) {
  const auto start = std::chrono::steady_clock::now();
  calibration::check_grades(r.grades, r.names);
  const std::filesystem::path data_dir = data_directory();
  const std::filesystem::path published =
      r.published.empty() ? data_dir / "calibration" / "measured_public.json" : r.published;
  const std::filesystem::path output =
      r.output.empty() ? device::DeviceCatalog::calibrated_parameters_path(data_dir) : r.output;
  // The datasheet catalog: calibration starts from the peaks, never from an earlier fit.
  const device::DeviceCatalog catalog = device::DeviceCatalog::load(data_dir / "devices.json");
  const dataset::PublishedReadResult read =
      dataset::read_published_measurements(published.string());
  const calibration::PublishedTimes times =
      calibration::published_times(read.records, data_dir, r.grades);
  const network::PreparedTimes prepared = network::prepare_times(times.measurements, catalog);
  // The corpus as the parameters file names it: relative to the data directory when inside it,
  // so that the file reads the same on every machine.
  std::string corpus = published.lexically_normal().string();
  const std::filesystem::path relative = published.lexically_normal().lexically_relative(data_dir);
  if (!relative.empty() && *relative.begin() != "..") corpus = "data/" + relative.string();

  const calibration::PublishedBandwidths bandwidths =
      calibration::published_bandwidths(read.records, data_dir);

  report::CalibrationReport report;
  report.calibration =
      calibration::calibrate(prepared, catalog, corpus, r.fit, r.threads, bandwidths.anchors);
  for (const auto& [id, why] : bandwidths.skipped)
    report.calibration.fit.notes.push_back(id + ": copy-kernel bandwidth not used: " + why);
  device::CalibratedParameters p = report.calibration.fit.parameters;
  // Power on top of the calibrated times.
  const calibration::PublishedPowers powers =
      calibration::published_powers(read.records, data_dir, r.grades);
  device::DeviceCatalog time_calibrated = catalog;
  time_calibrated.calibrate(p, corpus);
  report.power = calibration::calibrate_power(powers.measurements, time_calibrated,
                                              network::host_settings(std::nullopt, &p));
  if (report.power.fit.records > 0) p.power = report.power.fit;
  // Records used with a batch their source ran but did not state, times and powers alike.
  report.assumed_batches = times.assumptions;
  report.assumed_batches.insert(report.assumed_batches.end(), powers.assumptions.begin(),
                                powers.assumptions.end());
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  report.context = RunContext::now(r.command_line);
  report.context.add("published", published.string())
      .add("grades", r.grades)
      .add("output", r.dry_run ? "" : output.string());
  if (!r.dry_run) {
    write_file_atomically(output, device::calibrated_parameters_json(p),
                          setting_name(r.names, "output"));
    report.output = output;
  }
  report.published = published;
  report.grades = r.grades;
  report.records_read = read.records_read;
  report.times = times.measurements.size();
  report.skipped = times.skipped.size();
  report.failures = prepared.failures;
  report.parameters = std::move(p);
  return report;
}

}  // namespace nnergy::api
