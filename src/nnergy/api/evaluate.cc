#include "nnergy/api/evaluate.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "nnergy/api/regressor_choice.h"
#include "nnergy/calibration/power_calibration.h"
#include "nnergy/calibration/published_times.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/published/published_measurement.h"

namespace nnergy::api {

namespace {

// Throws InvalidInput naming `setting` unless the folder that would hold `path` exists.
void check_output(const std::filesystem::path& path, SettingNames names, std::string_view setting) {
  if (!path.empty()) learn::check_output_directory(path.string(), setting_name(names, setting));
}

// How many of `records` the calibration corpus holds (same id, every field equal); empty when
// one of the corpus files cannot be read. `corpus` is as calibrated.json names it: files joined
// by device::kCorpusSeparator, each "data/..." relative to the data directory, or a path.
std::optional<std::size_t> records_in_corpus(
    const std::vector<published::PublishedMeasurement>& records, const std::string& corpus,
    const std::filesystem::path& data_dir) {
  std::map<std::string, published::PublishedMeasurement> by_id;
  std::string_view rest = corpus;
  while (!rest.empty()) {
    const std::size_t end = rest.find(device::kCorpusSeparator);
    const std::string file(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view()
                                         : rest.substr(end + device::kCorpusSeparator.size());
    std::filesystem::path path = file;
    if (file.starts_with("data/")) path = data_dir / file.substr(5);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    published::PublishedReadResult read = published::read_published_measurements(path.string());
    for (published::PublishedMeasurement& m : read.records) by_id.emplace(m.id, std::move(m));
  }
  std::size_t n = 0;
  for (const published::PublishedMeasurement& m : records) {
    const auto it = by_id.find(m.id);
    if (it != by_id.end() && it->second == m) ++n;
  }
  return n;
}

// The devices of the predicted runs that no generation of the calibration was fitted on, with
// where their parameters come from.
std::vector<report::TransferredDevice> transferred_devices(
    const report::PublishedEvaluationReport& report, const device::DeviceCatalog& catalog) {
  std::set<std::string> fitted;
  for (const auto& [name, generation] : report.calibration->generations) {
    fitted.insert(generation.devices.begin(), generation.devices.end());
  }
  std::set<std::string> ids;
  for (const network::EvaluatedTime& t : report.evaluation.evaluated) {
    ids.insert(t.measurement.device_id);
  }
  for (const calibration::EvaluatedPower& p : report.power.powers)
    ids.insert(p.measurement.run.device_id);
  for (const calibration::EvaluatedEnergy& e : report.power.energies) {
    ids.insert(e.measurement.run.device_id);
  }
  std::vector<report::TransferredDevice> out;
  for (const std::string& id : ids) {
    if (fitted.contains(id)) continue;
    const device::DeviceSpec& d = catalog.find(id);
    out.push_back({id, d.calibration.provenance, d.calibration.relative_time_std(),
                   d.power_activity.provenance});
  }
  return out;
}

}  // namespace

report::EvaluationReport evaluate(const EvaluateRequest& r) {
  check_output(r.scatter_csv, r.names, "scatter_csv");
  check_output(r.features_csv, r.names, "features_csv");
  detail::check_threads(r.threads, r.names);
  if (r.predictors.empty()) {
    throw InvalidInput(setting_name(r.names, "predictor") + ": expected at least one name");
  }
  const detail::RegressorChoice regressors(r.regressors);
  for (const std::string& name : r.predictors) regressors.check(name, r.names);
  const learn::TrainingTable table = detail::training_table(r.db, r.device, r.devices_file);

  learn::EvaluationSettings settings;
  settings.folds = r.folds;
  settings.test_fraction = r.test_fraction;
  settings.holdout_networks = r.holdout_networks;
  settings.seed = r.seed;
  settings.threads = r.threads;
  settings.extra = r.settings;
  const learn::SplitAssignment splits = learn::assign_splits(table, settings);

  report::EvaluationReport report;
  for (std::size_t i = 0; i < r.predictors.size(); ++i) {
    // Every predictor makes the same fits: the progress of predictor i is offset by i of them.
    if (r.progress) {
      settings.progress = [&r, i, n = r.predictors.size()](std::size_t done, std::size_t total) {
        r.progress(i * total + done, n * total);
      };
    }
    report.evaluations.push_back(
        learn::evaluate_predictor(table, splits, regressors.registry(), r.predictors[i], settings));
  }

  const learn::DeviceResolution& device = table.device_resolution;
  report.context = RunContext::now(r.command_line);
  report.context
      .add("dataset", {{"path", r.db.string()}, {"digest_fnv1a_64", table.dataset_digest}})
      .add("device", device.catalog_id)
      .add("predictors", r.predictors)
      .add("folds", r.folds)
      .add("test_fraction", r.test_fraction)
      .add("holdout_networks", r.holdout_networks)
      .add("seed", r.seed);
  report.dataset = r.db;
  report.dataset_digest = table.dataset_digest;
  report.device = device;
  report.rows = table.rows.size();
  report.dropped_rows = table.dropped_rows;
  report.error_rows = table.error_rows;
  report.feature_columns = table.features.columns();
  report.ops = splits.ops;
  report.test_ops = splits.test_ops;
  report.holdout_ops = splits.holdout_ops;
  report.folds = r.folds;
  report.test_fraction = r.test_fraction;
  report.holdout_networks = r.holdout_networks;
  report.seed = r.seed;
  report.scatter = learn::scatter_rows(table, report.evaluations);
  if (!r.scatter_csv.empty()) {
    write_file_atomically(
        r.scatter_csv,
        report.context.to_csv_comments() + learn::scatter_csv(table, report.evaluations),
        setting_name(r.names, "scatter_csv"));
    report.scatter_csv = r.scatter_csv;
  }
  if (!r.features_csv.empty()) {
    write_file_atomically(r.features_csv,
                          report.context.to_csv_comments() + learn::features_csv(table, splits),
                          setting_name(r.names, "features_csv"));
    report.features_csv = r.features_csv;
  }
  return report;
}

report::PublishedEvaluationReport evaluate_published(const PublishedEvaluationRequest& r) {
  if (r.host_launch_us && !(*r.host_launch_us >= 0)) {
    throw InvalidInput(
        setting_with_value(r.names, "host_launch_us", fmt::format("{}", *r.host_launch_us)) +
        ": expected >= 0");
  }
  calibration::check_grades(r.grades, r.names);
  check_output(r.scatter_csv, r.names, "scatter_csv");
  const std::filesystem::path data_dir = data_directory();
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load_with_user(data_dir, r.devices_file);
  const published::PublishedReadResult read =
      published::read_published_measurements(r.published.string());
  const calibration::PublishedFigures figures =
      calibration::published_figures(read.records, data_dir, r.grades);

  report::PublishedEvaluationReport report;
  report.calibration = catalog.calibration();
  const network::TimeEvaluationSettings settings =
      network::host_settings(r.host_launch_us, report.calibration ? &*report.calibration : nullptr);
  report.host = settings;
  // Progress over every measurement: the times first, then the powers and energies.
  const std::size_t times = figures.times.size();
  const std::size_t total = times + figures.powers.size() + figures.energies.size();
  ProgressCallback time_progress;
  ProgressCallback power_progress;
  if (r.progress) {
    time_progress = [&r, total](std::size_t done, std::size_t) { r.progress(done, total); };
    power_progress = [&r, times, total](std::size_t done, std::size_t) {
      r.progress(times + done, total);
    };
  }
  network::NetworkCache networks;  // a run's time, power and energy records import it once
  report.evaluation =
      network::evaluate_times(figures.times, catalog, settings, time_progress, &networks);
  report.power = calibration::evaluate_powers(figures.powers, figures.energies, catalog, settings,
                                              power_progress, &networks);
  report.published = r.published;
  report.grades = r.grades;
  report.records_read = read.records_read;
  report.rejected = read.rejected.size();
  for (const published::RejectedRecord& x : read.rejected) {
    report.rejected_records.emplace_back(x.name(), x.reason);
  }
  report.records_accepted = read.records.size();
  report.measurements = times;
  report.power_measurements = figures.powers.size();
  report.energy_measurements = figures.energies.size();
  report.skipped = figures.skipped;
  if (report.calibration) {
    report.records_in_corpus =
        records_in_corpus(read.records, report.calibration->corpus, data_dir);
    report.transferred_devices = transferred_devices(report, catalog);
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("published", r.published.string())
      .add("grades", r.grades)
      .add("host_launch_s", report.host.host_launch_s)
      .add("training_host_launch_s", report.host.training_host_launch_s)
      .add("predictor", "analytical");
  if (!r.scatter_csv.empty()) {
    write_file_atomically(r.scatter_csv,
                          report.context.to_csv_comments() + report::scatter_csv(report),
                          setting_name(r.names, "scatter_csv"));
    report.scatter_csv = r.scatter_csv;
  }
  return report;
}

}  // namespace nnergy::api
