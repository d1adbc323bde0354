// `nnergy predict`: per-layer and network time, power and energy of a model on a device.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/predict.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"
#include "nnergy/device/precision.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/report/html_report.h"
#include "nnergy/report/prediction_report.h"

namespace nnergy::cli {

namespace {

struct PredictOptions {
  std::string model;
  std::optional<std::string> device;
  std::string predictor = "analytical";
  std::string devices_file;
  std::string mode = "inference";
  std::optional<std::int64_t> batch;
  std::vector<std::string> dims;
  std::optional<double> clock_mhz;
  std::optional<double> power_limit_w;
  std::optional<double> host_launch_us;  ///< default: the host profile's
  std::optional<std::string> host;
  std::string runtime = "eager";
  bool strict_fp32 = false;
  bool sweep = false;
  std::optional<double> sweep_step_mhz;
  std::optional<std::string> precision;  ///< default: the file's tensor type
  std::optional<std::string> optimizer;
  std::string whitelist;
  std::size_t top = 25;
  std::string order = "energy";
  std::optional<double> error;
  std::optional<double> alpha;
  bool json = false;
  bool csv = false;
  bool ignore_memory = false;
  std::string output;  ///< also write the JSON document here
  std::string html;    ///< also write a self-contained HTML report here
};

api::PredictRequest to_request(const PredictOptions& o, const std::string& command_line) {
  api::PredictRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.model = o.model;
  r.device = o.device;
  if (o.predictor != "analytical") r.predictor_file = o.predictor;
  r.devices_file = o.devices_file;
  r.mode = graph::parse_mode(o.mode, "--mode");
  r.batch = o.batch;
  r.dims = parse_dim_bindings(o.dims);
  if (o.precision) r.precision = device::parse_precision(*o.precision, "--precision");
  r.clock_mhz = o.clock_mhz;
  r.power_limit_w = o.power_limit_w;
  r.host_launch_us = o.host_launch_us;
  r.host = o.host;
  r.runtime = network::parse_runtime(o.runtime, "--runtime");
  r.strict_fp32 = o.strict_fp32;
  r.sweep_clocks = o.sweep;
  r.sweep_step_mhz = o.sweep_step_mhz;
  if (o.optimizer) r.optimizer = graph::parse_optimizer(*o.optimizer, "--optimizer");
  if (!o.whitelist.empty()) r.whitelist = graph::Whitelist::parse(o.whitelist, "--whitelist");
  r.error = o.error;
  r.alpha = o.alpha;
  r.ignore_memory = o.ignore_memory;
  return r;
}

std::string run_predict(const PredictOptions& o, const std::string& command_line) {
  if (o.json && o.csv) throw InvalidInput("--json and --csv: choose one output format");
  api::PredictRequest request = to_request(o, command_line);
  // Only a model file names a regressor; the analytical default needs no registry.
  const regress::RegressorRegistry regressors =
      request.predictor_file.empty() ? regress::RegressorRegistry() : available_regressors();
  request.regressors = &regressors;
  const report::PredictionReport report = api::predict(request);
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kPredict,
      fmt::format("nnergy predict: {} on {}", report.network->name, report.device->id),
      [&] { return report::to_json(report); });
  if (o.json) return core::json_text(report::to_json(report));
  if (o.csv) return report::render_csv(report);
  return report::render_text(report, {o.top, o.order == "energy"});
}

}  // namespace

void add_predict_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict per-layer and total time, power and energy of a network on a GPU from its "
      "architecture (analytical roofline + archline model, or a learned model file)");
  cmd->add_option("model", options->model, "zoo name (see `nnergy zoo`) or path to an .onnx file")
      ->required();
  cmd->add_option("--device", options->device,
                  fmt::format("device id or alias (see `nnergy devices`); default: the model "
                              "file's device with --predictor FILE, else {}",
                              api::kDefaultPredictDevice));
  cmd->add_option("--predictor", options->predictor,
                  "analytical, or a model file written by `nnergy train` (.nnp)")
      ->capture_default_str();
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_option("--mode", options->mode, "inference or training")->capture_default_str();
  cmd->add_option("--host", options->host,
                  "calibrated host profile whose kernel launch time to use (default: the "
                  "calibration's; an unknown name lists them)");
  cmd->add_flag("--strict-fp32", options->strict_fp32,
                "fp32: TF32 off in cuDNN too (default: convolutions in TF32 on GPUs that have it, "
                "as PyTorch runs them)");
  cmd->add_option("--runtime", options->runtime,
                  "eager (PyTorch launching each kernel), cuda-graphs (no per-kernel launch) or "
                  "compiled (torch.compile: pointwise chains fused)")
      ->capture_default_str();
  cmd->add_option("--host-launch-us", options->host_launch_us,
                  "host CPU time per kernel launch of eager inference, us (training: the "
                  "calibrated multiple; 0: never host-bound); default: the calibrated value");
  cmd->add_option("--batch", options->batch,
                  "samples per iteration (binds the batch dimension; re-binds a batch fixed in "
                  "the file); default: the file's fixed batch, else 1");
  cmd->add_option("--dim", options->dims,
                  "bind another symbolic dimension: NAME=VALUE (repeatable)");
  cmd->add_option("--clock-mhz", options->clock_mhz, "core clock in MHz (default: boost clock)");
  cmd->add_option("--power-limit-w", options->power_limit_w,
                  "predict under a lowered board power limit, W (as set with nvidia-smi -pl): "
                  "the clock is the highest at which the predicted average power stays within it");
  cmd->add_flag("--sweep-clocks", options->sweep,
                "predict over the device's clocks and name the energy- and EDP-optimal ones");
  cmd->add_option("--sweep-step-mhz", options->sweep_step_mhz,
                  "clock step of the sweep in MHz (default: the device's, at most ~100 points)");
  cmd->add_option(
      "--precision", options->precision,
      "fp32, tf32, fp16, bf16, fp64, fp8 or int8; default: the type the file stores its "
      "tensors in (fp16 for an fp16 export), else fp32");
  cmd->add_option("--optimizer", options->optimizer,
                  "training: sgd, sgd-momentum (default), adam or adamw");
  cmd->add_option("--whitelist", options->whitelist,
                  "comma-separated compute-relevant ONNX op types (default: the standard list); "
                  "others are flagged, still predicted");
  cmd->add_option("--top", options->top, "layers listed in the text table (0: all)")
      ->capture_default_str();
  cmd->add_option("--order", options->order, "text table order: energy or network")
      ->check(CLI::IsMember({"energy", "network"}))
      ->capture_default_str();
  cmd->add_option(
      "--error", options->error,
      "classification error (fraction) for the energy-precision ratio M = error^alpha * EPI");
  cmd->add_option("--alpha", options->alpha, "exponent alpha of the energy-precision ratio");
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_option("-o,--output", options->output,
                  "also write the JSON document (as --json prints it) to FILE");
  cmd->add_flag("--csv", options->csv, "write CSV (per layer, or per clock with --sweep-clocks)");
  cmd->add_option("--html", options->html,
                  "also write a self-contained HTML report (charts of the same) to this file");
  cmd->add_flag("--ignore-memory", options->ignore_memory,
                "predict even when the estimated peak device memory exceeds the device's");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_predict(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
