#include "nnergy/regress/resnet_regressor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"
#include "nnergy/regress/torch_regressors.h"

namespace nnergy::regress {
namespace {

/// A short training is enough to explain this share of the variance of a smooth function.
constexpr double kMinR2 = 0.9;

/// Small and fast: a test fits in well under a second.
ResnetRegressor::Settings small_settings() {
  ResnetRegressor::Settings s;
  s.width = 16;
  s.epochs = 40;
  s.batch_size = 32;
  s.learning_rate = 5e-3;
  s.lr_decay_period_epochs = 10;
  return s;
}

struct Data {
  features::FeatureMatrix x;
  std::vector<double> y;
};

/// y = 2·a·b + c² + 1 (a, b, c in [0.5, 3]) plus an unrelated column: smooth, positive.
Data smooth(int rows, std::uint64_t seed) {
  Data d;
  d.x.names = {"a", "b", "c", "unrelated"};
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.5, 3);
  for (int i = 0; i < rows; ++i) {
    const double a = uniform(random);
    const double b = uniform(random);
    const double c = uniform(random);
    d.x.add_row(std::vector<double>{a, b, c, uniform(random)}, "Op");
    d.y.push_back(2 * a * b + c * c + 1);
  }
  return d;
}

const ResnetRegressor& fitted_smooth() {
  static const auto* regressor = [] {
    auto* r = new ResnetRegressor(small_settings());
    const Data train = smooth(240, 1);
    r->fit(train.x, train.y, FitOptions{});
    return r;
  }();
  return *regressor;
}

std::vector<double> values(const std::vector<Prediction>& predictions) {
  std::vector<double> out;
  for (const Prediction& p : predictions) out.push_back(p.value);
  return out;
}

TEST(ResnetRegressor, FitsASmoothFunction) {
  const Data test = smooth(80, 2);
  const std::vector<Prediction> predicted = fitted_smooth().predict(test.x);
  EXPECT_GE(statistics::r_squared(test.y, values(predicted)), kMinR2);
  for (const Prediction& p : predicted) {
    EXPECT_GT(p.stddev, 0);  // Monte-Carlo dropout spread
    EXPECT_LT(p.stddev, p.value);
  }
}

TEST(ResnetRegressor, SaveLoadGivesIdenticalPredictions) {
  const nlohmann::json saved = fitted_smooth().save();
  EXPECT_EQ(saved.at("regressor"), "resnet");
  EXPECT_EQ(saved.at("settings").at("epochs"), 40);
  EXPECT_TRUE(saved.at("tensors").contains("block6.second.weight"));
  EXPECT_EQ(saved.at("tensors").at("head1.weight").at("shape"), nlohmann::json::array({16, 1, 3}));

  ResnetRegressor loaded;
  loaded.load(nlohmann::json::parse(saved.dump()));
  EXPECT_EQ(loaded.settings().width, 16);
  const Data test = smooth(50, 3);
  const auto expected = fitted_smooth().predict(test.x);
  const auto actual = loaded.predict(test.x);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual[i].value, expected[i].value) << i;
    EXPECT_EQ(actual[i].stddev, expected[i].stddev) << i;
  }
}

TEST(ResnetRegressor, PredictionOfARowDoesNotDependOnTheOtherRows) {
  const Data test = smooth(10, 4);
  const auto together = fitted_smooth().predict(test.x);
  const std::vector<std::size_t> one = {7};
  const auto alone = fitted_smooth().predict(test.x.select(one));
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_FLOAT_EQ(alone[0].value, together[7].value);
  EXPECT_FLOAT_EQ(alone[0].stddev, together[7].stddev);
}

TEST(ResnetRegressor, BoxCoxOnPositiveColumnsOnly) {
  // Box-Cox λ by maximum likelihood: log-normal data is normal after λ = 0 (the log), squares
  // of normal data after λ = 0.5 (the square root); the grid step is 0.01, sampling wider.
  constexpr double kLambdaTolerance = 0.15;
  Data d;
  d.x.names = {"lognormal", "square", "signed", "constant"};
  std::mt19937_64 random(9);
  std::normal_distribution<double> normal(0, 1);
  for (int i = 0; i < 400; ++i) {
    const double s = 5 + normal(random);
    d.x.add_row(std::vector<double>{std::exp(normal(random)), s * s, normal(random), 4}, "Op");
    d.y.push_back(1 + i % 7);
  }
  ResnetRegressor::Settings s = small_settings();
  s.epochs = 1;
  s.width = 4;
  ResnetRegressor regressor(s);
  regressor.fit(d.x, d.y, FitOptions{});
  const auto& t = regressor.column_transforms();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_TRUE(t[0].box_cox);
  EXPECT_NEAR(t[0].lambda, 0, kLambdaTolerance);
  EXPECT_TRUE(t[1].box_cox);
  EXPECT_NEAR(t[1].lambda, 0.5, kLambdaTolerance);
  EXPECT_FALSE(t[2].box_cox);  // has negative values: z-score only
  EXPECT_NEAR(t[2].stddev, 1, 0.1);
  EXPECT_EQ(t[3].stddev, 0);  // constant: left out of the input sequence
  EXPECT_EQ(regressor.save().at("tensors").at("fc1.weight").at("shape"),
            nlohmann::json::array({4, 3 * 1}));  // 3 varying columns × W/4 channels
}

TEST(ResnetRegressor, L2PenaltyShrinksTheNetworkToAConstant) {
  const Data train = smooth(64, 5);
  const auto spread = [&](double l2) {
    ResnetRegressor::Settings s = small_settings();
    s.epochs = 30;
    s.l2 = l2;
    ResnetRegressor regressor(s);
    regressor.fit(train.x, train.y, FitOptions{});
    const std::vector<double> v = values(regressor.predict(train.x));
    const auto [low, high] = std::minmax_element(v.begin(), v.end());
    return *high / *low;
  };
  EXPECT_GT(spread(0), 3.0);   // the targets span 3.3 to 28
  EXPECT_LT(spread(1), 1.05);  // the weights decay towards 0, the output towards a constant
}

TEST(ResnetRegressor, BadSettingsAreInvalidInput) {
  const Data train = smooth(20, 6);
  const auto fit_with = [&](nlohmann::json extra) {
    FitOptions options;
    options.extra = std::move(extra);
    ResnetRegressor regressor(small_settings());
    regressor.fit(train.x, train.y, options);
  };
  EXPECT_THROW(fit_with({{"epochs", 0}}), InvalidInput);
  EXPECT_THROW(fit_with({{"epochs", "ten"}}), InvalidInput);
  EXPECT_THROW(fit_with({{"epoch", 10}}), InvalidInput);  // misspelt
  EXPECT_THROW(fit_with({{"width", 30}}), InvalidInput);  // not a multiple of 4
  EXPECT_THROW(fit_with({{"learning_rate", -1e-3}}), InvalidInput);
  EXPECT_THROW(fit_with({{"dropout", 1.0}}), InvalidInput);
  EXPECT_THROW(fit_with({{"mc_samples", 1}}), InvalidInput);
  EXPECT_THROW(fit_with({{"lr_decay_factor", 1.5}}), InvalidInput);
  EXPECT_THROW(fit_with({{"target", "energy_j"}}), InvalidInput);
  EXPECT_THROW(fit_with(nlohmann::json::array()), InvalidInput);

  features::FeatureMatrix constant;
  constant.names = {"k"};
  for (int i = 0; i < 10; ++i) constant.add_row(std::vector<double>{1}, "Op");
  EXPECT_THROW(ResnetRegressor().fit(constant, std::vector<double>(10, 1.0), FitOptions{}),
               InvalidInput);
  EXPECT_THROW(ResnetRegressor().predict(train.x), InternalError);

  nlohmann::json broken = fitted_smooth().save();
  broken["tensors"]["fc2.weight"]["shape"] = {3, 3};
  EXPECT_THROW(ResnetRegressor().load(broken), InvalidInput);
  nlohmann::json missing = fitted_smooth().save();
  missing["tensors"].erase("output.bias");
  EXPECT_THROW(ResnetRegressor().load(missing), InvalidInput);
}

TEST(ResnetRegressor, RegisteredWithTheSeedSettings) {
  RegressorRegistry registry;
  register_torch_regressors(registry);
  ASSERT_TRUE(registry.contains("resnet"));
  const auto regressor = registry.create("resnet");
  EXPECT_EQ(regressor->name(), "resnet");
  const auto& s = dynamic_cast<const ResnetRegressor&>(*regressor).settings();
  // seed 002 §3 and Algorithm 1: 128 filters, dropout 0.2, 200 epochs, batch 128, γ 0.5, η 40
  EXPECT_EQ(s.width, 128);
  EXPECT_EQ(s.dropout, 0.2);
  EXPECT_EQ(s.epochs, 200);
  EXPECT_EQ(s.batch_size, 128);
  EXPECT_EQ(s.lr_decay_factor, 0.5);
  EXPECT_EQ(s.lr_decay_period_epochs, 40);
}

}  // namespace
}  // namespace nnergy::regress
