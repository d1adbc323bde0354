#include "nnergy/learn/evaluation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "learn_fixture.h"
#include "nnergy/core/error.h"

namespace nnergy::learn {
namespace {

using ::testing::HasSubstr;
using testing::LearnTest;

// Test R² a 30-tree forest reaches on unseen ops of the synthetic dataset (it gives 0.92–0.99).
constexpr double kMinimumSyntheticTestRSquared = 0.8;

TEST(AssignFolds, KeepsAnOpsRowsTogetherAndFillsEveryFold) {
  // 12 ops with 1–3 rows each (modes, clocks).
  std::vector<std::string> rows;
  for (int op = 0; op < 12; ++op) {
    for (int r = 0; r <= op % 3; ++r) rows.push_back("op" + std::to_string(op));
  }
  const std::vector<int> folds = assign_folds(rows, 5, 7);
  ASSERT_EQ(folds.size(), rows.size());
  std::map<std::string, std::set<int>> folds_of_op;
  std::map<int, std::set<std::string>> ops_of_fold;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    folds_of_op[rows[i]].insert(folds[i]);
    ops_of_fold[folds[i]].insert(rows[i]);
  }
  for (const auto& [op, f] : folds_of_op) EXPECT_EQ(f.size(), 1u) << op << " split across folds";
  ASSERT_EQ(ops_of_fold.size(), 5u);
  for (const auto& [fold, ops] : ops_of_fold) {
    EXPECT_GE(fold, 0);
    EXPECT_LT(fold, 5);
    // Dealt round-robin: 12 ops into 5 folds gives 2 or 3 ops each.
    EXPECT_GE(ops.size(), 2u);
    EXPECT_LE(ops.size(), 3u);
  }
  EXPECT_EQ(assign_folds(rows, 5, 7), folds) << "same seed, same folds";
}

TEST(AssignFolds, TooFewOpsSaysHowMany) {
  const std::vector<std::string> rows = {"a", "a", "b", "c"};
  try {
    assign_folds(rows, 15, 1);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--folds 15"));
    EXPECT_THAT(e.what(), HasSubstr("3 unique ops (4 rows)"));
  }
  EXPECT_THROW(assign_folds(rows, 1, 1), InvalidInput);
}

TEST(SumNetwork, CountTimesValueWithCorrelatedOccurrences) {
  dataset::NetworkRecord network;
  network.op_counts = {{"a", 2}, {"b", 3}, {"c", 4}};
  const std::map<std::string, regress::Prediction> values = {{"a", {1.0, 0.1}}, {"b", {2.0, 0.2}}};
  const NetworkSum sum =
      sum_network(network, [&](const std::string& s) -> std::optional<regress::Prediction> {
        const auto it = values.find(s);
        if (it == values.end()) return std::nullopt;
        return it->second;
      });
  EXPECT_DOUBLE_EQ(sum.time_s, 2 * 1.0 + 3 * 2.0);
  // √((2·0.1)² + (3·0.2)²) = √0.40.
  EXPECT_NEAR(sum.std_s, std::sqrt(0.40), 1e-12);
  EXPECT_EQ(sum.ops_summed, 2u);
  EXPECT_EQ(sum.nodes_missing, 4);
}

TEST(NetworkMape, AgainstMeasuredAndAgainstOps) {
  NetworkScore a;
  a.network = "a";
  a.mode = "inference";
  a.measured_time_s = 2.0;
  a.measured_ops_time_s = 1.0;
  a.predicted.time_s = 1.5;
  NetworkScore b = a;
  b.mode = "training";
  b.measured_time_s.reset();
  const std::vector<NetworkScore> scores = {a, b};
  EXPECT_DOUBLE_EQ(network_mape_percent(scores, "inference", false), 25.0);
  EXPECT_DOUBLE_EQ(network_mape_percent(scores, "inference", true), 50.0);
  EXPECT_TRUE(std::isnan(network_mape_percent(scores, "training", false)));
  EXPECT_DOUBLE_EQ(network_mape_percent(scores, "", true), 50.0);
}

class EvaluationTest : public LearnTest {
 protected:
  void SetUp() override {
    LearnTest::SetUp();
    testing::copy_two_chains_dataset(file("d.sqlite"));
    table_ = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
    settings_.folds = 4;
    settings_.test_fraction = 0.25;
    settings_.seed = 3;
    settings_.extra = testing::small_forest();
  }
  TrainingTable table_;
  EvaluationSettings settings_;
};

TEST_F(EvaluationTest, SplitsByOpWithoutLeakage) {
  const SplitAssignment s = assign_splits(table_, settings_);
  EXPECT_EQ(s.ops, 55u);
  EXPECT_EQ(s.test_ops, 14u);  // 25 % of 55, rounded
  std::set<std::string> test_ops;
  std::set<std::string> train_ops;
  for (std::size_t i = 0; i < table_.rows.size(); ++i) {
    (s.test[i] ? test_ops : train_ops).insert(table_.rows[i].signature);
    EXPECT_EQ(s.fold[i] < 0, static_cast<bool>(s.test[i]));
  }
  EXPECT_EQ(test_ops.size(), 14u);
  for (const std::string& op : test_ops) EXPECT_EQ(train_ops.count(op), 0u) << op;
}

TEST_F(EvaluationTest, HoldoutFlagsEveryOpOfTheNetworkIncludingShared) {
  settings_.holdout_networks = {"chain_b"};
  const SplitAssignment s = assign_splits(table_, settings_);
  EXPECT_EQ(s.holdout_ops, 30u);  // chain_b's ops, two of them shared with chain_a
  std::size_t held_rows = 0;
  for (std::size_t i = 0; i < table_.rows.size(); ++i) held_rows += s.holdout[i] ? 1 : 0;
  EXPECT_EQ(held_rows, 60u);
}

TEST_F(EvaluationTest, BadSplitsNameTheFlag) {
  settings_.holdout_networks = {"resnet50"};
  try {
    assign_splits(table_, settings_);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--holdout-networks"));
    EXPECT_THAT(e.what(), HasSubstr("'resnet50'"));
    EXPECT_THAT(e.what(), HasSubstr("chain_a"));
  }
  settings_.holdout_networks.clear();
  settings_.folds = 50;  // 41 ops are left after the test split
  try {
    assign_splits(table_, settings_);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--folds 50"));
    EXPECT_THAT(e.what(), HasSubstr("55 unique ops (110 rows)"));
    EXPECT_THAT(e.what(), HasSubstr("41 ops"));
  }
  settings_.folds = 4;
  settings_.test_fraction = 1.0;
  EXPECT_THROW(assign_splits(table_, settings_), InvalidInput);
  // A caller that names settings as keywords reads them so.
  settings_.names = SettingNames::kKeyword;
  for (const auto& [folds, fraction, expected] :
       {std::tuple{4, 1.0, "test_fraction=1: expected a share in [0, 1)"},
        std::tuple{50, 0.2, "folds=50: the dataset"}}) {
    settings_.folds = static_cast<std::size_t>(folds);
    settings_.test_fraction = fraction;
    try {
      assign_splits(table_, settings_);
      ADD_FAILURE() << "expected InvalidInput for " << expected;
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr(expected));
    }
  }
}

TEST_F(EvaluationTest, ForestOnSyntheticTimesScoresWellAndSumsHeldOutNetworks) {
  settings_.holdout_networks = {"chain_b"};
  const SplitAssignment s = assign_splits(table_, settings_);
  const regress::RegressorRegistry registry = testing::standard_registry();
  const PredictorEvaluation e = evaluate_predictor(table_, s, registry, "forest", settings_);
  ASSERT_EQ(e.targets.size(), 1u) << "no power in the dataset: time only";
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_THAT(e.notes.front(), HasSubstr("no power measurements"));
  const TargetScores& time = e.targets.front();
  ASSERT_EQ(time.modes.size(), 2u);
  for (const ModeScores& m : time.modes) {
    SCOPED_TRACE(m.mode);
    EXPECT_EQ(m.fold_r_squared.size(), 4u);
    ASSERT_TRUE(m.test.has_value());
    EXPECT_EQ(m.test->count, 14u);
    // The synthetic time is smooth in the flop count: a forest recovers it on unseen ops.
    EXPECT_GT(m.test->r_squared, kMinimumSyntheticTestRSquared);
    EXPECT_TRUE(std::isfinite(m.cv_r_squared_mean));
    ASSERT_TRUE(m.holdout.has_value());
    EXPECT_EQ(m.holdout->count, 30u);
  }
  EXPECT_FALSE(time.importances.empty());

  // The held-out chain: one score per mode, the measured network being 1.1 × the sum of its
  // ops (how the synthetic dataset was written).
  ASSERT_EQ(time.networks.size(), 2u);
  for (const NetworkScore& n : time.networks) {
    EXPECT_EQ(n.network, "chain_b");
    ASSERT_TRUE(n.measured_time_s.has_value());
    EXPECT_NEAR(*n.measured_time_s, 1.1 * n.measured_ops_time_s, 1e-12 * *n.measured_time_s);
    EXPECT_EQ(n.predicted.ops_summed, 30u);
    EXPECT_EQ(n.predicted.nodes_missing, 0);
    EXPECT_GT(n.predicted.time_s, 0);
  }

  // Scatter: every row once out-of-fold or in the test split, and every held-out row once.
  std::map<std::string, std::size_t> per_split;
  for (const ScatterPoint& p : e.scatter) ++per_split[p.split];
  EXPECT_EQ(per_split["cv"] + per_split["test"], 110u);
  EXPECT_EQ(per_split["holdout"], 60u);
  const std::string csv = scatter_csv(table_, {e});
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), 1u + 170u);
}

TEST_F(EvaluationTest, FeaturesCsvCarriesEveryRowFeatureAndSplit) {
  const SplitAssignment s = assign_splits(table_, settings_);
  const std::string csv = features_csv(table_, s);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_THAT(header, ::testing::StartsWith("row,signature,op_type,mode,clock_mhz,dtype,split,fold,"
                                            "holdout,time_s,power_w,"));
  EXPECT_THAT(header, HasSubstr(",flop_count"));
  EXPECT_EQ(static_cast<std::size_t>(std::count(header.begin(), header.end(), ',')),
            10 + table_.features.columns());
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), 111u);
  EXPECT_THAT(csv, HasSubstr(",test,-1,0,"));
}

TEST_F(EvaluationTest, ProgressCountsEveryFitFromZeroToTheTotal) {
  settings_.holdout_networks = {"chain_b"};
  settings_.extra = nlohmann::json::object();  // the analytical regressor takes no settings
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  settings_.progress = [&](std::size_t done, std::size_t total) {
    calls.emplace_back(done, total);
  };
  const SplitAssignment splits = assign_splits(table_, settings_);
  evaluate_predictor(table_, splits, testing::standard_registry(), "analytical", settings_);
  // Time only (no power in the dataset): 4 folds, the test split and the hold-out.
  ASSERT_EQ(calls.size(), 7u);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i], std::make_pair(i, std::size_t{6}));
  }
}

}  // namespace
}  // namespace nnergy::learn
