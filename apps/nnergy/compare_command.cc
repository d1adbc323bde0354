// `nnergy compare`: one network on several devices, ranked by time, energy, EDP and power.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/compare.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"
#include "nnergy/core/text.h"
#include "nnergy/device/precision.h"
#include "nnergy/report/comparison_report.h"
#include "nnergy/report/html_report.h"

namespace nnergy::cli {

namespace {

struct CompareOptions {
  std::string model;
  std::string devices;  ///< comma-separated; empty: every GPU
  std::optional<std::int64_t> batch;
  std::string batches;  ///< comma-separated
  std::vector<std::string> dims;
  std::string devices_file;
  std::string mode = "inference";
  std::optional<std::string> precision;  ///< default: the file's tensor type
  std::optional<double> host_launch_us;
  std::optional<std::string> optimizer;
  bool json = false;
  bool csv = false;
  std::string output;  ///< also write the JSON document here
  std::string html;
};

std::vector<std::int64_t> parse_batches(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split_trimmed(text, ',')) {
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || value <= 0) {
      throw InvalidInput(fmt::format(
          "--batches {}: '{}' is not a positive integer; expected e.g. --batches 1,8,32,128", text,
          item));
    }
    out.push_back(value);
  }
  if (out.empty()) throw InvalidInput("--batches: expected e.g. --batches 1,8,32,128");
  return out;
}

std::string run_compare(const CompareOptions& o, const std::string& command_line) {
  if (o.json && o.csv) throw InvalidInput("--json and --csv: choose one output format");
  if (o.batch && !o.batches.empty()) throw InvalidInput("--batch and --batches: choose one");
  api::CompareRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.model = o.model;
  if (!o.devices.empty()) {
    r.devices = split_trimmed(o.devices, ',');
    for (const std::string& d : r.devices) {
      if (d.empty()) {
        throw InvalidInput(
            "--devices " + o.devices +
            ": an empty name; expected comma-separated ids, e.g. a100-40gb,h100-sxm");
      }
    }
  }
  if (o.batch) r.batches = {*o.batch};
  if (!o.batches.empty()) r.batches = parse_batches(o.batches);
  r.dims = parse_dim_bindings(o.dims);
  r.devices_file = o.devices_file;
  r.mode = graph::parse_mode(o.mode, "--mode");
  if (o.precision) r.precision = device::parse_precision(*o.precision, "--precision");
  r.host_launch_us = o.host_launch_us;
  if (o.optimizer) r.optimizer = graph::parse_optimizer(*o.optimizer, "--optimizer");
  const report::ComparisonReport report = api::compare(r);
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kCompare,
      fmt::format("nnergy compare: {} on {} devices", report.network, report.devices.size()),
      [&] { return report::to_json(report); });
  if (o.json) return core::json_text(report::to_json(report));
  if (o.csv) return report::render_csv(report);
  return report::render_text(report);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Which GPU, which clock: predict a network on several devices and rank them by time, "
      "energy, EDP and power per sample, at the boost clock and at each device's "
      "energy-optimal clock");
  cmd->add_option("model", options->model, "zoo name (see `nnergy zoo`) or path to an .onnx file")
      ->required();
  cmd->add_option("--devices", options->devices,
                  "comma-separated device ids or aliases (see `nnergy devices`); default: every "
                  "GPU of the catalog");
  cmd->add_option("--batch", options->batch,
                  "samples per iteration; default: the file's fixed batch, else 1");
  cmd->add_option("--batches", options->batches,
                  "a batch sweep, comma-separated (e.g. 1,8,32,128): where each device stops "
                  "being host-bound and where the batch no longer fits");
  cmd->add_option("--dim", options->dims,
                  "bind another symbolic dimension: NAME=VALUE (repeatable)");
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_option("--mode", options->mode, "inference or training")->capture_default_str();
  cmd->add_option("--precision", options->precision,
                  "fp32, tf32, fp16, bf16 or fp64; default: the type the file stores its "
                  "tensors in, else fp32");
  cmd->add_option("--host-launch-us", options->host_launch_us,
                  "host CPU time to launch one kernel in inference, us; training takes the "
                  "calibrated multiple of it (default: the calibrated eager PyTorch value; 0: the "
                  "host is never the bottleneck)");
  cmd->add_option("--optimizer", options->optimizer,
                  "training: sgd, sgd-momentum (default), adam or adamw");
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_option("-o,--output", options->output,
                  "also write the JSON document (as --json prints it) to FILE");
  cmd->add_flag("--csv", options->csv, "write CSV (one row per device, batch and clock)");
  cmd->add_option("--html", options->html,
                  "also write a self-contained HTML report (ranking table, energy vs time "
                  "scatter with the Pareto front, batch sweep) to this file");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_compare(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
