// `nnergy train`: fit a learned predictor (time, and power where measured) to a dataset.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/train.h"
#include "nnergy/learn/regressor_settings.h"
#include "nnergy/report/train_report.h"

namespace nnergy::cli {

namespace {

struct TrainOptions {
  std::string db;
  std::string predictor = "forest";
  std::string out;
  std::optional<std::string> device;
  std::string devices_file;
  std::uint64_t seed = 1;
  int threads = 0;
  std::vector<std::string> settings;  ///< --set KEY=VALUE
};

std::string run_train(const TrainOptions& o, const std::string& command_line) {
  api::TrainRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.db = o.db;
  r.predictor = o.predictor;
  r.out = o.out;
  r.device = o.device;
  r.devices_file = o.devices_file;
  r.seed = o.seed;
  r.threads = o.threads;
  r.settings = learn::parse_regressor_settings(o.settings, "--set");
  const regress::RegressorRegistry regressors = available_regressors();
  r.regressors = &regressors;
  const auto progress = stderr_progress("train", "fits");
  r.progress = progress->callback();
  const report::TrainReport report = api::train(r);
  progress->finish();
  return report::render_text(report);
}

}  // namespace

void add_train_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Fit a learned predictor (time, and power where measured) to a measured dataset and write "
      "it as a model file (.nnp)");
  cmd->add_option("--db", options->db, "dataset file (see `nnergy profile`)")->required();
  cmd->add_option("--predictor", options->predictor,
                  "regressor: forest, boost, poly-lasso, hybrid, analytical (resnet with LibTorch)")
      ->capture_default_str();
  cmd->add_option("--out", options->out, "model file to write, e.g. cpu-forest.nnp")->required();
  cmd->add_option("--device", options->device,
                  "catalog device the dataset was measured on (default: matched by name; a CPU "
                  "not in the catalog is cpu-core)");
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_option("--seed", options->seed, "random seed of the regressor")->capture_default_str();
  cmd->add_option("--threads", options->threads, "worker threads (0: the regressor's default)")
      ->capture_default_str();
  cmd->add_option("--set", options->settings,
                  "regressor setting KEY=VALUE (repeatable; see README), e.g. --set max_depth=10");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_train(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
