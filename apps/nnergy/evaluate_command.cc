// `nnergy evaluate`: k-fold CV, test split and held-out networks for learned predictors.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/dataset/published_measurement.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/learn/evaluation.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/learn/published_times.h"
#include "nnergy/learn/regressor_settings.h"
#include "nnergy/learn/time_accuracy.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/network/time_evaluation.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"
#include "time_accuracy_report.h"

namespace nnergy::cli {

namespace {

using learn::FitMetrics;
using learn::ModeScores;
using learn::PredictorEvaluation;
using learn::Target;
using learn::TargetScores;
using report::TextTable;

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
  std::string features_csv;
  std::optional<std::string> device;
  std::string devices_file;
  std::uint64_t seed = 1;
  int threads = 0;
  std::vector<std::string> settings;  ///< --set KEY=VALUE
};

std::string number(double value, const char* format) {
  return std::isfinite(value) ? fmt::format(fmt::runtime(format), value) : std::string("-");
}

std::string target_label(Target target) { return target == Target::kTime ? "time" : "power"; }
std::string unit_of(Target target) { return target == Target::kTime ? "s" : "W"; }

const ModeScores* mode_scores(const TargetScores& t, const std::string& mode) {
  for (const ModeScores& m : t.modes) {
    if (m.mode == mode) return &m;
  }
  return nullptr;
}

// The metric rows of seed 000 Tables 6.1–6.4 plus MAPE, RMSE, RMSPE and the ±10 % share, for one
// target; `cell(mode scores)` makes each column's cell.
struct MetricRow {
  std::string label;
  std::function<std::string(const ModeScores&, Target)> cell;
};

std::vector<MetricRow> metric_rows(std::size_t folds) {
  const auto test = [](const ModeScores& m, auto f) {
    return m.test ? f(*m.test) : std::string("-");
  };
  return {
      {fmt::format("CV mean R² ± σ ({}-fold)", folds),
       [](const ModeScores& m, Target) {
         return number(m.cv_r_squared_mean, "{:.3f}") + " ± " +
                number(m.cv_r_squared_std, "{:.3f}");
       }},
      {"test R²",
       [test](const ModeScores& m, Target) {
         return test(m, [](const FitMetrics& f) { return number(f.r_squared, "{:.3f}"); });
       }},
      {"test MAPE %",
       [test](const ModeScores& m, Target) {
         return test(m, [](const FitMetrics& f) { return number(f.mape_percent, "{:.1f}"); });
       }},
      {"test RMSE",
       [test](const ModeScores& m, Target t) {
         return test(
             m, [t](const FitMetrics& f) { return report::format_quantity(f.rmse, unit_of(t)); });
       }},
      {"test RMSPE %",
       [test](const ModeScores& m, Target) {
         return test(m, [](const FitMetrics& f) { return number(f.rmspe_percent, "{:.1f}"); });
       }},
      {"test within ±10 %",
       [test](const ModeScores& m, Target) {
         return test(m, [](const FitMetrics& f) {
           return number(100 * f.within_10_percent, "{:.0f}") + " %";
         });
       }},
      {"test rows",
       [test](const ModeScores& m, Target) {
         return test(m, [](const FitMetrics& f) { return std::to_string(f.count); });
       }},
  };
}

std::vector<std::string> modes_in(const PredictorEvaluation& e) {
  std::vector<std::string> modes;
  for (const ModeScores& m : e.targets.front().modes) modes.push_back(m.mode);
  return modes;
}

std::string op_level_table(const PredictorEvaluation& e, std::size_t folds) {
  const std::vector<std::string> modes = modes_in(e);
  TextTable table;
  table.add_column("metric", TextTable::Align::kLeft);
  for (const std::string& mode : modes) table.add_column(mode, TextTable::Align::kRight);
  for (const TargetScores& t : e.targets) {
    for (const MetricRow& row : metric_rows(folds)) {
      std::vector<std::string> cells = {row.label + " " + target_label(t.target)};
      for (const std::string& mode : modes) {
        const ModeScores* m = mode_scores(t, mode);
        cells.push_back(m != nullptr ? row.cell(*m, t.target) : "-");
      }
      table.add_row(std::move(cells));
    }
  }
  return table.render();
}

std::string percent_difference(double predicted, double reference) {
  if (!(reference > 0)) return "-";
  return fmt::format("{:+.1f} %", 100 * (predicted - reference) / reference);
}

std::string holdout_text(const PredictorEvaluation& e, const learn::SplitAssignment& splits,
                         const std::vector<std::string>& networks) {
  std::string out = fmt::format(
      "Held-out networks {}: models trained without any of their {} measured unique ops (an op "
      "shared with another network is held out too)\n",
      join_with_commas(networks), splits.holdout_ops);
  for (const TargetScores& t : e.targets) {
    std::vector<std::string> parts;
    for (const ModeScores& m : t.modes) {
      if (!m.holdout) continue;
      parts.push_back(fmt::format(
          "{} R² {}, MAPE {} %, within ±10 % {} % ({} rows)", m.mode,
          number(m.holdout->r_squared, "{:.3f}"), number(m.holdout->mape_percent, "{:.1f}"),
          number(100 * m.holdout->within_10_percent, "{:.0f}"), m.holdout->count));
    }
    out += fmt::format("  op level, {}: {}\n", to_string(t.target),
                       parts.empty() ? std::string("no rows") : join_with_commas(parts));
  }
  const TargetScores& time = e.targets.front();
  if (time.networks.empty()) return out;
  TextTable table;
  using A = TextTable::Align;
  table.add_column("network", A::kLeft);
  table.add_column("mode", A::kLeft);
  table.add_column("measured ms", A::kRight);
  table.add_column("sum of measured ops ms", A::kRight);
  table.add_column("predicted ms", A::kRight);
  table.add_column("vs measured", A::kRight);
  table.add_column("vs sum of ops", A::kRight);
  table.add_column("ops summed", A::kRight);
  table.add_column("nodes not summed", A::kRight);
  for (const learn::NetworkScore& s : time.networks) {
    table.add_row(
        {s.network, s.mode,
         s.measured_time_s ? fmt::format("{:.2f}", 1e3 * *s.measured_time_s) : "-",
         fmt::format("{:.2f}", 1e3 * s.measured_ops_time_s),
         fmt::format("{:.2f} ± {:.2f}", 1e3 * s.predicted.time_s, 1e3 * s.predicted.std_s),
         percent_difference(s.predicted.time_s, s.measured_time_s.value_or(0)),
         percent_difference(s.predicted.time_s, s.measured_ops_time_s),
         std::to_string(s.predicted.ops_summed), std::to_string(s.predicted.nodes_missing)});
  }
  out +=
      "  network level (predicted = Σ count × predicted op time, seed 004 Eq. 3; ops outside "
      "the whitelist are measured in neither sum):\n";
  out += table.render();
  std::vector<std::string> mape;
  for (const ModeScores& m : time.modes) {
    mape.push_back(
        fmt::format("{} {} % vs measured, {} % vs sum of ops", m.mode,
                    number(learn::network_mape_percent(time.networks, m.mode, false), "{:.1f}"),
                    number(learn::network_mape_percent(time.networks, m.mode, true), "{:.1f}")));
  }
  out += "  network-level time MAPE: " + join_with_commas(mape) + "\n";
  return out;
}

std::string importance_text(const TargetScores& t) {
  if (t.importances.empty()) return "";
  std::vector<std::string> top;
  for (std::size_t i = 0; i < std::min<std::size_t>(10, t.importances.size()); ++i) {
    top.push_back(fmt::format("{} {:.3f}", t.importances[i].first, t.importances[i].second));
  }
  return fmt::format("  feature importance ({}, model of the non-test rows, top {}): {}\n",
                     to_string(t.target), top.size(), join_with_commas(top));
}

// Seed 000 Tables 6.1–6.4: one table per mode, one column per predictor.
std::string side_by_side(const std::vector<PredictorEvaluation>& evaluations, std::size_t folds,
                         bool holdout) {
  std::string out;
  for (const std::string& mode : modes_in(evaluations.front())) {
    TextTable table;
    table.add_column("metric (" + mode + ")", TextTable::Align::kLeft);
    for (const PredictorEvaluation& e : evaluations) {
      table.add_column(e.regressor, TextTable::Align::kRight);
    }
    for (const TargetScores& reference : evaluations.front().targets) {
      for (const MetricRow& row : metric_rows(folds)) {
        std::vector<std::string> cells = {row.label + " " + target_label(reference.target)};
        for (const PredictorEvaluation& e : evaluations) {
          std::string cell = "-";
          for (const TargetScores& t : e.targets) {
            const ModeScores* m = mode_scores(t, mode);
            if (t.target == reference.target && m != nullptr) cell = row.cell(*m, t.target);
          }
          cells.push_back(cell);
        }
        table.add_row(std::move(cells));
      }
    }
    if (holdout) {
      for (const bool against_ops : {false, true}) {
        std::vector<std::string> cells = {against_ops ? "held-out network MAPE % vs sum of ops"
                                                      : "held-out network MAPE % vs measured"};
        for (const PredictorEvaluation& e : evaluations) {
          cells.push_back(
              number(learn::network_mape_percent(e.targets.front().networks, mode, against_ops),
                     "{:.1f}"));
        }
        table.add_row(std::move(cells));
      }
    }
    std::vector<std::string> fit = {"fit time (non-test rows, time)"};
    for (const PredictorEvaluation& e : evaluations) {
      fit.push_back(fmt::format("{:.2f} s", e.targets.front().fit_time_s));
    }
    table.add_row(std::move(fit));
    out += table.render() + "\n";
  }
  return out;
}

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    std::stringstream stream(item);
    std::string part;
    while (std::getline(stream, part, ',')) {
      if (!part.empty()) out.push_back(part);
    }
  }
  return out;
}

// `nnergy evaluate --published FILE`: the analytical model against published whole-network times.
CommandResult run_evaluate_published(const EvaluateOptions& o, const std::string& command_line) {
  if (o.host_launch_us && !(*o.host_launch_us >= 0)) {
    throw InvalidInput(fmt::format("--host-launch-us {}: expected >= 0", *o.host_launch_us));
  }
  const std::vector<std::string> grades = split_list(o.grades);
  check_grades(grades);
  const std::filesystem::path data_dir = data_directory();
  device::DeviceCatalog catalog = device::DeviceCatalog::load_default(data_dir);
  if (!o.devices_file.empty()) catalog.merge(device::DeviceCatalog::load(o.devices_file));
  const dataset::PublishedReadResult read = dataset::read_published_measurements(o.published);
  const learn::PublishedTimes times = learn::published_times(read.records, data_dir, grades);
  network::TimeEvaluationSettings settings;
  const auto& calibration = catalog.calibration();
  settings.host_launch_s = o.host_launch_us ? *o.host_launch_us * 1e-6
                                            : (calibration ? calibration->host_launch_s : 0.0);
  const network::TimeEvaluation e = network::evaluate_times(times.measurements, catalog, settings);

  const auto& groupings = time_groupings();
  std::map<std::string, std::size_t> skip_reasons;
  for (const auto& [id, why] : times.skipped) ++skip_reasons[why];

  RunContext context = RunContext::now(command_line);
  context.add("published", o.published)
      .add("grades", grades)
      .add("host_launch_s", settings.host_launch_s)
      .add("predictor", "analytical");
  if (o.json) {
    nlohmann::ordered_json j;
    j["context"] = context.to_json();
    j["records_read"] = read.records_read;
    j["rejected"] = read.rejected.size();
    j["measurements"] = times.measurements.size();
    j["evaluated"] = e.evaluated.size();
    nlohmann::ordered_json skipped = nlohmann::ordered_json::object();
    for (const auto& [why, n] : skip_reasons) skipped[why] = n;
    j["skipped"] = skipped;
    nlohmann::ordered_json failures = nlohmann::ordered_json::array();
    for (const auto& [m, why] : e.failures) failures.push_back({{"id", m.id}, {"reason", why}});
    j["failures"] = failures;
    for (const auto& [name, key] : groupings)
      j["by_" + name] = accuracy_json(learn::time_accuracy(e.evaluated, key));
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const network::EvaluatedTime& t : e.evaluated) {
      rows.push_back({{"id", t.measurement.id},
                      {"network", t.measurement.network},
                      {"device", t.measurement.device_id},
                      {"measured_s", t.measurement.measured_s},
                      {"predicted_s", t.predicted_s}});
    }
    j["records"] = rows;
    return {j.dump(2) + "\n", 0};
  }
  std::string out = fmt::format(
      "nnergy evaluate: the analytical model against published whole-network times in {}\n",
      o.published);
  out += fmt::format(
      "  {} records read ({} rejected by the reader); grades {}; {} whole-network times "
      "predicted, {} could not be, {} records skipped\n",
      read.records_read, read.rejected.size(), join_with_commas(grades), e.evaluated.size(),
      e.failures.size(), times.skipped.size());
  if (calibration) {
    out += fmt::format(
        "  the model's efficiencies were fitted by `nnergy calibrate` on {} whole-network times of "
        "{}: on that corpus these figures are in-sample (`nnergy calibrate --dry-run` gives the "
        "leave-one-GPU-out ones); host launch cost {:.1f} µs per kernel\n",
        calibration->records, calibration->corpus, settings.host_launch_s * 1e6);
  } else {
    out += fmt::format(
        "  no parameter of the model was fitted on these measurements: every figure is "
        "out-of-sample (host launch cost {:.1f} µs per kernel)\n",
        settings.host_launch_s * 1e6);
  }
  for (const auto& [name, key] : groupings) {
    out += "\n" + accuracy_table(name, learn::time_accuracy(e.evaluated, key));
  }
  out += "\nSkipped records, by reason:\n";
  for (const auto& [why, n] : skip_reasons) out += fmt::format("  {:4} {}\n", n, why);
  if (!e.failures.empty()) {
    std::map<std::string, std::size_t> failure_reasons;
    for (const auto& [m, why] : e.failures) ++failure_reasons[why];
    out += "Records that could not be predicted, by reason:\n";
    for (const auto& [why, n] : failure_reasons) out += fmt::format("  {:4} {}\n", n, why);
  }
  if (!o.scatter_csv.empty()) {
    std::string csv = "id,network,device,precision,mode,part,batch,measured_s,predicted_s\n";
    for (const network::EvaluatedTime& t : e.evaluated) {
      const auto& m = t.measurement;
      csv += fmt::format("{},\"{}\",{},{},{},{},{},{},{}\n", m.id, m.network, m.device_id,
                         device::to_string(m.precision), predict::to_string(m.mode),
                         network::to_string(m.part), m.bindings.batch.value_or(0), m.measured_s,
                         t.predicted_s);
    }
    write_file_atomically(o.scatter_csv, context.to_csv_comments() + csv, "--scatter-csv");
    out += fmt::format("wrote {} (predicted vs measured per record)\n", o.scatter_csv);
  }
  return {out, 0};
}

CommandResult run_evaluate(const EvaluateOptions& o, const std::string& command_line) {
  if (o.db.empty() == o.published.empty()) {
    throw InvalidInput(
        "nnergy evaluate: give --db DATASET (learned predictors) or --published "
        "FILE (the analytical model against published measurements)");
  }
  if (!o.published.empty()) return run_evaluate_published(o, command_line);
  if (!o.scatter_csv.empty()) learn::check_output_directory(o.scatter_csv, "--scatter-csv");
  if (!o.features_csv.empty()) learn::check_output_directory(o.features_csv, "--features-csv");
  if (o.threads < 0) throw InvalidInput(fmt::format("--threads {}: expected >= 0", o.threads));
  const std::vector<std::string> predictors = split_list(o.predictors);
  if (predictors.empty()) throw InvalidInput("--predictor: expected at least one name");
  const predict::RegressorRegistry registry = available_regressors();
  for (const std::string& name : predictors) {
    if (!registry.contains(name)) {
      std::vector<std::string> known;
      for (const auto& [n, summary] : registry.entries()) known.push_back(n);
      throw InvalidInput(fmt::format("--predictor {}: unknown predictor; known: {}", name,
                                     join_with_commas(known)));
    }
  }
  device::DeviceCatalog catalog = device::DeviceCatalog::load_default(data_directory());
  if (!o.devices_file.empty()) catalog.merge(device::DeviceCatalog::load(o.devices_file));
  const learn::TrainingTable table = learn::build_training_table(o.db, catalog, o.device);

  learn::EvaluationSettings settings;
  settings.folds = o.folds;
  settings.test_fraction = o.test_fraction;
  settings.holdout_networks = split_list(o.holdout_networks);
  settings.seed = o.seed;
  settings.threads = o.threads;
  settings.extra = learn::parse_regressor_settings(o.settings, "--set");
  const learn::SplitAssignment splits = learn::assign_splits(table, settings);

  std::vector<PredictorEvaluation> evaluations;
  for (const std::string& name : predictors) {
    evaluations.push_back(learn::evaluate_predictor(table, splits, registry, name, settings));
  }

  const auto& r = table.device_resolution;
  std::string out = fmt::format("nnergy evaluate: {} on {} (FNV-1a 64 {})\n",
                                join_with_commas(predictors), o.db, table.dataset_digest);
  out += fmt::format("  device: '{}' ({}) encoded as {} — {}\n", r.dataset_name, r.dataset_kind,
                     r.catalog_id, r.how);
  out += fmt::format(
      "  rows: {} op measurements of {} unique ops ({} dropped: time missing, NaN, infinite or "
      "not positive; {} error rows skipped); {} features\n",
      table.rows.size(), splits.ops, table.dropped_rows, table.error_rows,
      table.features.columns());
  out += fmt::format(
      "  splits by unique op (all rows of an op — both modes, every clock — stay together, so no "
      "op is both trained on and scored): test {} ops ({:g} %), {}-fold CV over the other {} "
      "ops; seed {}\n",
      splits.test_ops, 100 * o.test_fraction, o.folds, splits.ops - splits.test_ops, o.seed);
  out +=
      "  R² on the raw values (seed 000 §6.2); one model per target spans both modes (mode is "
      "a feature); metrics are per mode\n";
  for (const std::string& note : evaluations.front().notes) out += "  note: " + note + "\n";

  for (const PredictorEvaluation& e : evaluations) {
    out += fmt::format("\n== {} — {}\n", e.regressor, e.description);
    out += op_level_table(e, o.folds);
    for (const TargetScores& t : e.targets) out += importance_text(t);
    if (!settings.holdout_networks.empty()) {
      out += holdout_text(e, splits, settings.holdout_networks);
    }
  }
  out += "\n== All predictors side by side (seed 000 Tables 6.1–6.4 layout)\n";
  out += side_by_side(evaluations, o.folds, !settings.holdout_networks.empty());

  RunContext context = RunContext::now(command_line);
  context.add("dataset", {{"path", o.db}, {"digest_fnv1a_64", table.dataset_digest}})
      .add("device", r.catalog_id)
      .add("predictors", predictors)
      .add("folds", o.folds)
      .add("test_fraction", o.test_fraction)
      .add("holdout_networks", settings.holdout_networks)
      .add("seed", o.seed);
  if (!o.scatter_csv.empty()) {
    write_file_atomically(o.scatter_csv,
                          context.to_csv_comments() + learn::scatter_csv(table, evaluations),
                          "--scatter-csv");
    out += fmt::format("wrote {} (predicted vs measured per op and split)\n", o.scatter_csv);
  }
  if (!o.features_csv.empty()) {
    write_file_atomically(o.features_csv,
                          context.to_csv_comments() + learn::features_csv(table, splits),
                          "--features-csv");
    out += fmt::format("wrote {} (encoded features, targets, split and fold per row)\n",
                       o.features_csv);
  }
  return {out, 0};
}

}  // namespace

void add_evaluate_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<EvaluateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Score learned predictors on a dataset: k-fold CV, a test split and held-out networks");
  cmd->add_option("--db", options->db, "dataset file (see `nnergy profile`)");
  cmd->add_option("--published", options->published,
                  "instead of --db: score the analytical model on published whole-network times "
                  "(e.g. data/calibration/measured_public.json)");
  cmd->add_option("--grades", options->grades,
                  "with --published: grades of the records used, comma-separated")
      ->capture_default_str();
  cmd->add_option("--host-launch-us", options->host_launch_us,
                  "with --published: host CPU time per kernel launch, us (see predict; default: "
                  "the calibrated value)");
  cmd->add_flag("--json", options->json, "with --published: JSON instead of text");
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
  cmd->add_option("--scatter-csv", options->scatter_csv,
                  "write predicted vs measured per op and split (CSV) for plots");
  cmd->add_option("--features-csv", options->features_csv,
                  "write the encoded features, targets and split/fold of every row (CSV), e.g. "
                  "for tools/sklearn_reference.py");
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
                  "regressor setting KEY=VALUE (repeatable; given to every --predictor, see "
                  "README), e.g. --set num_parallel_tree=50");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] { return run_evaluate(*options, command_line); };
  });
}

}  // namespace nnergy::cli
