// `nnergy archline`: measure (run), fit and plot the energy roofline of a GPU
// (E = W·ε_flop + Q·ε_mem + T·π0; docs/archline.md); show and synth, which start from a catalog
// device, are in archline_device_command.cc.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/archline.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/report/archline_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

using device::Precision;

struct ArchlineOptions {
  // run
  std::string gpu = "cuda:0";
  double batch_time_s = 3;
  // run, fit, plot
  std::string precisions;
  std::string out;
  std::string html;  // plot: also an HTML report
  std::string device;
  std::string devices_file;
  // fit, plot
  std::string file;
  bool json = false;
  double confidence = 0.95;
  std::string save_device;
  std::string base_device;
};

std::vector<Precision> parse_precisions(const std::string& list) {
  return device::parse_precision_list(list, "--precision");
}

std::optional<std::string> given(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

CommandResult run_benchmarks(const ArchlineOptions& o, const std::string& command_line) {
  api::ArchlineRunRequest r;
  r.gpu = o.gpu;
  r.precisions = parse_precisions(o.precisions);
  r.batch_time_s = o.batch_time_s;
  r.catalog_device = given(o.device);
  r.out = o.out;
  r.progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  r.command_line = command_line;
  r.names = SettingNames::kFlag;
  return {report::render_text(api::archline_run(r)), 0};
}

api::ArchlineFitRequest fit_request(const ArchlineOptions& o, const std::string& command_line) {
  return {o.file,
          parse_precisions(o.precisions),
          given(o.device),
          o.devices_file,
          o.confidence,
          given(o.save_device),
          given(o.base_device),
          command_line,
          SettingNames::kFlag};
}

CommandResult run_fit(const ArchlineOptions& o, const std::string& command_line) {
  const report::ArchlineFitReport r = api::archline_fit(fit_request(o, command_line));
  return {report::render(r, report::choose_format(o.json)), 0};
}

CommandResult run_plot(const ArchlineOptions& o, const std::string& command_line) {
  return {report::render_text(api::archline_plot(fit_request(o, command_line), o.out, o.html)), 0};
}

}  // namespace

void add_archline_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<ArchlineOptions>();
  CLI::App* cmd = app.add_subcommand(
      "archline", "Energy roofline of a GPU: energy per flop, per byte and baseline power");
  cmd->require_subcommand(1);

  CLI::App* run = cmd->add_subcommand(
      "run", "Run the microbenchmarks (baseline, copy, flop, roofline) on a GPU; write a CSV");
  run->add_option("--gpu", o->gpu, "CUDA device to measure: cuda:N or N")->capture_default_str();
  run->add_option("--precision", o->precisions, "fp32, fp64 or fp32,fp64 (default fp32)");
  run->add_option("--out", o->out, "CSV file to write")->required();
  run->add_option("--batch-time-s", o->batch_time_s, "length of each batch of launches, s")
      ->capture_default_str();
  run->add_option("--device,--catalog-device", o->device,
                  "catalog id of this GPU (see `nnergy devices`), recorded so that fit and plot "
                  "use its peaks");
  run->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_benchmarks(*o, command_line); };
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
  plot->add_option("--html", o->html,
                   "also write a self-contained HTML report (the chart and the fitted "
                   "parameters) to this file");
  plot->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_plot(*o, command_line); };
  });

  add_archline_device_subcommands(*cmd, selected, command_line);
}

}  // namespace nnergy::cli
