// `nnergy evaluate`: k-fold CV, test split and held-out networks for learned predictors, or the
// analytical model against published whole-network times, average powers and energies.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/evaluate.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/learn/regressor_settings.h"
#include "nnergy/report/evaluation_report.h"
#include "nnergy/report/html_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct EvaluateOptions {
  std::string db;
  std::string published;                         ///< --published FILE
  std::vector<std::string> grades = {"A", "B"};  ///< --grades
  std::optional<double> host_launch_us;          ///< default: the calibrated eager-PyTorch value
  bool json = false;
  std::vector<std::string> predictors = {"forest"};
  std::size_t folds = 15;
  std::vector<std::string> holdout_networks;
  double test_fraction = 0.2;
  std::string scatter_csv;
  std::string output;  ///< also write the JSON document here
  std::string html;
  std::string features_csv;
  std::optional<std::string> device;
  std::string devices_file;
  std::uint64_t seed = 1;
  int threads = 0;
  std::vector<std::string> settings;  ///< --set KEY=VALUE
};

// The names of comma-separated lists, each trimmed; empty names are dropped.
std::vector<std::string> comma_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    for (std::string& part : split_trimmed(item, ',')) {
      if (!part.empty()) out.push_back(std::move(part));
    }
  }
  return out;
}

std::string run_published(const EvaluateOptions& o, const std::string& command_line) {
  api::PublishedEvaluationRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.published = o.published;
  r.grades = comma_list(o.grades);
  r.host_launch_us = o.host_launch_us;
  r.scatter_csv = o.scatter_csv;
  r.devices_file = o.devices_file;
  const auto progress = stderr_progress("evaluate", "records");
  r.progress = progress->callback();
  const report::PublishedEvaluationReport report = api::evaluate_published(r);
  progress->finish();
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kEvaluate,
      "nnergy evaluate: " + std::filesystem::path(o.published).filename().string(),
      [&] { return report::to_json(report); });
  return report::render(report, report::choose_format(o.json));
}

std::string run_evaluate(const EvaluateOptions& o, const std::string& command_line) {
  if (o.db.empty() == o.published.empty()) {
    throw InvalidInput(
        "nnergy evaluate: give --db DATASET (learned predictors) or --published "
        "FILE (the analytical model against published measurements)");
  }
  if (!o.published.empty()) return run_published(o, command_line);
  api::EvaluateRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.db = o.db;
  r.predictors = comma_list(o.predictors);
  r.folds = o.folds;
  r.test_fraction = o.test_fraction;
  r.holdout_networks = comma_list(o.holdout_networks);
  r.scatter_csv = o.scatter_csv;
  r.features_csv = o.features_csv;
  r.device = o.device;
  r.devices_file = o.devices_file;
  r.seed = o.seed;
  r.threads = o.threads;
  r.settings = learn::parse_regressor_settings(o.settings, "--set");
  const regress::RegressorRegistry regressors = available_regressors();
  r.regressors = &regressors;
  const auto progress = stderr_progress("evaluate", "fits");
  r.progress = progress->callback();
  const report::EvaluationReport report = api::evaluate(r);
  progress->finish();
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kEvaluate,
      "nnergy evaluate: " + std::filesystem::path(o.db).filename().string(),
      [&] { return report::to_json(report); });
  return report::render(report, report::choose_format(o.json));
}

}  // namespace

void add_evaluate_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<EvaluateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Score learned predictors on a dataset: k-fold CV, a test split and held-out networks");
  cmd->add_option("--db", options->db, "dataset file (see `nnergy profile`)");
  cmd->add_option("--published", options->published,
                  "instead of --db: score the analytical model on published times, powers and "
                  "energies (e.g. data/measured/h100/networks.json)");
  cmd->add_option("--grades", options->grades,
                  "with --published: grades of the records used, comma-separated")
      ->capture_default_str();
  cmd->add_option("--host-launch-us", options->host_launch_us,
                  "with --published: host CPU time per kernel launch in inference, us (see "
                  "predict; default: the calibrated value)");
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_option("-o,--output", options->output,
                  "also write the JSON document (as --json prints it) to FILE");
  cmd->add_option("--predictor", options->predictors,
                  "regressors to compare, comma-separated (forest, boost, poly-lasso, hybrid, "
                  "analytical; resnet with LibTorch)")
      ->capture_default_str();
  cmd->add_option("--folds", options->folds, "k of the k-fold cross-validation")
      ->capture_default_str();
  cmd->add_option("--holdout-networks", options->holdout_networks,
                  "networks of the dataset whose ops are kept out of training, comma-separated; "
                  "adds network-level scores");
  cmd->add_option("--test-fraction", options->test_fraction,
                  "share of the unique ops in the test split")
      ->capture_default_str();
  cmd->add_option("--html", options->html,
                  "also write a self-contained HTML report (predicted vs measured) to this file");
  cmd->add_option("--scatter-csv", options->scatter_csv,
                  "write predicted vs measured per op and split (CSV) for plots");
  cmd->add_option("--features-csv", options->features_csv,
                  "write the encoded features, targets and split of every row (CSV)");
  cmd->add_option("--device", options->device,
                  "catalog device the dataset was measured on (default: matched by name; a CPU "
                  "not in the catalog is cpu-core)");
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_option("--seed", options->seed, "seed of the splits and the regressors")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "worker threads (0: the regressor's default)")
      ->capture_default_str();
  cmd->add_option("--set", options->settings,
                  "regressor setting KEY=VALUE for every --predictor (repeatable; see README)");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_evaluate(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
