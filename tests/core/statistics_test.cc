#include "nnergy/core/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::statistics {
namespace {

// Every expected value below is computed by hand from the formula; the tolerance only absorbs
// floating-point rounding.
constexpr double kRounding = 1e-12;

// Σ xᵢ = 40, Σ (xᵢ − 5)² = 9+1+1+1+0+0+4+16 = 32.
const std::vector<double> kEight = {2, 4, 4, 4, 5, 5, 7, 9};

// A steady 250 W load whose first reading is still at 50 W (the startup transient of seed 000
// Fig. 4.3). x̄ = 5050/21, deviations 200/21 (×20) and −4000/21, so
// σ² = (20·200² + 4000²)/(21²·20) = 840000/441 and 3σ ≈ 130.9 W: 50 W lies 190.5 W below the
// mean and is dropped, 250 W lies 9.5 W above it and is kept.
std::vector<double> startup_transient() {
  std::vector<double> watts(21, 250.0);
  watts[0] = 50.0;
  return watts;
}

TEST(Statistics, MeanAndSampleStandardDeviation) {
  EXPECT_NEAR(mean(kEight), 5.0, kRounding);
  EXPECT_NEAR(standard_deviation(kEight), std::sqrt(32.0 / 7.0), kRounding);
  EXPECT_NEAR(mean(std::vector<double>{250.0}), 250.0, kRounding);
  EXPECT_NEAR(standard_deviation(std::vector<double>{1.0, 3.0}), std::sqrt(2.0), kRounding);
  EXPECT_EQ(standard_deviation(std::vector<double>(5, 250.0)), 0.0);
}

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_THROW(median(std::vector<double>{}), InvalidInput);
}

TEST(Statistics, MeanAndSigmaRejectTooFewValues) {
  EXPECT_THROW(mean(std::vector<double>{}), InvalidInput);
  EXPECT_THROW(standard_deviation(std::vector<double>{1.0}), InvalidInput);
}

TEST(Statistics, StandardDeviationOfTransientMatchesHandComputation) {
  EXPECT_NEAR(mean(startup_transient()), 5050.0 / 21.0, kRounding);
  EXPECT_NEAR(standard_deviation(startup_transient()), std::sqrt(840000.0 / 441.0), kRounding);
}

TEST(Statistics, SigmaFilterDropsTheStartupTransient) {
  const std::vector<std::size_t> kept = sigma_filter(startup_transient(), 3.0);
  ASSERT_EQ(kept.size(), 20u);
  for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i], i + 1);
}

TEST(Statistics, SigmaFilterIsOnePass) {
  // 50, 150 and 19 × 250: x̄ = 4950/21 ≈ 235.7, σ ≈ 47.8, 3σ ≈ 143.4. 50 W (185.7 below) goes,
  // 150 W (85.7 below) stays even though it would go in a second pass over the rest.
  std::vector<double> watts(21, 250.0);
  watts[0] = 50.0;
  watts[1] = 150.0;
  const std::vector<std::size_t> kept = sigma_filter(watts, 3.0);
  ASSERT_EQ(kept.size(), 20u);
  EXPECT_EQ(kept.front(), 1u);
}

TEST(Statistics, SigmaFilterWithSmallerK) {
  // x̄ = 5, σ = √(32/7) ≈ 2.14: |2−5| = 3 and |9−5| = 4 are outside, |7−5| = 2 is inside.
  const std::vector<std::size_t> expected = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(sigma_filter(kEight, 1.0), expected);
}

TEST(Statistics, SigmaFilterKeepsEverythingWhenSigmaIsZeroOrUndefined) {
  EXPECT_EQ(sigma_filter(std::vector<double>(4, 250.0), 3.0).size(), 4u);
  EXPECT_EQ(sigma_filter(std::vector<double>{250.0}, 3.0).size(), 1u);
  EXPECT_TRUE(sigma_filter(std::vector<double>{}, 3.0).empty());
}

TEST(Statistics, SigmaFilterRejectsNonPositiveK) {
  EXPECT_THROW(sigma_filter(kEight, 0.0), InvalidInput);
  EXPECT_THROW(sigma_filter(kEight, -3.0), InvalidInput);
  EXPECT_THROW(sigma_filter(kEight, std::nan("")), InvalidInput);
}

TEST(Statistics, RSquared) {
  // ā = 2.5, Σ (aᵢ − ā)² = 5, Σ (aᵢ − pᵢ)² = 1.
  EXPECT_NEAR(r_squared(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 2, 3, 5}), 0.8,
              kRounding);
  EXPECT_NEAR(r_squared(std::vector<double>{1, 2, 3}, std::vector<double>{1, 2, 3}), 1.0,
              kRounding);
  // Predicting the mean everywhere explains nothing.
  EXPECT_NEAR(r_squared(std::vector<double>{1, 2, 3}, std::vector<double>{2, 2, 2}), 0.0,
              kRounding);
  // Worse than the mean: Σ (aᵢ − pᵢ)² = 8, Σ (aᵢ − ā)² = 2.
  EXPECT_NEAR(r_squared(std::vector<double>{1, 2, 3}, std::vector<double>{3, 2, 1}), -3.0,
              kRounding);
}

TEST(Statistics, RSquaredRejectsUndefinedCases) {
  EXPECT_THROW(r_squared(std::vector<double>{1, 2}, std::vector<double>{1}), InvalidInput);
  EXPECT_THROW(r_squared(std::vector<double>{2, 2}, std::vector<double>{1, 3}), InvalidInput);
  EXPECT_THROW(r_squared(std::vector<double>{2}, std::vector<double>{2}), InvalidInput);
}

TEST(Statistics, MapePercent) {
  // |100 − 110|/100 = 0.1 and |200 − 180|/200 = 0.1.
  EXPECT_NEAR(mape_percent(std::vector<double>{100, 200}, std::vector<double>{110, 180}), 10.0,
              kRounding);
  // |−4 − (−5)|/4 = 0.25 and 0: the magnitude of the actual value is the denominator.
  EXPECT_NEAR(mape_percent(std::vector<double>{-4, 8}, std::vector<double>{-5, 8}), 12.5,
              kRounding);
  EXPECT_THROW(mape_percent(std::vector<double>{0, 1}, std::vector<double>{1, 1}), InvalidInput);
  EXPECT_THROW(mape_percent(std::vector<double>{}, std::vector<double>{}), InvalidInput);
  EXPECT_THROW(mape_percent(std::vector<double>{1}, std::vector<double>{1, 2}), InvalidInput);
}

TEST(Statistics, Rmse) {
  // (1 + 1 + 9 + 9)/4 = 5.
  EXPECT_NEAR(rmse(std::vector<double>{0, 0, 0, 0}, std::vector<double>{1, -1, 3, -3}),
              std::sqrt(5.0), kRounding);
  EXPECT_EQ(rmse(std::vector<double>{250}, std::vector<double>{250}), 0.0);
  EXPECT_THROW(rmse(std::vector<double>{}, std::vector<double>{}), InvalidInput);
  EXPECT_THROW(rmse(std::vector<double>{1, 2}, std::vector<double>{1}), InvalidInput);
}

TEST(Statistics, PearsonCorrelation) {
  EXPECT_NEAR(pearson_correlation(std::vector<double>{1, 2, 3}, std::vector<double>{2, 4, 6}), 1.0,
              kRounding);
  EXPECT_NEAR(pearson_correlation(std::vector<double>{1, 2, 3}, std::vector<double>{6, 4, 2}), -1.0,
              kRounding);
  // Deviations (−1.5, −0.5, 0.5, 1.5) and (−1.5, 0.5, −0.5, 1.5): Σ xy = 4, Σ x² = Σ y² = 5.
  EXPECT_NEAR(pearson_correlation(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 3, 2, 4}),
              0.8, kRounding);
}

TEST(Statistics, PearsonCorrelationRejectsUndefinedCases) {
  EXPECT_THROW(pearson_correlation(std::vector<double>{1, 1}, std::vector<double>{1, 2}),
               InvalidInput);
  EXPECT_THROW(pearson_correlation(std::vector<double>{1}, std::vector<double>{1}), InvalidInput);
  EXPECT_THROW(pearson_correlation(std::vector<double>{1, 2}, std::vector<double>{1}),
               InvalidInput);
}

}  // namespace
}  // namespace nnergy::statistics
