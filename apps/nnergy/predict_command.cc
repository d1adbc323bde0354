// `nnergy predict`: per-layer and network time, power and energy of a model on a device.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/predict.h"
#include "nnergy/api/predict_settings.h"
#include "nnergy/core/error.h"
#include "nnergy/report/html_report.h"
#include "nnergy/report/output_format.h"
#include "nnergy/report/prediction_report.h"
#include "request_options.h"

namespace nnergy::cli {

namespace {

// What `nnergy predict` takes besides the request's settings (api/predict_settings.h, made into
// options by RequestOptions): the model and how to present the result.
struct PredictOptions {
  std::string model;
  std::size_t top = 25;
  std::string order = "energy";
  bool json = false;
  bool csv = false;
  std::string output;  ///< also write the JSON document here
  std::string html;    ///< also write a self-contained HTML report here
  std::unique_ptr<RequestOptions<api::PredictRequest>> settings;
};

std::string run_predict(const PredictOptions& o, const std::string& command_line) {
  const report::Format format = report::choose_format(o.json, o.csv);
  api::PredictRequest request;
  request.names = SettingNames::kFlag;
  request.command_line = command_line;
  request.model = o.model;
  o.settings->fill(request);
  // Only a model file names a regressor; the analytical default needs no registry.
  const regress::RegressorRegistry regressors =
      request.predictor_file.empty() ? regress::RegressorRegistry() : available_regressors();
  request.regressors = &regressors;
  const report::PredictionReport report = api::predict(request);
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kPredict,
      fmt::format("nnergy predict: {} on {}", report.network->name, report.device->id),
      [&] { return report::to_json(report); });
  return report::render(report, format, report::TextOptions{o.top, o.order == "energy"});
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
  options->settings =
      std::make_unique<RequestOptions<api::PredictRequest>>(cmd, api::predict_settings());
  cmd->add_option("--top", options->top, "layers listed in the text table (0: all)")
      ->capture_default_str();
  cmd->add_option("--order", options->order, "text table order: energy or network")
      ->check(CLI::IsMember({"energy", "network"}))
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_option("-o,--output", options->output,
                  "also write the JSON document (as --json prints it) to FILE");
  cmd->add_flag("--csv", options->csv, "write CSV (per layer, or per clock with --sweep-clocks)");
  cmd->add_option("--html", options->html,
                  "also write a self-contained HTML report (charts of the same) to this file");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_predict(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
