#include "nnergy/regress/xgboost_regressor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nnergy/core/base64.h"
#include "nnergy/core/error.h"

namespace nnergy::regress {
namespace {

using ::testing::HasSubstr;
using Kind = XgboostRegressor::Kind;

// A step recovered by trees: relative error of the level on either side.
constexpr double kStepTolerance = 0.05;
// Noise-free rows far from the step: the trees agree to within this relative spread.
constexpr double kAgreementTolerance = 0.01;

constexpr double kLowLevel = 1e-5;   // s, e.g. a small elementwise op
constexpr double kHighLevel = 1e-2;  // s, a large convolution: three orders above

// Column "a" in [0, 1) drives the step at 0.5; column "b" is noise the model should ignore.
// `noise` is the σ of a multiplicative log-normal noise on y.
void step_data(std::size_t rows, double noise, std::uint64_t seed, features::FeatureMatrix& x,
               std::vector<double>& y) {
  x = {};
  x.names = {"a", "b"};
  y.clear();
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> gauss(0, 1);
  for (std::size_t i = 0; i < rows; ++i) {
    const double a = (static_cast<double>(i) + 0.5) / static_cast<double>(rows);
    x.add_row(std::vector<double>{a, unit(random)}, "Step");
    y.push_back((a < 0.5 ? kLowLevel : kHighLevel) * std::exp(noise * gauss(random)));
  }
}

features::FeatureMatrix probe(std::initializer_list<double> a) {
  features::FeatureMatrix x;
  x.names = {"a", "b"};
  for (const double value : a) x.add_row(std::vector<double>{value, 0.5}, "Step");
  return x;
}

// Small models keep the test fast; the defaults are exercised by the conformance suite.
FitOptions small(Kind kind) {
  FitOptions options;
  options.extra = kind == Kind::kForest ? nlohmann::json{{"num_parallel_tree", 50}}
                                        : nlohmann::json{{"rounds", 100}, {"eta", 0.2}};
  return options;
}

class XgboostKindTest : public ::testing::TestWithParam<Kind> {};

TEST_P(XgboostKindTest, RecoversAStepAcrossThreeOrdersOfMagnitude) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(200, 0, 1, x, y);
  XgboostRegressor regressor(GetParam());
  regressor.fit(x, y, small(GetParam()));
  const auto p = regressor.predict(probe({0.1, 0.3, 0.7, 0.9}));
  ASSERT_EQ(p.size(), 4U);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(p[i].value, kLowLevel, kLowLevel * kStepTolerance) << i;
    EXPECT_NEAR(p[i + 2].value, kHighLevel, kHighLevel * kStepTolerance) << i + 2;
  }
}

TEST_P(XgboostKindTest, ImportanceGoesToTheColumnThatMatters) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(200, 0.05, 2, x, y);
  XgboostRegressor regressor(GetParam());
  regressor.fit(x, y, small(GetParam()));
  const auto importance = regressor.feature_importance();
  ASSERT_FALSE(importance.empty());
  EXPECT_EQ(importance.front().first, "a");
  EXPECT_GT(importance.front().second, 0.9);
  double total = 0;
  for (const auto& [name, share] : importance) total += share;
  EXPECT_NEAR(total, 1, 1e-9);
}

TEST_P(XgboostKindTest, SettingsAreAppliedSavedAndChecked) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(50, 0, 3, x, y);
  XgboostRegressor regressor(GetParam());
  FitOptions options = small(GetParam());
  options.extra["max_depth"] = 3;
  options.extra["target"] = "power_w";
  regressor.fit(x, y, options);
  const nlohmann::json saved = regressor.save();
  EXPECT_EQ(saved["settings"]["max_depth"], 3);
  EXPECT_EQ(saved["settings"]["target"], "power_w");
  ASSERT_TRUE(saved["xgboost_model_ubj_base64"].is_string());
  // UBJSON of a JSON object starts with '{'.
  const auto ubj = base64::decode(saved["xgboost_model_ubj_base64"].get<std::string>());
  ASSERT_TRUE(ubj.has_value());
  EXPECT_EQ(ubj->front(), '{');
  if (GetParam() == Kind::kForest) {
    EXPECT_EQ(saved["settings"]["num_parallel_tree"], 50);
    EXPECT_EQ(saved["tree_leaf_values"].size(), 50U);
  } else {
    EXPECT_EQ(saved["settings"]["rounds"], 100);
    EXPECT_EQ(saved["bagged_models_ubj_base64"].size(), 5U);
  }

  XgboostRegressor other(GetParam());
  FitOptions typo;
  typo.extra = {{"max_dept", 3}};
  try {
    other.fit(x, y, typo);
    ADD_FAILURE() << "no InvalidInput for an unknown setting";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown setting 'max_dept'"));
  }
  FitOptions range;
  range.extra = {{"subsample", 1.5}};
  EXPECT_THROW(other.fit(x, y, range), InvalidInput);
  FitOptions target;
  target.extra = {{"target", "energy_j"}};
  EXPECT_THROW(other.fit(x, y, target), InvalidInput);
}

TEST_P(XgboostKindTest, ACorruptModelIsInvalidInput) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(50, 0, 4, x, y);
  XgboostRegressor regressor(GetParam());
  regressor.fit(x, y, small(GetParam()));
  const nlohmann::json saved = regressor.save();

  const std::string field = "xgboost_model_ubj_base64";
  const std::string ubj = *base64::decode(saved[field].get<std::string>());
  nlohmann::json truncated = saved;
  truncated[field] = base64::encode(ubj.substr(0, ubj.size() / 2));
  EXPECT_THROW(XgboostRegressor(GetParam()).load(truncated), InvalidInput);
  nlohmann::json not_base64 = saved;
  not_base64[field] = "not base64!";
  EXPECT_THROW(XgboostRegressor(GetParam()).load(not_base64), InvalidInput);
  nlohmann::json not_string = saved;
  not_string[field] = 3;
  EXPECT_THROW(XgboostRegressor(GetParam()).load(not_string), InvalidInput);
  if (GetParam() == Kind::kForest) {
    // Leaf values that do not belong to the model are caught when predicting.
    nlohmann::json other_leaves = saved;
    for (auto& tree : other_leaves["tree_leaf_values"]) {
      for (auto& value : tree) value = value.get<double>() + 1;
    }
    XgboostRegressor mismatched(GetParam());
    mismatched.load(other_leaves);
    EXPECT_THROW(mismatched.predict(x), InvalidInput);
    nlohmann::json fewer_trees = saved;
    fewer_trees["tree_leaf_values"].erase(0);
    EXPECT_THROW(XgboostRegressor(GetParam()).load(fewer_trees), InvalidInput);
  }

  // Without its digest (files written before digests), malformed UBJSON never reaches XGBoost,
  // whose reader goes past the end of such a buffer (fuzz/model_file found it).
  nlohmann::json undigested = saved;
  undigested.erase("xgboost_model_fnv1a64");
  XgboostRegressor(GetParam()).load(undigested);  // the intact model still loads
  auto expect_malformed = [&](const std::string& bytes, const std::string& why) {
    nlohmann::json bad = undigested;
    bad[field] = base64::encode(bytes);
    try {
      XgboostRegressor(GetParam()).load(bad);
      ADD_FAILURE() << "loaded malformed UBJSON: " << why;
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("is not well-formed UBJSON")) << why;
    }
  };
  expect_malformed(ubj.substr(0, ubj.size() / 2), "truncated");
  // An optimized array announcing 2^62 null elements, none of which has a byte.
  expect_malformed(std::string("[$Z#L") + std::string("\x40\0\0\0\0\0\0\0", 8), "2^62 nulls");
  expect_malformed(std::string("[#i\x05") + "i\x01", "five elements announced, one present");
  expect_malformed(ubj + "Z", "a second value after the model");
  // Arrays nested 100,000 deep: nlohmann's UBJSON reader recursed once per level and overflowed
  // the stack (SIGSEGV) before the walk refused them.
  expect_malformed(std::string(100000, '['), "arrays nested 100,000 deep");

  // Well-formed UBJSON whose trees XGBoost 1.7 would index out of bounds (a parent past the last
  // node made RegTree::LoadModel read outside the tree; fuzz/model_file found it).
  const nlohmann::json model = nlohmann::json::from_ubjson(ubj);
  auto expect_inconsistent = [&](const std::function<void(nlohmann::json&)>& edit,
                                 const std::string& why) {
    nlohmann::json changed = model;
    nlohmann::json* tree = &changed["learner"]["gradient_booster"]["model"]["trees"][0];
    edit(*tree);
    nlohmann::json bad = undigested;
    bad[field] = base64::encode([&] {
      const std::vector<std::uint8_t> v = nlohmann::json::to_ubjson(changed);
      return std::string(v.begin(), v.end());
    }());
    try {
      XgboostRegressor(GetParam()).load(bad);
      ADD_FAILURE() << "loaded an inconsistent tree: " << why;
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("is not a consistent XGBoost model")) << why;
    }
  };
  ASSERT_GE(model["learner"]["gradient_booster"]["model"]["trees"][0]["parents"].size(), 3U);
  expect_inconsistent([](nlohmann::json& t) { t["parents"][2] = 524290; }, "parent past the end");
  expect_inconsistent([](nlohmann::json& t) { t["left_children"][0] = 1000; }, "child past end");
  expect_inconsistent([](nlohmann::json& t) { t["tree_param"]["num_nodes"] = "1000"; },
                      "node count above the arrays");
  expect_inconsistent([](nlohmann::json& t) { t["split_indices"][0] = 1000; }, "feature 1000");
  expect_inconsistent([](nlohmann::json& t) { t["categories"] = {1}; }, "categorical split");

  nlohmann::json more_names = saved;
  more_names["feature_names"].push_back("c");
  EXPECT_THROW(XgboostRegressor(GetParam()).load(more_names), InvalidInput);

  nlohmann::json fewer_settings = saved;
  fewer_settings["settings"].erase("max_depth");
  EXPECT_THROW(XgboostRegressor(GetParam()).load(fewer_settings), InvalidInput);

  // A forest file is not a boost model and the other way round.
  const Kind other = GetParam() == Kind::kForest ? Kind::kBoost : Kind::kForest;
  EXPECT_THROW(XgboostRegressor(other).load(saved), InvalidInput);
}

TEST_P(XgboostKindTest, UncertaintyGrowsWithNoise) {
  features::FeatureMatrix x;
  std::vector<double> y;
  XgboostRegressor quiet(GetParam());
  step_data(200, 0.01, 6, x, y);
  quiet.fit(x, y, small(GetParam()));
  XgboostRegressor noisy(GetParam());
  step_data(200, 0.3, 6, x, y);
  noisy.fit(x, y, small(GetParam()));
  const auto q = quiet.predict(probe({0.25, 0.75}));
  const auto n = noisy.predict(probe({0.25, 0.75}));
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_GT(q[i].stddev, 0) << i;
    EXPECT_GT(n[i].stddev / n[i].value, 3 * q[i].stddev / q[i].value) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, XgboostKindTest, ::testing::Values(Kind::kForest, Kind::kBoost),
                         [](const ::testing::TestParamInfo<Kind>& param_info) {
                           return param_info.param == Kind::kForest ? "forest" : "boost";
                         });

TEST(XgboostRegressorTest, ForestTreesAgreeOnNoiseFreeRows) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(200, 0, 5, x, y);
  XgboostRegressor forest(Kind::kForest);
  forest.fit(x, y, small(Kind::kForest));
  for (const Prediction& p : forest.predict(probe({0.1, 0.9}))) {
    EXPECT_LT(p.stddev, p.value * kAgreementTolerance);
  }
}

TEST(XgboostRegressorTest, NoBagsMeansNoUncertainty) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(100, 0.3, 7, x, y);
  XgboostRegressor boost(Kind::kBoost);
  FitOptions options = small(Kind::kBoost);
  options.extra["uncertainty_bags"] = 0;
  boost.fit(x, y, options);
  EXPECT_EQ(boost.predict(probe({0.25}))[0].stddev, 0);
  options.extra["uncertainty_bags"] = 1;
  EXPECT_THROW(XgboostRegressor(Kind::kBoost).fit(x, y, options), InvalidInput);
}

TEST(XgboostRegressorTest, OtherSeedOtherForest) {
  features::FeatureMatrix x;
  std::vector<double> y;
  step_data(100, 0.3, 8, x, y);
  XgboostRegressor first(Kind::kForest);
  XgboostRegressor second(Kind::kForest);
  FitOptions options = small(Kind::kForest);
  first.fit(x, y, options);
  options.seed = 2;
  second.fit(x, y, options);
  EXPECT_NE(first.predict(probe({0.3}))[0].value, second.predict(probe({0.3}))[0].value);
}

}  // namespace
}  // namespace nnergy::regress
