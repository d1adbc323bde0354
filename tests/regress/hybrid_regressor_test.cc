#include "nnergy/regress/hybrid_regressor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nnergy/core/error.h"

namespace nnergy::regress {
namespace {

// The device reaches 40 % of what the analytical model assumes: measured = 2.5 × analytical.
constexpr double kSlowdown = 2.5;
// Held-out ops 100× larger than any training op: the hybrid keeps this relative error ...
constexpr double kHybridTolerance = 0.05;
// ... while trees alone stay near the largest training time, off by more than this.
constexpr double kTreesAloneMinError = 0.5;

// Columns flop_count, analytical_time_s (= flops / 1e13 flop/s) and analytical_power_w.
features::FeatureMatrix ops(double min_flops, double max_flops, std::size_t rows) {
  features::FeatureMatrix x;
  x.names = {"flop_count", "analytical_time_s", "analytical_power_w"};
  for (std::size_t i = 0; i < rows; ++i) {
    const double flops =
        min_flops * std::pow(max_flops / min_flops, static_cast<double>(i) / (rows - 1));
    x.add_row(std::vector<double>{flops, flops / 1e13, 200 + 1e-8 * flops}, "Conv");
  }
  return x;
}

std::vector<double> measured_time(const features::FeatureMatrix& x) {
  std::vector<double> y;
  for (std::size_t i = 0; i < x.rows(); ++i) y.push_back(kSlowdown * x.row(i)[1]);
  return y;
}

FitOptions quick() {
  FitOptions options;
  options.extra = {{"rounds", 100}, {"eta", 0.2}};
  return options;
}

TEST(HybridRegressorTest, ExtrapolatesToLargerOpsWhereTreesCannot) {
  const features::FeatureMatrix train = ops(1e6, 1e9, 100);
  const features::FeatureMatrix large = ops(1e11, 1e12, 5);
  HybridRegressor hybrid;
  hybrid.fit(train, measured_time(train), quick());
  XgboostRegressor trees(XgboostRegressor::Kind::kBoost);
  trees.fit(train, measured_time(train), quick());

  const std::vector<double> truth = measured_time(large);
  const auto h = hybrid.predict(large);
  const auto t = trees.predict(large);
  for (std::size_t i = 0; i < truth.size(); ++i) {
    EXPECT_NEAR(h[i].value, truth[i], truth[i] * kHybridTolerance) << i;
    EXPECT_LT(t[i].value, truth[i] * (1 - kTreesAloneMinError)) << i;
  }
}

TEST(HybridRegressorTest, PowerTargetUsesTheAnalyticalPower) {
  const features::FeatureMatrix train = ops(1e6, 1e9, 50);
  std::vector<double> power;
  for (std::size_t i = 0; i < train.rows(); ++i) power.push_back(0.8 * train.row(i)[2]);
  HybridRegressor hybrid;
  FitOptions options = quick();
  options.extra["target"] = "power_w";
  hybrid.fit(train, power, options);
  EXPECT_EQ(hybrid.save()["settings"]["target"], "power_w");
  const auto p = hybrid.predict(train);
  for (std::size_t i = 0; i < power.size(); ++i) {
    EXPECT_NEAR(p[i].value, power[i], power[i] * kHybridTolerance) << i;
  }
}

TEST(HybridRegressorTest, NonPositiveAnalyticalEstimateIsInvalidInput) {
  features::FeatureMatrix train = ops(1e6, 1e9, 20);
  const std::vector<double> y = measured_time(train);
  train.values[5 * train.columns() + 1] = 0;
  EXPECT_THROW(HybridRegressor().fit(train, y, quick()), InvalidInput);
}

}  // namespace
}  // namespace nnergy::regress
