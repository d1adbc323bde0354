// `nnergy train`: fit a learned predictor (time, and power where measured) to a dataset.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "command.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/learn/regressor_settings.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/report/quantity_format.h"

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

std::string in_sample_text(const nlohmann::json& metrics) {
  const nlohmann::json& by_mode = metrics.value("training_set", nlohmann::json::object());
  std::string out;
  for (const auto& [mode, m] : by_mode.items()) {
    if (!out.empty()) out += ", ";
    const nlohmann::json& r2 = m.at("r_squared");
    out += fmt::format("{} R² {} MAPE {:.1f} %", mode,
                       r2.is_number() ? fmt::format("{:.3f}", r2.get<double>()) : "-",
                       m.value("mape_percent", 0.0));
  }
  return out;
}

CommandResult run_train(const TrainOptions& o, const std::string& command_line) {
  learn::check_output_directory(o.out, "--out");
  if (o.threads < 0) throw InvalidInput(fmt::format("--threads {}: expected >= 0", o.threads));
  const predict::RegressorRegistry registry = available_regressors();
  if (!registry.contains(o.predictor)) {
    std::vector<std::string> known;
    for (const auto& [name, summary] : registry.entries()) known.push_back(name);
    throw InvalidInput(fmt::format("--predictor {}: unknown predictor; known: {}", o.predictor,
                                   join_with_commas(known)));
  }
  device::DeviceCatalog catalog = device::DeviceCatalog::load_default(data_directory());
  if (!o.devices_file.empty()) catalog.merge(device::DeviceCatalog::load(o.devices_file));
  const learn::TrainingTable table = learn::build_training_table(o.db, catalog, o.device);

  learn::TrainSettings settings;
  settings.predictor = o.predictor;
  settings.seed = o.seed;
  settings.threads = o.threads;
  settings.extra = learn::parse_regressor_settings(o.settings, "--set");
  settings.command_line = command_line;
  const auto start = std::chrono::steady_clock::now();
  const learn::ModelFile model = learn::ModelFile::train(table, registry, settings);
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  model.save(o.out);

  const auto& r = table.device_resolution;
  std::string out = fmt::format("nnergy train: {} on {} (FNV-1a 64 {})\n", o.predictor, o.db,
                                table.dataset_digest);
  out += fmt::format("  device: '{}' ({}) encoded as catalog device {} — {}\n", r.dataset_name,
                     r.dataset_kind, r.catalog_id, r.how);
  out += fmt::format(
      "  rows: {} op measurements of {} ops used; {} dropped (time missing, NaN, infinite or "
      "not positive); {} error rows skipped\n",
      table.rows.size(), table.signatures().size(), table.dropped_rows, table.error_rows);
  out += fmt::format("  features: {} columns\n", table.features.columns());
  out += fmt::format("  time_s: fitted ({} rows); in-sample {}\n",
                     table.rows_with(learn::Target::kTime).size(),
                     in_sample_text(model.time().metrics));
  if (model.power() != nullptr) {
    out += fmt::format("  power_w: fitted ({} rows, {} power values dropped); in-sample {}\n",
                       table.rows_with(learn::Target::kPower).size(), table.dropped_power,
                       in_sample_text(model.power()->metrics));
  } else {
    out += fmt::format(
        "  power_w: not trained — {} has no power measurements; `nnergy predict --predictor "
        "{}` takes power from the analytical model and says so\n",
        o.db, o.out);
  }
  out += fmt::format(
      "  training time {:.2f} s; in-sample figures are optimistic: `nnergy evaluate` gives "
      "cross-validated ones\n",
      train_s);
  out += fmt::format(
      "wrote {} ({})\n", o.out,
      report::format_quantity(static_cast<double>(std::filesystem::file_size(o.out)), "B"));
  return {out, 0};
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
    *selected = [options, command_line] { return run_train(*options, command_line); };
  });
}

}  // namespace nnergy::cli
