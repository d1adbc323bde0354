#include "nnergy/api/calibrate.h"

#include <chrono>
#include <iterator>
#include <vector>

#include "nnergy/calibration/published_times.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/published/published_measurement.h"

namespace nnergy::api {

report::CalibrationReport calibrate(const CalibrateRequest& r) {
  const auto start = std::chrono::steady_clock::now();
  calibration::check_grades(r.grades, r.names);
  const std::filesystem::path data_dir = data_directory();
  // By default everything measured that nnergy has: the published corpus and its own campaigns.
  const std::vector<std::filesystem::path> sources =
      r.published.empty()
          ? std::vector<std::filesystem::path>{data_dir / "calibration" / "measured_public.json",
                                               data_dir / "measured" / "h100" / "networks.json"}
          : std::vector<std::filesystem::path>{r.published};
  const std::filesystem::path output =
      r.output.empty() ? device::DeviceCatalog::calibrated_parameters_path(data_dir) : r.output;
  // The datasheet catalog: calibration starts from the peaks, never from an earlier fit.
  const device::DeviceCatalog catalog = device::DeviceCatalog::load(data_dir / "devices.json");
  published::PublishedReadResult read;
  // The corpus as the parameters file names it: relative to the data directory when inside it,
  // so that the file reads the same on every machine.
  std::string corpus;
  for (const std::filesystem::path& source : sources) {
    published::PublishedReadResult part = published::read_published_measurements(source.string());
    read.records_read += part.records_read;
    read.records.insert(read.records.end(), std::make_move_iterator(part.records.begin()),
                        std::make_move_iterator(part.records.end()));
    read.rejected.insert(read.rejected.end(), std::make_move_iterator(part.rejected.begin()),
                         std::make_move_iterator(part.rejected.end()));
    std::string name = source.lexically_normal().string();
    const std::filesystem::path relative = source.lexically_normal().lexically_relative(data_dir);
    if (!relative.empty() && *relative.begin() != "..") name = "data/" + relative.string();
    corpus += (corpus.empty() ? std::string() : std::string(device::kCorpusSeparator)) + name;
  }
  const calibration::PublishedTimes times =
      calibration::published_times(read.records, data_dir, r.grades);
  const network::PreparedTimes prepared = network::prepare_times(times.measurements, catalog);

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
  report.context.add("published", corpus)
      .add("grades", r.grades)
      .add("output", r.dry_run ? "" : output.string());
  if (!r.dry_run) {
    write_file_atomically(output, device::calibrated_parameters_json(p),
                          setting_name(r.names, "output"));
    report.output = output;
  }
  report.published = corpus;
  report.grades = r.grades;
  report.records_read = read.records_read;
  report.times = times.measurements.size();
  report.skipped = times.skipped.size();
  report.failures = prepared.failures;
  report.parameters = std::move(p);
  return report;
}

}  // namespace nnergy::api
