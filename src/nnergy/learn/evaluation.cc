#include "nnergy/learn/evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/core/statistics.h"
#include "nnergy/learn/regressor_settings.h"

namespace nnergy::learn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Distinct signatures in sorted order, shuffled by Fisher–Yates with raw mt19937_64 draws
// (std::shuffle and the standard distributions differ between library implementations; the
// engine's output does not). The modulo bias is below 2⁻⁵⁰ for any realistic op count.
std::vector<std::string> shuffled_signatures(const std::vector<std::string>& row_signatures,
                                             std::uint64_t seed) {
  const std::set<std::string> unique(row_signatures.begin(), row_signatures.end());
  std::vector<std::string> order(unique.begin(), unique.end());
  std::mt19937_64 engine(seed);
  for (std::size_t i = order.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(engine() % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

double r_squared_or_nan(const std::vector<double>& actual, const std::vector<double>& predicted) {
  if (actual.size() < 2) return kNaN;
  return core::fit_metrics(actual, predicted).r_squared;
}

// Rows of `target` among `candidates` for which `keep(row)` holds.
std::vector<std::size_t> select_rows(const TrainingTable& table, Target target,
                                     const std::function<bool(std::size_t)>& keep) {
  std::vector<std::size_t> out;
  for (const std::size_t i : table.rows_with(target)) {
    if (keep(i)) out.push_back(i);
  }
  return out;
}

struct Fitted {
  std::unique_ptr<regress::Regressor> regressor;
  double fit_time_s = 0;
};

// Counts the fits of one evaluation for EvaluationSettings::progress.
class FitProgress {
 public:
  FitProgress(const ProgressCallback& progress, std::size_t total)
      : progress_(progress), total_(total) {
    if (progress_) progress_(0, total_);
  }
  void fitted() {
    ++done_;
    if (progress_) progress_(done_, total_);
  }

 private:
  const ProgressCallback& progress_;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
};

Fitted fit_rows(const TrainingTable& table, const regress::RegressorRegistry& registry,
                const std::string& name, const EvaluationSettings& settings, Target target,
                const std::vector<std::size_t>& rows, const std::string& what) {
  if (rows.empty()) {
    throw InvalidInput(fmt::format("{}: no {} rows to fit {} on", what, to_string(target), name));
  }
  Fitted f;
  f.regressor = registry.create(name);
  regress::FitOptions options;
  options.seed = settings.seed;
  options.threads = settings.threads;
  options.extra = settings_for_target(settings.extra, to_string(target));
  const auto start = std::chrono::steady_clock::now();
  try {
    f.regressor->fit(table.features.select(rows), table.values(target, rows), options);
  } catch (const InvalidInput& e) {
    throw InvalidInput(
        fmt::format("{} ({} {} rows): {}", what, rows.size(), to_string(target), e.what()));
  }
  f.fit_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return f;
}

std::vector<regress::Prediction> predict_rows(const TrainingTable& table,
                                              const regress::Regressor& regressor,
                                              const std::vector<std::size_t>& rows) {
  if (rows.empty()) return {};
  return regressor.predict(table.features.select(rows));
}

// Metrics of the predictions `predicted[k]` of rows `rows[k]` restricted to `mode`.
std::optional<core::FitMetrics> mode_metrics(const TrainingTable& table, Target target,
                                             const std::vector<std::size_t>& rows,
                                             const std::vector<regress::Prediction>& predicted,
                                             const std::string& mode) {
  std::vector<double> a;
  std::vector<double> p;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (table.rows[rows[k]].mode != mode) continue;
    a.push_back(table.values(target, {rows[k]}).front());
    p.push_back(predicted[k].value);
  }
  if (a.empty()) return std::nullopt;
  return core::fit_metrics(a, p);
}

std::vector<std::string> modes_of(const TrainingTable& table) {
  std::vector<std::string> modes;
  for (const char* mode : {"inference", "training"}) {
    for (const TrainingRow& row : table.rows) {
      if (row.mode == mode) {
        modes.emplace_back(mode);
        break;
      }
    }
  }
  return modes;
}

std::vector<NetworkScore> score_networks(const TrainingTable& table,
                                         const std::vector<std::string>& networks,
                                         const std::vector<std::size_t>& rows,
                                         const std::vector<regress::Prediction>& predicted) {
  using Key = std::tuple<std::string, std::string, std::int64_t, std::string>;
  std::map<Key, std::size_t> position;  // (signature, mode, clock, dtype) → index into rows
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const TrainingRow& r = table.rows[rows[k]];
    position[{r.signature, r.mode, r.clock_mhz, r.dtype}] = k;
  }
  std::vector<NetworkScore> scores;
  for (const std::string& name : networks) {
    for (const dataset::NetworkRecord& network : table.networks) {
      if (network.name != name) continue;
      // One score per measured network setting; a network without a measurement gets one per
      // mode of its ops at the default clock, with no measured time.
      std::vector<std::tuple<std::string, std::int64_t, std::string, std::optional<double>>>
          settings;
      for (const dataset::NetworkMeasurementRecord& m : table.network_measurements) {
        if (m.network_name == network.name && m.network_inputs_json == network.inputs_json) {
          settings.emplace_back(m.mode, m.clock_mhz, m.dtype, m.values.time_s);
        }
      }
      if (settings.empty()) {
        for (const std::string& mode : modes_of(table)) {
          settings.emplace_back(mode, 0, table.rows.front().dtype, std::nullopt);
        }
      }
      for (const auto& [mode, clock, dtype, measured] : settings) {
        NetworkScore score;
        score.network = network.name;
        score.mode = mode;
        score.measured_time_s = measured;
        const auto lookup_predicted =
            [&, m = mode, c = clock,
             d = dtype](const std::string& signature) -> std::optional<regress::Prediction> {
          const auto it = position.find({signature, m, c, d});
          if (it == position.end()) return std::nullopt;
          return predicted[it->second];
        };
        const auto lookup_measured =
            [&, m = mode, c = clock,
             d = dtype](const std::string& signature) -> std::optional<regress::Prediction> {
          const auto it = position.find({signature, m, c, d});
          if (it == position.end()) return std::nullopt;
          return regress::Prediction{table.rows[rows[it->second]].time_s, 0};
        };
        score.predicted = sum_network(network, lookup_predicted);
        score.measured_ops_time_s = sum_network(network, lookup_measured).time_s;
        scores.push_back(std::move(score));
      }
    }
  }
  return scores;
}

// The fits score_target makes for `targets`: one per cross-validation fold with rows of the
// target, the test split, and the held-out networks when there are any.
std::size_t fit_count(const TrainingTable& table, const SplitAssignment& splits,
                      const EvaluationSettings& settings, const std::vector<Target>& targets) {
  std::size_t fits = 0;
  for (const Target target : targets) {
    std::set<int> folds;
    for (const std::size_t i : table.rows_with(target)) {
      if (splits.fold[i] >= 0 && static_cast<std::size_t>(splits.fold[i]) < settings.folds) {
        folds.insert(splits.fold[i]);
      }
    }
    fits += folds.size() + 1 + (settings.holdout_networks.empty() ? 0 : 1);
  }
  return fits;
}

TargetScores score_target(const TrainingTable& table, const SplitAssignment& splits,
                          const regress::RegressorRegistry& registry, const std::string& name,
                          const EvaluationSettings& settings, Target target,
                          std::vector<ScatterPoint>& scatter, FitProgress& progress) {
  TargetScores scores;
  scores.target = target;
  scores.rows = table.rows_with(target).size();
  const std::vector<std::string> modes = modes_of(table);
  for (const std::string& mode : modes) {
    ModeScores m;
    m.mode = mode;
    scores.modes.push_back(std::move(m));
  }

  // k-fold cross-validation over the non-test ops.
  for (std::size_t k = 0; k < settings.folds; ++k) {
    const int fold = static_cast<int>(k);
    const auto train = select_rows(table, target, [&](std::size_t i) {
      return splits.fold[i] >= 0 && splits.fold[i] != fold;
    });
    const auto held =
        select_rows(table, target, [&](std::size_t i) { return splits.fold[i] == fold; });
    if (held.empty()) continue;
    const Fitted f = fit_rows(table, registry, name, settings, target, train,
                              fmt::format("cross-validation fold {} of {}", k + 1, settings.folds));
    const auto predicted = predict_rows(table, *f.regressor, held);
    progress.fitted();
    for (std::size_t j = 0; j < held.size(); ++j) {
      scatter.push_back(ScatterPoint{held[j], target, "cv", fold, predicted[j]});
    }
    for (ModeScores& m : scores.modes) {
      std::vector<double> a;
      std::vector<double> p;
      for (std::size_t j = 0; j < held.size(); ++j) {
        if (table.rows[held[j]].mode != m.mode) continue;
        a.push_back(table.values(target, {held[j]}).front());
        p.push_back(predicted[j].value);
      }
      const double r2 = r_squared_or_nan(a, p);
      if (std::isfinite(r2)) m.fold_r_squared.push_back(r2);
    }
  }
  for (ModeScores& m : scores.modes) {
    m.cv_r_squared_mean = m.fold_r_squared.empty() ? kNaN : statistics::mean(m.fold_r_squared);
    m.cv_r_squared_std =
        m.fold_r_squared.size() < 2 ? kNaN : statistics::standard_deviation(m.fold_r_squared);
  }

  // Test split: fitted on every non-test row.
  const auto train = select_rows(table, target, [&](std::size_t i) { return !splits.test[i]; });
  const Fitted model = fit_rows(table, registry, name, settings, target, train, "test split");
  scores.fit_time_s = model.fit_time_s;
  scores.description = model.regressor->description();
  scores.importances = model.regressor->feature_importance();
  const auto test = select_rows(table, target, [&](std::size_t i) { return splits.test[i]; });
  const auto test_predicted = predict_rows(table, *model.regressor, test);
  progress.fitted();
  for (std::size_t j = 0; j < test.size(); ++j) {
    scatter.push_back({test[j], target, "test", -1, test_predicted[j]});
  }
  for (ModeScores& m : scores.modes) {
    m.test = mode_metrics(table, target, test, test_predicted, m.mode);
  }

  // Held-out networks: fitted without any op that occurs in them.
  if (!settings.holdout_networks.empty()) {
    const auto kept = select_rows(table, target, [&](std::size_t i) { return !splits.holdout[i]; });
    const auto held = select_rows(table, target, [&](std::size_t i) { return splits.holdout[i]; });
    const Fitted f = fit_rows(table, registry, name, settings, target, kept,
                              "hold-out of " + join_with_commas(settings.holdout_networks));
    const auto predicted = predict_rows(table, *f.regressor, held);
    progress.fitted();
    for (std::size_t j = 0; j < held.size(); ++j) {
      scatter.push_back({held[j], target, "holdout", -1, predicted[j]});
    }
    for (ModeScores& m : scores.modes) {
      m.holdout = mode_metrics(table, target, held, predicted, m.mode);
    }
    if (target == Target::kTime) {
      scores.networks = score_networks(table, settings.holdout_networks, held, predicted);
    }
  }
  return scores;
}

}  // namespace

std::vector<int> assign_folds(const std::vector<std::string>& row_signatures, std::size_t folds,
                              std::uint64_t seed, SettingNames names) {
  const std::vector<std::string> order = shuffled_signatures(row_signatures, seed);
  const std::string given = setting_with_value(names, "folds", std::to_string(folds));
  if (folds < 2) throw InvalidInput(given + ": expected at least 2 folds");
  if (order.size() < folds) {
    throw InvalidInput(
        fmt::format("{}: only {} unique ops ({} rows) to split; need at least one op per fold",
                    given, order.size(), row_signatures.size()));
  }
  std::map<std::string, int> fold_of;
  for (std::size_t i = 0; i < order.size(); ++i) {
    fold_of[order[i]] = static_cast<int>(i % folds);
  }
  std::vector<int> out;
  out.reserve(row_signatures.size());
  for (const std::string& s : row_signatures) out.push_back(fold_of.at(s));
  return out;
}

SplitAssignment assign_splits(const TrainingTable& table, const EvaluationSettings& settings) {
  const SettingNames names = settings.names;
  if (!(settings.test_fraction >= 0 && settings.test_fraction < 1)) {
    throw InvalidInput(
        setting_with_value(names, "test_fraction", fmt::format("{:g}", settings.test_fraction)) +
        ": expected a share in [0, 1)");
  }
  const std::string folds_given =
      setting_with_value(names, "folds", std::to_string(settings.folds));
  if (settings.folds < 2) throw InvalidInput(folds_given + ": expected at least 2 folds");
  std::vector<std::string> row_signatures;
  for (const TrainingRow& row : table.rows) row_signatures.push_back(row.signature);
  // The seed's first stream picks the test ops; the folds use seed + 1 so that they do not
  // merely repeat the test order.
  const std::vector<std::string> order = shuffled_signatures(row_signatures, settings.seed);
  const auto test_count = static_cast<std::size_t>(
      std::llround(settings.test_fraction * static_cast<double>(order.size())));
  const std::set<std::string> test_ops(order.begin(),
                                       order.begin() + static_cast<std::ptrdiff_t>(test_count));

  SplitAssignment s;
  s.ops = order.size();
  s.test_ops = test_ops.size();
  std::vector<std::string> train_signatures;
  for (const TrainingRow& row : table.rows) {
    const bool test = test_ops.count(row.signature) != 0;
    s.test.push_back(test);
    if (!test) train_signatures.push_back(row.signature);
  }
  if (order.size() - test_ops.size() < settings.folds) {
    throw InvalidInput(fmt::format(
        "{}: the dataset {} has {} unique ops ({} rows); after the {:g} % test split "
        "{} ops ({} rows) are left for cross-validation, fewer than one op per fold",
        folds_given, table.dataset_path, order.size(), table.rows.size(),
        100 * settings.test_fraction, order.size() - test_ops.size(), train_signatures.size()));
  }
  const std::vector<int> folds =
      assign_folds(train_signatures, settings.folds, settings.seed + 1, names);
  std::size_t next = 0;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    s.fold.push_back(s.test[i] ? -1 : folds[next++]);
  }

  std::set<std::string> holdout_ops;
  for (const std::string& name : settings.holdout_networks) {
    bool found = false;
    for (const dataset::NetworkRecord& n : table.networks) {
      if (n.name != name) continue;
      found = true;
      for (const auto& [signature, count] : n.op_counts) holdout_ops.insert(signature);
    }
    if (!found) {
      std::vector<std::string> networks;
      for (const dataset::NetworkRecord& n : table.networks) networks.push_back(n.name);
      throw InvalidInput(
          fmt::format("{}: '{}' is not a network of {}; it has: {}",
                      setting_name(names, "holdout_networks"), name, table.dataset_path,
                      networks.empty() ? std::string("none") : join_with_commas(networks)));
    }
  }
  std::set<std::string> held_measured;
  std::size_t kept_rows = 0;
  for (const TrainingRow& row : table.rows) {
    const bool held = holdout_ops.count(row.signature) != 0;
    s.holdout.push_back(held);
    if (held) {
      held_measured.insert(row.signature);
    } else {
      ++kept_rows;
    }
  }
  s.holdout_ops = held_measured.size();
  if (!settings.holdout_networks.empty() && kept_rows == 0) {
    throw InvalidInput(fmt::format(
        "{}: every op of {} occurs in them; nothing is left to train on",
        setting_with_value(names, "holdout_networks", join_with_commas(settings.holdout_networks)),
        table.dataset_path));
  }
  if (!settings.holdout_networks.empty() && held_measured.empty()) {
    throw InvalidInput(fmt::format(
        "{}: none of their ops is measured in {}",
        setting_with_value(names, "holdout_networks", join_with_commas(settings.holdout_networks)),
        table.dataset_path));
  }
  return s;
}

NetworkSum sum_network(
    const dataset::NetworkRecord& network,
    const std::function<std::optional<regress::Prediction>(const std::string&)>& value_of) {
  NetworkSum sum;
  double variance = 0;
  for (const auto& [signature, count] : network.op_counts) {
    const std::optional<regress::Prediction> value = value_of(signature);
    if (!value) {
      sum.nodes_missing += count;
      continue;
    }
    const double n = static_cast<double>(count);
    sum.time_s += n * value->value;
    variance += n * n * value->stddev * value->stddev;
    ++sum.ops_summed;
  }
  sum.std_s = std::sqrt(variance);
  return sum;
}

double network_mape_percent(const std::vector<NetworkScore>& scores, const std::string& mode,
                            bool against_ops) {
  std::vector<double> actual;
  std::vector<double> predicted;
  for (const NetworkScore& s : scores) {
    if (!mode.empty() && s.mode != mode) continue;
    const double reference = against_ops ? s.measured_ops_time_s : s.measured_time_s.value_or(0);
    if (!(reference > 0)) continue;
    actual.push_back(reference);
    predicted.push_back(s.predicted.time_s);
  }
  if (actual.empty()) return kNaN;
  return statistics::mape_percent(actual, predicted);
}

PredictorEvaluation evaluate_predictor(const TrainingTable& table, const SplitAssignment& splits,
                                       const regress::RegressorRegistry& registry,
                                       const std::string& regressor,
                                       const EvaluationSettings& settings) {
  if (splits.test.size() != table.rows.size() || splits.fold.size() != table.rows.size() ||
      splits.holdout.size() != table.rows.size()) {
    throw InternalError("evaluate_predictor: split assignment of another table");
  }
  std::vector<Target> targets = {Target::kTime};
  if (!table.rows_with(Target::kPower).empty()) targets.push_back(Target::kPower);
  FitProgress progress(settings.progress, fit_count(table, splits, settings, targets));
  PredictorEvaluation e;
  e.regressor = regressor;
  e.targets.push_back(score_target(table, splits, registry, regressor, settings, Target::kTime,
                                   e.scatter, progress));
  e.description = e.targets.front().description;
  if (table.rows_with(Target::kPower).empty()) {
    e.notes.push_back(fmt::format(
        "{} has no power measurements: power is not evaluated (time only)", table.dataset_path));
  } else {
    e.targets.push_back(score_target(table, splits, registry, regressor, settings, Target::kPower,
                                     e.scatter, progress));
  }
  return e;
}

std::vector<ScatterRow> scatter_rows(const TrainingTable& table,
                                     const std::vector<PredictorEvaluation>& evaluations) {
  std::vector<ScatterRow> out;
  for (const PredictorEvaluation& e : evaluations) {
    for (const ScatterPoint& p : e.scatter) {
      const TrainingRow& r = table.rows.at(p.row);
      out.push_back({e.regressor, to_string(p.target), p.split, p.fold, r.signature, r.op_type,
                     r.mode, r.clock_mhz, r.dtype, table.values(p.target, {p.row}).front(),
                     p.predicted.value, p.predicted.stddev});
    }
  }
  return out;
}

std::string scatter_csv(const TrainingTable& table,
                        const std::vector<PredictorEvaluation>& evaluations) {
  std::string out =
      "predictor,target,split,fold,signature,op_type,mode,clock_mhz,dtype,measured,predicted,"
      "predicted_std\n";
  for (const ScatterRow& r : scatter_rows(table, evaluations)) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g}\n", csv::field(r.predictor),
                       r.target, r.split, r.fold, csv::field(r.signature), csv::field(r.op_type),
                       r.mode, r.clock_mhz, r.dtype, r.measured, r.predicted, r.predicted_std);
  }
  return out;
}

std::string features_csv(const TrainingTable& table, const SplitAssignment& splits) {
  std::string out = "row,signature,op_type,mode,clock_mhz,dtype,split,fold,holdout,time_s,power_w";
  for (const std::string& name : table.features.names) out += "," + csv::field(name);
  out += "\n";
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const TrainingRow& r = table.rows[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.17g},{}", i, csv::field(r.signature),
                       csv::field(r.op_type), r.mode, r.clock_mhz, r.dtype,
                       splits.test[i] ? "test" : "train", splits.fold[i], splits.holdout[i] ? 1 : 0,
                       r.time_s, r.power_w ? fmt::format("{:.17g}", *r.power_w) : std::string());
    for (const double v : table.features.row(i)) out += fmt::format(",{:.17g}", v);
    out += "\n";
  }
  return out;
}

}  // namespace nnergy::learn
