#include "nnergy/core/fit_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::core {
namespace {

constexpr double kTolerance = 1e-12;

// actual 1, 2, 4 against 1.05, 1.5, 4.2: relative errors 5 %, 25 %, 5 %.
const std::vector<double> kActual = {1.0, 2.0, 4.0};
const std::vector<double> kPredicted = {1.05, 1.5, 4.2};

TEST(FitMetrics, RmspeOfKnownVectors) {
  // 100 · √((0.05² + 0.25² + 0.05²) / 3) = 100 · √0.0225 = 15.
  EXPECT_NEAR(rmspe_percent(kActual, kPredicted), 15.0, kTolerance);
}

TEST(FitMetrics, AllMetricsOfKnownVectors) {
  const FitMetrics m = fit_metrics(kActual, kPredicted);
  EXPECT_EQ(m.count, 3u);
  EXPECT_NEAR(m.mape_percent, 35.0 / 3.0, kTolerance);
  EXPECT_NEAR(m.rmse, std::sqrt((0.0025 + 0.25 + 0.04) / 3), kTolerance);
  EXPECT_NEAR(m.rmspe_percent, 15.0, kTolerance);
  EXPECT_NEAR(m.within_10_percent, 2.0 / 3.0, kTolerance);
  // R² = 1 − 0.2925 / 4.6667 (mean 7/3, SS_tot = 16/9 + 1/9 + 25/9).
  EXPECT_NEAR(m.r_squared, 1 - 0.2925 / (42.0 / 9.0), kTolerance);
}

TEST(FitMetrics, PerfectPredictionsAndUndefinedRSquared) {
  const FitMetrics perfect = fit_metrics(kActual, kActual);
  EXPECT_DOUBLE_EQ(perfect.r_squared, 1.0);
  EXPECT_DOUBLE_EQ(perfect.rmspe_percent, 0.0);
  EXPECT_DOUBLE_EQ(perfect.within_10_percent, 1.0);
  const std::vector<double> one = {2.0};
  EXPECT_TRUE(std::isnan(fit_metrics(one, one).r_squared));
  EXPECT_TRUE(fit_metrics(one, one).to_json()["r_squared"].is_null());
}

TEST(FitMetrics, RejectsMismatchedOrNonPositiveInput) {
  const std::vector<double> two = {1.0, 2.0};
  EXPECT_THROW(fit_metrics(kActual, two), InvalidInput);
  EXPECT_THROW(fit_metrics({}, {}), InvalidInput);
  const std::vector<double> zero = {0.0, 1.0};
  EXPECT_THROW(rmspe_percent(zero, two), InvalidInput);
}

}  // namespace
}  // namespace nnergy::core
