#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/fit_metrics.h"
#include "nnergy/core/progress.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/regress/regressor.h"

// Evaluation of learned predictors (issue 5 names it predict/evaluation; it lives here because it
// needs training tables and dataset networks, which predict/ must not depend on).
namespace nnergy::learn {

/// What to evaluate and how to split.
struct EvaluationSettings {
  std::size_t folds = 15;      ///< k of the k-fold cross-validation (seed 000 §6.2 uses 15)
  double test_fraction = 0.2;  ///< share of the unique ops kept out as the test split, [0, 1)
  /// Networks whose unique ops are all kept out of training for the network-level check.
  std::vector<std::string> holdout_networks;
  std::uint64_t seed = 1;  ///< shuffles the ops into splits, and seeds the regressors
  int threads = 0;         ///< FitOptions::threads
  nlohmann::json extra = nlohmann::json::object();  ///< FitOptions::extra
  /// Told the regressor fits evaluate_predictor has done, of all it will do (the same total for
  /// every regressor on one table and split); empty: not told.
  ProgressCallback progress;
  /// How messages name folds, test_fraction and holdout_networks (flags for the CLI).
  SettingNames names = SettingNames::kFlag;
};

/// Which split every row of a TrainingTable belongs to. Splits are by unique op signature: all
/// rows of one op (both modes, every clock and dtype) are in the same fold and the same split,
/// so that no op is seen in training and scored in testing (no leakage between its modes).
struct SplitAssignment {
  std::vector<bool> test;     ///< per row: in the test split
  std::vector<int> fold;      ///< per row: CV fold 0..k−1 of the other rows; −1 for test rows
  std::vector<bool> holdout;  ///< per row: the op occurs in a held-out network
  std::size_t ops = 0;        ///< unique ops in the table
  std::size_t test_ops = 0;
  std::size_t holdout_ops = 0;
};

/// Shuffles the distinct values of `row_signatures` with `seed` (Fisher–Yates on mt19937_64, the
/// same on every platform) and deals them round-robin into `folds` folds; returns each row's
/// fold. Rows with the same signature get the same fold. Throws InvalidInput when there are
/// fewer distinct signatures than folds or folds < 2.
std::vector<int> assign_folds(const std::vector<std::string>& row_signatures, std::size_t folds,
                              std::uint64_t seed, SettingNames names = SettingNames::kFlag);

/// The test split (the first test_fraction of the shuffled ops), the folds of the remaining ops
/// and the hold-out flags. Throws InvalidInput for a test fraction outside [0, 1), too few ops
/// for the folds asked (saying how many ops and rows there are), or a held-out network that is
/// not in the dataset (listing the dataset's networks).
SplitAssignment assign_splits(const TrainingTable& table, const EvaluationSettings& settings);

/// Scores of one target in one mode.
struct ModeScores {
  std::string mode;                         ///< "inference" or "training"
  std::vector<double> fold_r_squared;       ///< per fold where R² is defined (≥ 2 varying rows)
  double cv_r_squared_mean = 0;             ///< R̄² over the folds; NaN when no fold has one
  double cv_r_squared_std = 0;              ///< σ of R² over the folds; NaN with fewer than 2
  std::optional<core::FitMetrics> test;     ///< on the test split; absent when it has no such row
  std::optional<core::FitMetrics> holdout;  ///< on the ops of the held-out networks
};

/// Σ count × op time of one network: NeuralPower's T = Σ T_n (seed 004 Eq. 3).
struct NetworkSum {
  double time_s = 0;
  double std_s = 0;                ///< √Σ (count·σ)²: an op's occurrences fully correlated
  std::size_t ops_summed = 0;      ///< unique ops with a value
  std::int64_t nodes_missing = 0;  ///< occurrences of ops without a value (not summed)
};

/// Sums count × value over `network.op_counts`; `value_of(signature)` gives an op's value (with
/// its 1σ) or nothing when the op has none, and such ops are counted as missing.
NetworkSum sum_network(
    const dataset::NetworkRecord& network,
    const std::function<std::optional<regress::Prediction>(const std::string&)>& value_of);

/// One held-out network in one mode: predicted time against the measured network and against
/// the sum of its measured ops (the same ops are summed in both sums; ops without a
/// measurement, i.e. outside the whitelist, are in neither).
struct NetworkScore {
  std::string network;
  std::string mode;
  std::optional<double> measured_time_s;  ///< the whole-network measurement; absent if none
  double measured_ops_time_s = 0;         ///< Σ count × measured op time
  NetworkSum predicted;                   ///< Σ count × predicted op time
};

/// Everything measured for one target.
struct TargetScores {
  Target target = Target::kTime;
  std::size_t rows = 0;
  std::vector<ModeScores> modes;       ///< inference, training (those present)
  std::vector<NetworkScore> networks;  ///< held-out networks (time only)
  /// Feature importances of the model fitted on the non-test rows; empty when the model has none.
  std::vector<std::pair<std::string, double>> importances;
  double fit_time_s = 0;    ///< wall time of that fit, s
  std::string description;  ///< Regressor::description() of that fitted model
};

/// One out-of-sample prediction, for the scatter CSV.
struct ScatterPoint {
  std::size_t row = 0;  ///< index into TrainingTable::rows
  Target target = Target::kTime;
  std::string split;  ///< "cv" (out-of-fold), "test" or "holdout"
  int fold = -1;      ///< CV fold for "cv"
  regress::Prediction predicted;
};

/// The evaluation of one regressor on one table.
struct PredictorEvaluation {
  std::string regressor;
  std::string description;            ///< of the time model fitted on the non-test rows
  std::vector<TargetScores> targets;  ///< time, then power when the dataset has power
  std::vector<std::string> notes;     ///< e.g. that the dataset has no power measurements
  std::vector<ScatterPoint> scatter;
};

/// k-fold CV over the non-test ops, the test split, and (when networks are held out) a model
/// trained without any op of the held-out networks, scored on those ops and on the networks.
/// A target without measurements is skipped with a note. Throws InvalidInput from the registry
/// (unknown name) or from a regressor that cannot fit a fold.
PredictorEvaluation evaluate_predictor(const TrainingTable& table, const SplitAssignment& splits,
                                       const regress::RegressorRegistry& registry,
                                       const std::string& regressor,
                                       const EvaluationSettings& settings);

/// Mean absolute percentage error of the predicted network times against the measured networks
/// of `mode` ("" = all), in percent; NaN when there is none. `against_ops` compares with the sum
/// of the measured ops instead.
double network_mape_percent(const std::vector<NetworkScore>& scores, const std::string& mode,
                            bool against_ops);

/// One out-of-sample prediction with what identifies its op: a row of the scatter CSV and of the
/// HTML report's points.
struct ScatterRow {
  std::string predictor;  ///< regressor name
  std::string target;     ///< "time" or "power"
  std::string split;      ///< "cv", "test" or "holdout"
  int fold = -1;          ///< CV fold for "cv"
  std::string signature;
  std::string op_type;
  std::string mode;
  std::int64_t clock_mhz = 0;  ///< as stored: 0 = the device's default clock
  std::string dtype;
  double measured = 0;  ///< s (time) or W (power)
  double predicted = 0;
  double predicted_std = 0;  ///< 1σ; 0: unknown
};

/// Every predictor's scatter points, in order, joined with their rows of `table`.
std::vector<ScatterRow> scatter_rows(const TrainingTable& table,
                                     const std::vector<PredictorEvaluation>& evaluations);

/// CSV (no context lines; the caller adds them): predictor, target, split, fold, signature,
/// op_type, mode, clock_mhz, dtype, measured, predicted, predicted_std — one row per ScatterPoint
/// of every evaluation. `measured` and `predicted*` are in the target's unit (time_s: s,
/// power_w: W).
std::string scatter_csv(const TrainingTable& table,
                        const std::vector<PredictorEvaluation>& evaluations);

/// CSV (no context lines): row, signature, op_type, mode, clock_mhz, dtype, split ("train" or
/// "test"), fold, holdout (0/1), time_s, power_w (empty when absent), then every feature column
/// by its encoder name — the same features and splits the C++ evaluation uses, for an external
/// reference fit (tools/sklearn_reference.py).
std::string features_csv(const TrainingTable& table, const SplitAssignment& splits);

}  // namespace nnergy::learn
