#include "nnergy/report/evaluation_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "nnergy/calibration/time_accuracy.h"
#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"
#include "nnergy/report/time_accuracy_report.h"

namespace nnergy::report {

namespace {

using core::FitMetrics;
using learn::ModeScores;
using learn::PredictorEvaluation;
using learn::Target;
using learn::TargetScores;

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
         return test(m, [t](const FitMetrics& f) { return format_quantity(f.rmse, unit_of(t)); });
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

std::string holdout_text(const PredictorEvaluation& e, std::size_t holdout_ops,
                         const std::vector<std::string>& networks) {
  std::string out = fmt::format(
      "Held-out networks {}: models trained without any of their {} measured unique ops (an op "
      "shared with another network is held out too)\n",
      join_with_commas(networks), holdout_ops);
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
      "  network level (predicted = Σ count × predicted op time, NeuralPower's network sum, see "
      "README.md; ops outside the whitelist are measured in neither sum):\n";
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

}  // namespace

namespace {

nlohmann::ordered_json metrics_json(const std::optional<core::FitMetrics>& m) {
  return m ? nlohmann::ordered_json(m->to_json()) : nlohmann::ordered_json(nullptr);
}

// NaN (undefined R²) as null: JSON has no NaN.
nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json target_json(const learn::TargetScores& t) {
  nlohmann::ordered_json modes = nlohmann::ordered_json::array();
  for (const learn::ModeScores& m : t.modes) {
    modes.push_back({{"mode", m.mode},
                     {"cv_r_squared_mean", number_or_null(m.cv_r_squared_mean)},
                     {"cv_r_squared_std", number_or_null(m.cv_r_squared_std)},
                     {"test", metrics_json(m.test)},
                     {"holdout", metrics_json(m.holdout)}});
  }
  nlohmann::ordered_json networks = nlohmann::ordered_json::array();
  for (const learn::NetworkScore& n : t.networks) {
    networks.push_back(
        {{"network", n.network},
         {"mode", n.mode},
         {"measured_time_s", n.measured_time_s ? nlohmann::ordered_json(*n.measured_time_s)
                                               : nlohmann::ordered_json(nullptr)},
         {"measured_ops_time_s", n.measured_ops_time_s},
         {"predicted_time_s", n.predicted.time_s},
         {"predicted_std_s", n.predicted.std_s}});
  }
  return {{"target", learn::to_string(t.target)},
          {"rows", t.rows},
          {"modes", std::move(modes)},
          {"networks", std::move(networks)}};
}

}  // namespace

nlohmann::ordered_json to_json(const EvaluationReport& report) {
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["dataset"] = {{"path", report.dataset.string()},
                  {"digest_fnv1a_64", report.dataset_digest},
                  {"device", report.device.catalog_id},
                  {"rows", report.rows},
                  {"ops", report.ops},
                  {"test_ops", report.test_ops},
                  {"holdout_ops", report.holdout_ops},
                  {"folds", report.folds},
                  {"test_fraction", report.test_fraction}};
  nlohmann::ordered_json predictors = nlohmann::ordered_json::array();
  for (const learn::PredictorEvaluation& e : report.evaluations) {
    nlohmann::ordered_json targets = nlohmann::ordered_json::array();
    for (const learn::TargetScores& t : e.targets) targets.push_back(target_json(t));
    predictors.push_back({{"name", e.regressor},
                          {"description", e.description},
                          {"notes", e.notes},
                          {"targets", std::move(targets)}});
  }
  j["predictors"] = std::move(predictors);
  // A table (columns, then one array per point): thousands of points stay small enough to
  // inline into an HTML report.
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const learn::ScatterRow& r : report.scatter) {
    rows.push_back({r.predictor, r.target, r.split, r.fold, r.op_type, r.mode, r.dtype, r.measured,
                    r.predicted, r.predicted_std});
  }
  const nlohmann::ordered_json points = {
      {"columns",
       {"predictor", "target", "split", "fold", "op_type", "mode", "dtype", "measured", "predicted",
        "predicted_std"}},
      {"rows", std::move(rows)}};
  j["points"] = points;
  return j;
}

std::string render_text(const EvaluationReport& report) {
  std::vector<std::string> predictors;
  for (const PredictorEvaluation& e : report.evaluations) predictors.push_back(e.regressor);
  const learn::DeviceResolution& r = report.device;
  std::string out =
      fmt::format("nnergy evaluate: {} on {} (FNV-1a 64 {})\n", join_with_commas(predictors),
                  report.dataset.string(), report.dataset_digest);
  out += fmt::format("  device: '{}' ({}) encoded as {} — {}\n", r.dataset_name, r.dataset_kind,
                     r.catalog_id, r.how);
  out += fmt::format(
      "  rows: {} op measurements of {} unique ops ({} dropped: time missing, NaN, infinite or "
      "not positive; {} error rows skipped); {} features\n",
      report.rows, report.ops, report.dropped_rows, report.error_rows, report.feature_columns);
  out += fmt::format(
      "  splits by unique op (all rows of an op — both modes, every clock — stay together, so no "
      "op is both trained on and scored): test {} ops ({:g} %), {}-fold CV over the other {} "
      "ops; seed {}\n",
      report.test_ops, 100 * report.test_fraction, report.folds, report.ops - report.test_ops,
      report.seed);
  out +=
      "  R² on the raw values, as in README.md's evaluation table; one model per target spans "
      "both modes (mode is a feature); metrics are per mode\n";
  if (!report.evaluations.empty()) {
    for (const std::string& note : report.evaluations.front().notes) {
      out += "  note: " + note + "\n";
    }
  }

  for (const PredictorEvaluation& e : report.evaluations) {
    out += fmt::format("\n== {} — {}\n", e.regressor, e.description);
    out += op_level_table(e, report.folds);
    for (const TargetScores& t : e.targets) out += importance_text(t);
    if (!report.holdout_networks.empty()) {
      out += holdout_text(e, report.holdout_ops, report.holdout_networks);
    }
  }
  if (!report.evaluations.empty()) {
    out += "\n== All predictors side by side (one table per mode)\n";
    out += side_by_side(report.evaluations, report.folds, !report.holdout_networks.empty());
  }
  if (!report.scatter_csv.empty()) {
    out += fmt::format("wrote {} (predicted vs measured per op and split)\n",
                       report.scatter_csv.string());
  }
  if (!report.features_csv.empty()) {
    out += fmt::format("wrote {} (encoded features, targets, split and fold per row)\n",
                       report.features_csv.string());
  }
  return out;
}

bool PublishedEvaluationReport::in_sample() const {
  return records_in_corpus && records_accepted > 0 && *records_in_corpus == records_accepted;
}

namespace {

// The measured and predicted average powers (W) of `e`.
std::vector<calibration::ScoredFigure> power_figures(const calibration::PowerEvaluation& e) {
  std::vector<calibration::ScoredFigure> out;
  for (const calibration::EvaluatedPower& p : e.powers) {
    out.push_back({&p.measurement.run, p.measurement.measured_w, p.predicted_w});
  }
  return out;
}

// The measured and predicted energies per iteration (J) of `e`.
std::vector<calibration::ScoredFigure> energy_figures(const calibration::PowerEvaluation& e) {
  std::vector<calibration::ScoredFigure> out;
  for (const calibration::EvaluatedEnergy& x : e.energies) {
    out.push_back({&x.measurement.run, x.measurement.measured_j, x.predicted_j});
  }
  return out;
}

// Where the model's parameters come from, and whether the file's figures are in-sample.
std::string provenance_text(const PublishedEvaluationReport& report) {
  const std::string launch =
      report.host.host_launch_s == report.host.training_host_launch_s
          ? fmt::format("{:.1f} µs per kernel", report.host.host_launch_s * 1e6)
          : fmt::format("{:.1f} µs per kernel in inference, {:.1f} µs in training",
                        report.host.host_launch_s * 1e6, report.host.training_host_launch_s * 1e6);
  if (!report.calibration) {
    return fmt::format(
        "  no parameter of the model was fitted on these measurements: every figure is "
        "out-of-sample (host launch cost {})\n",
        launch);
  }
  const device::CalibratedParameters& c = *report.calibration;
  // Whether this file's records are in the corpus the model was fitted on.
  std::string use;
  if (report.in_sample()) {
    use =
        ": on that corpus these figures are in-sample (`nnergy calibrate --dry-run` gives the "
        "leave-one-GPU-out ones)";
  } else if (!report.records_in_corpus) {
    use = ", which cannot be read: whether these measurements were used in calibration is unknown";
  } else if (*report.records_in_corpus == 0) {
    use =
        "; none of this file's measurements were used in calibration: every figure is "
        "out-of-sample";
  } else {
    use = fmt::format(
        "; {} of this file's {} records are in that corpus (in-sample), the others were not used "
        "in calibration",
        *report.records_in_corpus, report.records_accepted);
  }
  std::string out = fmt::format(
      "  the model's efficiencies were fitted by `nnergy calibrate` on {} whole-network times of "
      "{}{}; host launch cost {}\n",
      c.records, c.corpus, use, launch);
  if (c.power && (!report.power.powers.empty() || !report.power.energies.empty())) {
    out += fmt::format(
        "  power model: archline + operand power κ = {:.2f} of the memory power, fitted on {} "
        "average powers ({}) of the corpus\n",
        c.power->operand_share, c.power->records, join_with_commas(c.power->devices));
  }
  for (const TransferredDevice& d : report.transferred_devices) {
    out += fmt::format("  {} has no measurement in the corpus: its time model was {}", d.id,
                       d.provenance.empty() ? std::string("not calibrated") : d.provenance);
    if (d.relative_time_std > 0) {
      out += fmt::format("; whole-network times ±{:.0f} % (1σ, leave-one-GPU-out)",
                         100 * d.relative_time_std);
    }
    out += "\n";
  }
  return out;
}

// The accuracy tables of one quantity, one per grouping.
std::string accuracy_tables(const std::vector<calibration::ScoredFigure>& figures) {
  std::string out;
  for (const auto& [name, key] : run_groupings()) {
    out += "\n" + accuracy_table(name, calibration::figure_accuracy(figures, key));
  }
  return out;
}

nlohmann::ordered_json accuracy_jsons(const std::vector<calibration::ScoredFigure>& figures,
                                      nlohmann::ordered_json j) {
  for (const auto& [name, key] : run_groupings()) {
    j["by_" + name] = accuracy_json(calibration::figure_accuracy(figures, key));
  }
  return j;
}

}  // namespace

std::string render_text(const PublishedEvaluationReport& report) {
  const network::TimeEvaluation& e = report.evaluation;
  const calibration::PowerEvaluation& p = report.power;
  std::string out = fmt::format(
      "nnergy evaluate: the analytical model against published whole-network times, average "
      "powers and energies in {}\n",
      report.published.string());
  out += fmt::format(
      "  {} records read ({} rejected by the reader); grades {}; {} whole-network times, {} "
      "average powers and {} energies per iteration predicted, {} could not be, {} records "
      "skipped\n",
      report.records_read, report.rejected, join_with_commas(report.grades), e.evaluated.size(),
      p.powers.size(), p.energies.size(), e.failures.size() + p.failures.size(),
      report.skipped.size());
  out += provenance_text(report);
  out += fmt::format("\nWhole-network time per iteration ({} records):\n", e.evaluated.size());
  for (const auto& [name, key] : time_groupings()) {
    out += "\n" + accuracy_table(name, calibration::time_accuracy(e.evaluated, key));
  }
  out += fmt::format(
      "\nAverage power over the iteration, board power in W ({} records; predicted at the boost "
      "clock):\n",
      p.powers.size());
  out += accuracy_tables(power_figures(p));
  out += fmt::format(
      "\nEnergy per iteration, board energy in J ({} records; predicted time × average "
      "power):\n",
      p.energies.size());
  out += accuracy_tables(energy_figures(p));
  std::map<std::string, std::size_t> skip_reasons;
  for (const auto& [id, why] : report.skipped) ++skip_reasons[why];
  out += "\nSkipped records, by reason:\n";
  for (const auto& [why, n] : skip_reasons) out += fmt::format("  {:4} {}\n", n, why);
  if (skip_reasons.empty()) out += "  none\n";
  if (!e.failures.empty() || !p.failures.empty()) {
    std::map<std::string, std::size_t> failure_reasons;
    for (const auto& [m, why] : e.failures) ++failure_reasons[why];
    for (const auto& [id, why] : p.failures) ++failure_reasons[why];
    out += "Records that could not be predicted, by reason:\n";
    for (const auto& [why, n] : failure_reasons) out += fmt::format("  {:4} {}\n", n, why);
  }
  if (!report.rejected_records.empty()) {
    out += "Records the reader rejected:\n";
    for (const auto& [name, why] : report.rejected_records) {
      out += fmt::format("  {}: {}\n", name, why);
    }
  }
  if (!report.scatter_csv.empty()) {
    out +=
        fmt::format("wrote {} (predicted vs measured per record)\n", report.scatter_csv.string());
  }
  return out;
}

namespace {

// What identifies a published run in the per-record lists: which network, where, how.
nlohmann::ordered_json run_fields(const network::NetworkTimeMeasurement& m) {
  return {{"id", m.id},
          {"network", m.network},
          {"device", m.device_id},
          {"precision", device::to_string(m.precision)},
          {"mode", graph::to_string(m.mode)},
          {"part", network::to_string(m.part)},
          {"batch", m.bindings.batch ? nlohmann::ordered_json(*m.bindings.batch)
                                     : nlohmann::ordered_json(nullptr)},
          {"source", m.source},
          {"grade", m.grade}};
}

}  // namespace

nlohmann::ordered_json to_json(const PublishedEvaluationReport& report) {
  const network::TimeEvaluation& e = report.evaluation;
  const calibration::PowerEvaluation& p = report.power;
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["records_read"] = report.records_read;
  j["rejected"] = report.rejected;
  nlohmann::ordered_json rejected = nlohmann::ordered_json::array();
  for (const auto& [name, why] : report.rejected_records) {
    rejected.push_back({{"id", name}, {"reason", why}});
  }
  j["rejected_records"] = rejected;
  j["measurements"] = report.measurements;
  j["evaluated"] = e.evaluated.size();
  nlohmann::ordered_json calibration = nullptr;
  if (report.calibration) {
    nlohmann::ordered_json transferred = nlohmann::ordered_json::array();
    for (const TransferredDevice& d : report.transferred_devices) {
      transferred.push_back({{"id", d.id},
                             {"provenance", d.provenance},
                             {"relative_time_std", d.relative_time_std},
                             {"power_provenance", d.power_provenance}});
    }
    calibration = {{"corpus", report.calibration->corpus},
                   {"records_accepted", report.records_accepted},
                   {"records_in_corpus", report.records_in_corpus
                                             ? nlohmann::ordered_json(*report.records_in_corpus)
                                             : nlohmann::ordered_json(nullptr)},
                   {"in_sample", report.in_sample()},
                   {"transferred_devices", transferred}};
  }
  j["calibration"] = calibration;
  std::map<std::string, std::size_t> skip_reasons;
  for (const auto& [id, why] : report.skipped) ++skip_reasons[why];
  nlohmann::ordered_json skipped = nlohmann::ordered_json::object();
  for (const auto& [why, n] : skip_reasons) skipped[why] = n;
  j["skipped"] = skipped;
  nlohmann::ordered_json failures = nlohmann::ordered_json::array();
  for (const auto& [m, why] : e.failures) failures.push_back({{"id", m.id}, {"reason", why}});
  for (const auto& [id, why] : p.failures) failures.push_back({{"id", id}, {"reason", why}});
  j["failures"] = failures;
  for (const auto& [name, key] : time_groupings())
    j["by_" + name] = accuracy_json(calibration::time_accuracy(e.evaluated, key));
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const network::EvaluatedTime& t : e.evaluated) {
    nlohmann::ordered_json row = run_fields(t.measurement);
    row["measured_s"] = t.measurement.measured_s;
    row["predicted_s"] = t.predicted_s;
    rows.push_back(std::move(row));
  }
  j["records"] = rows;
  nlohmann::ordered_json power_rows = nlohmann::ordered_json::array();
  for (const calibration::EvaluatedPower& x : p.powers) {
    const network::NetworkTimeMeasurement& m = x.measurement.run;
    nlohmann::ordered_json row = run_fields(m);
    row["measured_w"] = x.measurement.measured_w;
    row["predicted_w"] = x.predicted_w;
    row["archline_w"] = x.archline_w;
    row["predicted_time_s"] = x.predicted_time_s;
    power_rows.push_back(std::move(row));
  }
  j["power"] = accuracy_jsons(power_figures(p), {{"measurements", report.power_measurements},
                                                 {"evaluated", p.powers.size()}});
  j["power"]["records"] = power_rows;
  nlohmann::ordered_json energy_rows = nlohmann::ordered_json::array();
  for (const calibration::EvaluatedEnergy& x : p.energies) {
    const network::NetworkTimeMeasurement& m = x.measurement.run;
    nlohmann::ordered_json row = run_fields(m);
    row["measured_j"] = x.measurement.measured_j;
    row["predicted_j"] = x.predicted_j;
    row["predicted_time_s"] = x.predicted_time_s;
    row["predicted_w"] = x.predicted_w;
    energy_rows.push_back(std::move(row));
  }
  j["energy"] = accuracy_jsons(energy_figures(p), {{"measurements", report.energy_measurements},
                                                   {"evaluated", p.energies.size()}});
  j["energy"]["records"] = energy_rows;
  return j;
}

std::string scatter_csv(const PublishedEvaluationReport& report) {
  std::string out =
      "id,network,device,precision,mode,part,batch,measured_s,predicted_s,measured_w,"
      "predicted_w,measured_j,predicted_j\n";
  // The columns every row shares, then the measured and predicted pair in the quantity's place.
  auto row = [&out](const network::NetworkTimeMeasurement& m, std::size_t column, double measured,
                    double predicted) {
    out += fmt::format("{},{},{},{},{},{},{}", csv::field(m.id), csv::field(m.network),
                       csv::field(m.device_id), device::to_string(m.precision),
                       graph::to_string(m.mode), network::to_string(m.part),
                       m.bindings.batch.value_or(0));
    for (std::size_t c = 0; c < 3; ++c) {
      out += c == column ? fmt::format(",{},{}", measured, predicted) : std::string(",,");
    }
    out += "\n";
  };
  for (const network::EvaluatedTime& t : report.evaluation.evaluated) {
    row(t.measurement, 0, t.measurement.measured_s, t.predicted_s);
  }
  for (const calibration::EvaluatedPower& x : report.power.powers) {
    row(x.measurement.run, 1, x.measurement.measured_w, x.predicted_w);
  }
  for (const calibration::EvaluatedEnergy& x : report.power.energies) {
    row(x.measurement.run, 2, x.measurement.measured_j, x.predicted_j);
  }
  return out;
}

}  // namespace nnergy::report
