#include "nnergy/archline/ols_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nnergy/core/error.h"

namespace nnergy::archline {
namespace {

constexpr double kQuantileTolerance = 1e-6;

TEST(StudentTQuantile, MatchesTables) {
  // Two-sided 95 % and 99 % critical values from standard t tables.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062047, kQuantileTolerance);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.30265273, kQuantileTolerance);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.57058184, kQuantileTolerance);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.04227246, kQuantileTolerance);
  EXPECT_NEAR(student_t_quantile(0.995, 10), 3.16927267, kQuantileTolerance);
  EXPECT_NEAR(student_t_quantile(0.9, 3), 1.63774435, kQuantileTolerance);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.95996398, 1e-5);  // → normal quantile
  EXPECT_NEAR(student_t_quantile(0.025, 5), -2.57058184, kQuantileTolerance);
  EXPECT_EQ(student_t_quantile(0.5, 4), 0.0);
}

TEST(StudentTQuantile, RejectsArgumentsOutsideTheDomain) {
  EXPECT_THROW(student_t_quantile(1.0, 5), InvalidInput);
  EXPECT_THROW(student_t_quantile(0.0, 5), InvalidInput);
  EXPECT_THROW(student_t_quantile(0.9, 0.5), InvalidInput);
}

TEST(FitOls, RecoversExactCoefficients) {
  Eigen::MatrixXd x(5, 2);
  Eigen::VectorXd y(5);
  for (int i = 0; i < 5; ++i) {
    x(i, 0) = 1e12 * (i + 1);          // wildly different scales, like W
    x(i, 1) = std::pow(i - 1.5, 2.0);  // and T
    y(i) = 3e-12 * x(i, 0) + 250 * x(i, 1);
  }
  const OlsFit fit = fit_ols(x, y, {"a", "b"}, "exact");
  EXPECT_NEAR(fit.coefficients(0), 3e-12, 3e-12 * 1e-10);
  EXPECT_NEAR(fit.coefficients(1), 250, 250 * 1e-10);
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
  EXPECT_EQ(fit.degrees_of_freedom, 3u);
}

TEST(FitOls, StandardErrorsMatchTheClosedFormOfSimpleRegression) {
  // y = a + b·x: se(b) = √(s²/Sxx), se(a) = √(s²·(1/n + x̄²/Sxx)), s² = SS_res/(n − 2).
  const std::vector<double> xs = {1, 2, 3, 4, 5, 6};
  const std::vector<double> ys = {2.1, 3.9, 6.2, 7.8, 10.1, 12.2};
  Eigen::MatrixXd x(6, 2);
  Eigen::VectorXd y(6);
  double x_mean = 0;
  double y_mean = 0;
  for (int i = 0; i < 6; ++i) {
    x(i, 0) = 1;
    x(i, 1) = xs[i];
    y(i) = ys[i];
    x_mean += xs[i] / 6;
    y_mean += ys[i] / 6;
  }
  double sxx = 0;
  double sxy = 0;
  for (int i = 0; i < 6; ++i) {
    sxx += (xs[i] - x_mean) * (xs[i] - x_mean);
    sxy += (xs[i] - x_mean) * (ys[i] - y_mean);
  }
  const double b = sxy / sxx;
  const double a = y_mean - b * x_mean;
  double ss_res = 0;
  for (int i = 0; i < 6; ++i) ss_res += std::pow(ys[i] - a - b * xs[i], 2);
  const double s2 = ss_res / 4;
  const OlsFit fit = fit_ols(x, y, {"a", "b"}, "line");
  constexpr double kTolerance = 1e-9;
  EXPECT_NEAR(fit.coefficients(0), a, kTolerance);
  EXPECT_NEAR(fit.coefficients(1), b, kTolerance);
  EXPECT_NEAR(fit.standard_errors(1), std::sqrt(s2 / sxx), kTolerance);
  EXPECT_NEAR(fit.standard_errors(0), std::sqrt(s2 * (1.0 / 6 + x_mean * x_mean / sxx)),
              kTolerance);
  const double t = 2.7764451;  // t(0.975, 4)
  EXPECT_NEAR(fit.ci_high(1) - fit.coefficients(1), t * std::sqrt(s2 / sxx), 1e-6);
  EXPECT_NEAR(fit.ci_low(1), b - t * std::sqrt(s2 / sxx), 1e-6);
}

TEST(FitOls, RejectsTooFewPoints) {
  Eigen::MatrixXd x(3, 3);
  x << 1, 2, 3, 4, 5, 7, 1, 0, 1;
  const Eigen::VectorXd y = Eigen::VectorXd::Ones(3);
  try {
    fit_ols(x, y, {"W", "Q", "T"}, "three points");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("at least 4 points"), std::string::npos) << e.what();
  }
}

TEST(FitOls, RejectsCollinearColumns) {
  Eigen::MatrixXd x(5, 2);
  Eigen::VectorXd y(5);
  for (int i = 0; i < 5; ++i) {
    x(i, 0) = i + 1;
    x(i, 1) = 8.0 * (i + 1);  // proportional: rank 1
    y(i) = i;
  }
  try {
    fit_ols(x, y, {"W", "Q"}, "one intensity");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("rank-deficient"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnergy::archline
