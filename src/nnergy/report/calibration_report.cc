#include "nnergy/report/calibration_report.h"

#include <fmt/format.h>

#include <map>

#include "nnergy/calibration/time_accuracy.h"
#include "nnergy/core/error.h"
#include "nnergy/report/text_table.h"
#include "nnergy/report/time_accuracy_report.h"

namespace nnergy::report {

namespace {

std::string percent(double fraction) { return fmt::format("{:.0f} %", 100 * fraction); }

std::string parameter_table(const device::CalibratedParameters& p) {
  TextTable t;
  t.add_column("generation", TextTable::Align::kLeft);
  for (const char* c : {"records", "η compute", "η tensor", "η memory", "±1σ time (LOGO)"})
    t.add_column(c, TextTable::Align::kRight);
  t.add_column("devices", TextTable::Align::kLeft);
  for (const auto& [name, g] : p.generations) {
    t.add_row({name, std::to_string(g.records), percent(g.compute),
               g.tensor ? percent(*g.tensor) : "-", percent(g.memory),
               percent(device::relative_spread(g.time_log_sigma)), join_with_commas(g.devices)});
  }
  return t.render();
}

std::string signed_percent(double ratio) { return fmt::format("{:+.1f} %", 100 * (ratio - 1)); }

std::string power_report(const calibration::PowerCalibration& power) {
  std::string out =
      "\nAverage power (published whole-network powers; κ: operand power while computing, "
      "as a share of the memory power π_mem):\n";
  for (const auto& [id, why] : power.failures) out += fmt::format("  not used: {}: {}\n", id, why);
  if (power.fit.records == 0) return out + "  none: κ stays 0 (the archline alone)\n";
  TextTable t;
  for (const char* c : {"record", "network", "device"}) t.add_column(c, TextTable::Align::kLeft);
  for (const char* c :
       {"batch", "measured W", "archline W", "error", "calibrated W (held out)", "error"})
    t.add_column(c, TextTable::Align::kRight);
  for (std::size_t i = 0; i < power.leave_one_network_out.size(); ++i) {
    const calibration::EvaluatedPower& e = power.leave_one_network_out[i];
    const network::NetworkTimeMeasurement& m = e.measurement.run;
    t.add_row({m.id, m.network, m.device_id, std::to_string(m.bindings.batch.value_or(0)),
               fmt::format("{:.0f}", e.measurement.measured_w), fmt::format("{:.0f}", e.archline_w),
               signed_percent(e.archline_w / e.measurement.measured_w),
               fmt::format("{:.0f}", e.predicted_w), signed_percent(e.ratio())});
  }
  out += t.render();
  using calibration::EvaluatedPower;
  out += fmt::format(
      "κ = {:.3f} fitted on {} average powers of {}; leave-one-network-out MAPE {:.1f} % (archline "
      "alone {:.1f} %, in-sample {:.1f} %), ±{:.0f} % (1σ)\n",
      power.fit.operand_share, power.fit.records, join_with_commas(power.fit.devices),
      calibration::power_mape_percent(power.leave_one_network_out, &EvaluatedPower::predicted_w),
      calibration::power_mape_percent(power.leave_one_network_out, &EvaluatedPower::archline_w),
      calibration::power_mape_percent(power.in_sample, &EvaluatedPower::predicted_w),
      100 * device::relative_spread(power.fit.power_log_sigma));
  for (const auto& [precision, ratio] : power.fit.tensor_flop_power) {
    out += fmt::format(
        "{} matrix units: {:.2f}x the fp32 units' flop power at their peak (fitted with κ on the "
        "{} runs of other networks held out)\n",
        precision, ratio, precision);
  }
  return out;
}

nlohmann::ordered_json power_json(const calibration::PowerCalibration& power) {
  nlohmann::ordered_json j;
  j["operand_share"] = power.fit.operand_share;
  j["tensor_flop_power"] = power.fit.tensor_flop_power;
  j["records"] = power.fit.records;
  using calibration::EvaluatedPower;
  const bool fitted = power.fit.records > 0;
  j["leave_one_network_out_mape_percent"] =
      fitted ? nlohmann::ordered_json(calibration::power_mape_percent(power.leave_one_network_out,
                                                                      &EvaluatedPower::predicted_w))
             : nlohmann::ordered_json(nullptr);
  j["in_sample_mape_percent"] = fitted ? nlohmann::ordered_json(calibration::power_mape_percent(
                                             power.in_sample, &EvaluatedPower::predicted_w))
                                       : nlohmann::ordered_json(nullptr);
  j["failures"] = nlohmann::ordered_json::array();
  for (const auto& [id, why] : power.failures)
    j["failures"].push_back({{"id", id}, {"reason", why}});
  j["measurements"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < power.leave_one_network_out.size(); ++i) {
    const calibration::EvaluatedPower& e = power.leave_one_network_out[i];
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

// The accuracy of the in-sample predictions over all records.
calibration::TimeAccuracy in_sample_accuracy(const CalibrationReport& r) {
  return calibration::time_accuracy(
             r.calibration.in_sample,
             [](const network::EvaluatedTime&) { return std::string("all"); })
      .back();
}

}  // namespace

std::string render_text(const CalibrationReport& r) {
  const auto by = calibration::time_accuracy;
  const calibration::TimeAccuracy in_sample = in_sample_accuracy(r);
  std::string out = fmt::format(
      "nnergy calibrate: the analytical time model fitted on {} published whole-network and "
      "per-operator times of {} (grades {})\n",
      r.calibration.fit.fitted_records, r.published, join_with_commas(r.grades));
  out += fmt::format(
      "  {} records read, {} times, {} could not be predicted, {} records not used as times "
      "(see `nnergy evaluate --published`)\n",
      r.records_read, r.times, r.failures.size(), r.skipped);
  for (const auto& [m, why] : r.failures) out += fmt::format("  not used: {}: {}\n", m.id, why);
  for (const std::string& note : r.calibration.fit.notes) out += "  note: " + note + "\n";
  for (const auto& [id, why] : r.assumed_batches) out += fmt::format("  {}: {}\n", id, why);
  out +=
      "\nFitted per architecture generation (η: fraction of the datasheet peak large kernels "
      "reach; ±1σ: leave-one-GPU-out spread of whole-network times):\n";
  out += parameter_table(r.parameters);
  out += fmt::format(
      "All generations: {:.2f} µs GPU time per kernel launch; a matrix kernel reaches half its "
      "efficiency at {:.3g} MFLOP per SM (size) and at {:.3g} multiply-accumulates per output "
      "(grouped and depthwise convolutions)\n"
      "  dense 3×3 stride-1 convolutions run {:.2f}× faster on CUDA cores (Winograd); grouped "
      "convolutions reach {:.2f}× a dense one's rate; gradient passes of matrix operators {:.2f}× "
      "their forward's; normalizations computing statistics reach {:.2f}× the bandwidth "
      "streaming kernels reach; convolutions on matrix units take {:.2f}× the kernel model's time "
      "of their implicit GEMM\n",
      r.parameters.kernel_overhead_s * 1e6, r.parameters.work_half_flop_per_sm * 1e-6,
      r.parameters.reduction_half, r.parameters.winograd_speedup,
      r.parameters.grouped_conv_efficiency, r.parameters.backward_matrix_efficiency,
      r.parameters.statistics_memory_efficiency, r.parameters.convolution_time_scale);
  out += "Host (CPU) time per kernel launch, per host machine:";
  for (const auto& [host, s] : r.parameters.host_launch_by_host)
    out += fmt::format(" {} {:.1f} µs;", host, s * 1e6);
  out += fmt::format(
      "\n  eager PyTorch's training iterations take {:.2f}× inference's per kernel (autograd); "
      "`predict` uses {:.1f} µs in inference and {:.1f} µs in training ({}) unless given "
      "--host-launch-us\n",
      r.parameters.host_launch_training_factor, r.parameters.host_launch_for(false) * 1e6,
      r.parameters.host_launch_for(true) * 1e6, r.parameters.host_launch_source);
  if (r.parameters.input_copy_bytes_per_s) {
    out += fmt::format(
        "Pageable host-to-device copy of the inputs, where a source's timings include it: "
        "{:.1f} GB/s\n",
        *r.parameters.input_copy_bytes_per_s * 1e-9);
  }
  out += fmt::format(
      "GPUs of generations without measurements are transferred from the nearest generation "
      "(±1σ {:.0f} %: leave-one-GPU-out of GPUs alone in their generation)\n",
      100 * device::relative_spread(r.parameters.transferred_time_log_sigma));

  out += fmt::format(
      "\nAccuracy on the fitted times (in-sample: MAPE {:.1f} %, median pred/meas {:.2f}; "
      "rms log error {:.3f} after {} iterations)\n",
      in_sample.metrics.mape_percent, in_sample.median_ratio, r.calibration.fit.rms_log_error,
      r.calibration.fit.iterations);
  out += "\nLeave-one-GPU-out (each GPU predicted by a fit without it):\n";
  for (const char* name : {"device", "precision", "mode", "source"})
    out += accuracy_table(name, by(r.calibration.leave_one_gpu_out, time_grouping(name))) + "\n";
  out += "Leave-one-source-out (each source predicted by a fit without it):\n";
  out += accuracy_table("source", by(r.calibration.leave_one_source_out, time_grouping("source")));
  out += power_report(r.power);
  out += r.output.empty() ? "\nnot written (--dry-run)\n"
                          : fmt::format("\nwrote {} (used by predict, evaluate and devices)\n",
                                        r.output.string());
  out += fmt::format("calibrated in {:.1f} s\n", r.seconds);
  return out;
}

nlohmann::ordered_json to_json(const CalibrationReport& r) {
  const auto by = calibration::time_accuracy;
  const calibration::TimeAccuracy in_sample = in_sample_accuracy(r);
  nlohmann::ordered_json j;
  j["context"] = r.context.to_json();
  j["records_read"] = r.records_read;
  j["measurements"] = r.times;
  j["fitted"] = r.calibration.fit.fitted_records;
  j["failures"] = nlohmann::ordered_json::array();
  for (const auto& [m, why] : r.failures) j["failures"].push_back({{"id", m.id}, {"reason", why}});
  j["notes"] = r.calibration.fit.notes;
  j["assumed_batches"] = nlohmann::ordered_json::array();
  for (const auto& [id, why] : r.assumed_batches)
    j["assumed_batches"].push_back({{"id", id}, {"why", why}});
  j["power"] = power_json(r.power);
  j["parameters"] = nlohmann::ordered_json::parse(device::calibrated_parameters_json(r.parameters));
  j["in_sample"] = accuracy_json({in_sample});
  for (const auto& [name, key] : time_groupings()) {
    j["leave_one_gpu_out"]["by_" + name] = accuracy_json(by(r.calibration.leave_one_gpu_out, key));
    j["leave_one_source_out"]["by_" + name] =
        accuracy_json(by(r.calibration.leave_one_source_out, key));
  }
  // Per record: the in-sample and both cross-validated predictions (same measurement order).
  std::map<std::string, std::pair<double, double>> held_out;
  for (const auto& t : r.calibration.leave_one_gpu_out)
    held_out[t.measurement.id].first = t.predicted_s;
  for (const auto& t : r.calibration.leave_one_source_out)
    held_out[t.measurement.id].second = t.predicted_s;
  j["records"] = nlohmann::ordered_json::array();
  for (const network::EvaluatedTime& t : r.calibration.in_sample) {
    const network::NetworkTimeMeasurement& m = t.measurement;
    j["records"].push_back({{"id", m.id},
                            {"network", m.network},
                            {"device", m.device_id},
                            {"source", calibration::source_key(m.source)},
                            {"precision", device::to_string(m.precision)},
                            {"mode", graph::to_string(m.mode)},
                            {"part", network::to_string(m.part)},
                            {"batch", m.bindings.batch.value_or(0)},
                            {"measured_s", m.measured_s},
                            {"in_sample_s", t.predicted_s},
                            {"leave_one_gpu_out_s", held_out[m.id].first},
                            {"leave_one_source_out_s", held_out[m.id].second}});
  }
  j["seconds"] = r.seconds;
  return j;
}

}  // namespace nnergy::report
