// `nnergy calibrate`: fits the analytical time model to published whole-network times and
// writes the parameters every prediction then uses (data/calibration/calibrated.json).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/dataset/published_measurement.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/learn/power_calibration.h"
#include "nnergy/learn/published_times.h"
#include "nnergy/learn/time_calibration.h"
#include "nnergy/report/text_table.h"
#include "time_accuracy_report.h"

namespace nnergy::cli {

namespace {

struct CalibrateOptions {
  std::string published;
  std::vector<std::string> grades = {"A", "B"};
  std::string output;  ///< default: the data directory's calibration/calibrated.json
  bool dry_run = false;
  bool json = false;
  unsigned threads = 0;
  learn::CalibrationOptions fit;
};

std::string percent(double fraction) { return fmt::format("{:.0f} %", 100 * fraction); }

std::string parameter_table(const device::CalibratedParameters& p) {
  report::TextTable t;
  t.add_column("generation", report::TextTable::Align::kLeft);
  for (const char* c : {"records", "η compute", "η tensor", "η memory", "±1σ time (LOGO)"})
    t.add_column(c, report::TextTable::Align::kRight);
  t.add_column("devices", report::TextTable::Align::kLeft);
  for (const auto& [name, g] : p.generations) {
    t.add_row({name, std::to_string(g.records), percent(g.compute),
               g.tensor ? percent(*g.tensor) : "-", percent(g.memory),
               percent(device::relative_spread(g.time_log_sigma)), join_with_commas(g.devices)});
  }
  return t.render();
}

std::string signed_percent(double ratio) { return fmt::format("{:+.1f} %", 100 * (ratio - 1)); }

std::string power_report(const learn::PowerCalibration& power) {
  std::string out =
      "\nAverage power (published whole-network powers; κ: operand power while computing, "
      "as a share of the memory power π_mem):\n";
  for (const auto& [id, why] : power.failures) out += fmt::format("  not used: {}: {}\n", id, why);
  if (power.fit.records == 0) return out + "  none: κ stays 0 (the archline alone)\n";
  report::TextTable t;
  for (const char* c : {"record", "network", "device"})
    t.add_column(c, report::TextTable::Align::kLeft);
  for (const char* c :
       {"batch", "measured W", "archline W", "error", "calibrated W (held out)", "error"})
    t.add_column(c, report::TextTable::Align::kRight);
  for (std::size_t i = 0; i < power.leave_one_network_out.size(); ++i) {
    const learn::EvaluatedPower& e = power.leave_one_network_out[i];
    const network::NetworkTimeMeasurement& m = e.measurement.run;
    t.add_row({m.id, m.network, m.device_id, std::to_string(m.bindings.batch.value_or(0)),
               fmt::format("{:.0f}", e.measurement.measured_w), fmt::format("{:.0f}", e.archline_w),
               signed_percent(e.archline_w / e.measurement.measured_w),
               fmt::format("{:.0f}", e.predicted_w), signed_percent(e.ratio())});
  }
  out += t.render();
  using learn::EvaluatedPower;
  out += fmt::format(
      "κ = {:.3f} fitted on {} average powers of {}; leave-one-network-out MAPE {:.1f} % (archline "
      "alone {:.1f} %, in-sample {:.1f} %), ±{:.0f} % (1σ)\n",
      power.fit.operand_share, power.fit.records, join_with_commas(power.fit.devices),
      learn::power_mape_percent(power.leave_one_network_out, &EvaluatedPower::predicted_w),
      learn::power_mape_percent(power.leave_one_network_out, &EvaluatedPower::archline_w),
      learn::power_mape_percent(power.in_sample, &EvaluatedPower::predicted_w),
      100 * device::relative_spread(power.fit.power_log_sigma));
  return out;
}

nlohmann::ordered_json power_json(const learn::PowerCalibration& power) {
  nlohmann::ordered_json j;
  j["operand_share"] = power.fit.operand_share;
  j["records"] = power.fit.records;
  using learn::EvaluatedPower;
  const bool fitted = power.fit.records > 0;
  j["leave_one_network_out_mape_percent"] =
      fitted ? nlohmann::ordered_json(learn::power_mape_percent(power.leave_one_network_out,
                                                                &EvaluatedPower::predicted_w))
             : nlohmann::ordered_json(nullptr);
  j["in_sample_mape_percent"] = fitted ? nlohmann::ordered_json(learn::power_mape_percent(
                                             power.in_sample, &EvaluatedPower::predicted_w))
                                       : nlohmann::ordered_json(nullptr);
  j["failures"] = nlohmann::ordered_json::array();
  for (const auto& [id, why] : power.failures)
    j["failures"].push_back({{"id", id}, {"reason", why}});
  j["measurements"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < power.leave_one_network_out.size(); ++i) {
    const learn::EvaluatedPower& e = power.leave_one_network_out[i];
    j["measurements"].push_back({{"id", e.measurement.run.id},
                                 {"network", e.measurement.run.network},
                                 {"device", e.measurement.run.device_id},
                                 {"batch", e.measurement.run.bindings.batch.value_or(0)},
                                 {"measured_w", e.measurement.measured_w},
                                 {"predicted_time_s", e.predicted_time_s},
                                 {"archline_w", e.archline_w},
                                 {"in_sample_w", power.in_sample[i].predicted_w},
                                 {"leave_one_network_out_w", e.predicted_w}});
  }
  return j;
}

CommandResult run_calibrate(const CalibrateOptions& o, const std::string& command_line) {
  const auto start = std::chrono::steady_clock::now();
  check_grades(o.grades);
  const std::filesystem::path data_dir = data_directory();
  const std::string published = o.published.empty()
                                    ? (data_dir / "calibration" / "measured_public.json").string()
                                    : o.published;
  const std::filesystem::path output =
      o.output.empty() ? device::DeviceCatalog::calibrated_parameters_path(data_dir)
                       : std::filesystem::path(o.output);
  // The datasheet catalog: calibration starts from the peaks, never from an earlier fit.
  const device::DeviceCatalog catalog = device::DeviceCatalog::load(data_dir / "devices.json");
  const dataset::PublishedReadResult read = dataset::read_published_measurements(published);
  const learn::PublishedTimes times = learn::published_times(read.records, data_dir, o.grades);
  const network::PreparedTimes prepared = network::prepare_times(times.measurements, catalog);
  // The corpus as the parameters file names it: relative to the data directory when inside it,
  // so that the file reads the same on every machine.
  std::string corpus = std::filesystem::path(published).lexically_normal().string();
  const std::filesystem::path relative =
      std::filesystem::path(published).lexically_normal().lexically_relative(data_dir);
  if (!relative.empty() && *relative.begin() != "..") corpus = "data/" + relative.string();
  const learn::Calibration c = learn::calibrate(prepared, catalog, corpus, o.fit, o.threads);
  device::CalibratedParameters p = c.fit.parameters;
  // Power on top of the calibrated times.
  const learn::PublishedPowers powers = learn::published_powers(read.records, data_dir, o.grades);
  device::DeviceCatalog time_calibrated = catalog;
  time_calibrated.calibrate(p, corpus);
  const learn::PowerCalibration power =
      learn::calibrate_power(powers.measurements, time_calibrated, p.host_launch_s);
  if (power.fit.records > 0) p.power = power.fit;
  // Records used with a batch their source ran but did not state, times and powers alike.
  std::vector<std::pair<std::string, std::string>> assumed = times.assumptions;
  assumed.insert(assumed.end(), powers.assumptions.begin(), powers.assumptions.end());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  RunContext context = RunContext::now(command_line);
  context.add("published", published)
      .add("grades", o.grades)
      .add("output", o.dry_run ? "" : output.string());
  if (!o.dry_run) {
    write_file_atomically(output, device::calibrated_parameters_json(p), "--output");
  }
  const auto by = learn::time_accuracy;
  const learn::TimeAccuracy in_sample =
      by(c.in_sample, [](const network::EvaluatedTime&) { return std::string("all"); }).back();
  if (o.json) {
    nlohmann::ordered_json j;
    j["context"] = context.to_json();
    j["records_read"] = read.records_read;
    j["measurements"] = times.measurements.size();
    j["fitted"] = c.fit.fitted_records;
    j["failures"] = nlohmann::ordered_json::array();
    for (const auto& [m, why] : prepared.failures)
      j["failures"].push_back({{"id", m.id}, {"reason", why}});
    j["notes"] = c.fit.notes;
    j["assumed_batches"] = nlohmann::ordered_json::array();
    for (const auto& [id, why] : assumed)
      j["assumed_batches"].push_back({{"id", id}, {"why", why}});
    j["power"] = power_json(power);
    j["parameters"] = nlohmann::ordered_json::parse(device::calibrated_parameters_json(p));
    j["in_sample"] = accuracy_json({in_sample});
    for (const auto& [name, key] : time_groupings()) {
      j["leave_one_gpu_out"]["by_" + name] = accuracy_json(by(c.leave_one_gpu_out, key));
      j["leave_one_source_out"]["by_" + name] = accuracy_json(by(c.leave_one_source_out, key));
    }
    // Per record: the in-sample and both cross-validated predictions (same measurement order).
    std::map<std::string, std::pair<double, double>> held_out;
    for (const auto& t : c.leave_one_gpu_out) held_out[t.measurement.id].first = t.predicted_s;
    for (const auto& t : c.leave_one_source_out) held_out[t.measurement.id].second = t.predicted_s;
    j["records"] = nlohmann::ordered_json::array();
    for (const network::EvaluatedTime& t : c.in_sample) {
      const network::NetworkTimeMeasurement& m = t.measurement;
      j["records"].push_back({{"id", m.id},
                              {"network", m.network},
                              {"device", m.device_id},
                              {"source", learn::source_key(m.source)},
                              {"precision", device::to_string(m.precision)},
                              {"mode", predict::to_string(m.mode)},
                              {"part", network::to_string(m.part)},
                              {"batch", m.bindings.batch.value_or(0)},
                              {"measured_s", m.measured_s},
                              {"in_sample_s", t.predicted_s},
                              {"leave_one_gpu_out_s", held_out[m.id].first},
                              {"leave_one_source_out_s", held_out[m.id].second}});
    }
    j["seconds"] = seconds;
    return {j.dump(2) + "\n", 0};
  }

  std::string out = fmt::format(
      "nnergy calibrate: the analytical time model fitted on {} published whole-network and "
      "per-operator times of {} (grades {})\n",
      c.fit.fitted_records, published, join_with_commas(o.grades));
  out += fmt::format(
      "  {} records read, {} times, {} could not be predicted, {} records not used as times "
      "(see `nnergy evaluate --published`)\n",
      read.records_read, times.measurements.size(), prepared.failures.size(), times.skipped.size());
  for (const auto& [m, why] : prepared.failures)
    out += fmt::format("  not used: {}: {}\n", m.id, why);
  for (const std::string& note : c.fit.notes) out += "  note: " + note + "\n";
  for (const auto& [id, why] : assumed) out += fmt::format("  {}: {}\n", id, why);
  out +=
      "\nFitted per architecture generation (η: fraction of the datasheet peak large kernels "
      "reach; ±1σ: leave-one-GPU-out spread of whole-network times):\n";
  out += parameter_table(p);
  out += fmt::format(
      "All generations: {:.2f} µs GPU time per kernel launch; a matrix kernel reaches half its "
      "efficiency at {:.3g} MFLOP per SM (size) and at {:.3g} multiply-accumulates per output "
      "(grouped and depthwise convolutions)\n",
      p.kernel_overhead_s * 1e6, p.work_half_flop_per_sm * 1e-6, p.reduction_half);
  out += "Host (CPU) time per kernel launch, per source:";
  for (const auto& [source, s] : p.host_launch_by_source)
    out += fmt::format(" {} {:.1f} µs;", source, s * 1e6);
  out += fmt::format("\n  `predict` uses {:.1f} µs ({}) unless given --host-launch-us\n",
                     p.host_launch_s * 1e6, p.host_launch_source);
  out += fmt::format(
      "GPUs of generations without measurements are transferred from the nearest generation "
      "(±1σ {:.0f} %: leave-one-GPU-out of GPUs alone in their generation)\n",
      100 * device::relative_spread(p.transferred_time_log_sigma));

  out += fmt::format(
      "\nAccuracy on the fitted times (in-sample: MAPE {:.1f} %, median pred/meas {:.2f}; "
      "rms log error {:.3f} after {} iterations)\n",
      in_sample.metrics.mape_percent, in_sample.median_ratio, c.fit.rms_log_error,
      c.fit.iterations);
  out += "\nLeave-one-GPU-out (each GPU predicted by a fit without it):\n";
  for (const char* name : {"device", "precision", "mode", "source"})
    out += accuracy_table(name, by(c.leave_one_gpu_out, time_grouping(name))) + "\n";
  out += "Leave-one-source-out (each source predicted by a fit without it):\n";
  out += accuracy_table("source", by(c.leave_one_source_out, time_grouping("source")));
  out += power_report(power);
  out += o.dry_run
             ? "\nnot written (--dry-run)\n"
             : fmt::format("\nwrote {} (used by predict, evaluate and devices)\n", output.string());
  out += fmt::format("calibrated in {:.1f} s\n", seconds);
  return {out, 0};
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the analytical model's efficiencies, launch costs and host cost per GPU generation "
      "to published whole-network times, cross-validate (leave one GPU / one source out) and "
      "write them for predict");
  cmd->add_option("--published", options->published,
                  "published measurements (default: the data directory's "
                  "calibration/measured_public.json)");
  cmd->add_option("--grades", options->grades, "grades of the records used, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--output", options->output,
                  "where to write the parameters (default: the data directory's "
                  "calibration/calibrated.json, which predict reads)");
  cmd->add_flag("--dry-run", options->dry_run, "fit and report, write nothing");
  cmd->add_flag("--json", options->json, "JSON instead of text");
  cmd->add_option("--threads", options->threads, "threads for the cross-validation folds (0: all)")
      ->capture_default_str();
  cmd->add_option("--min-generation-records", options->fit.min_generation_records,
                  "a generation with fewer whole-network times is transferred, not fitted")
      ->capture_default_str();
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] { return run_calibrate(*options, command_line); };
  });
}

}  // namespace nnergy::cli
