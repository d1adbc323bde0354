#pragma once

#include <cstddef>
#include <span>
#include <vector>

/// Descriptive statistics and goodness-of-fit measures used by measurement windows (seed 000
/// §4.4) and by predictor evaluation. Pure functions of their arguments: thread-safe. Values are
/// in whatever unit the caller uses; results carry the same unit unless stated otherwise.
/// Malformed arguments (empty, mismatched lengths, undefined results) throw InvalidInput.
namespace nnergy::statistics {

/// Arithmetic mean x̄ = (1/n) Σ xᵢ (seed 000 Eq. 4.1). Throws InvalidInput when `values` is empty.
double mean(std::span<const double> values);

/// Median: the middle value of the sorted `values`, or the mean of the two middle ones. Throws
/// InvalidInput when `values` is empty.
double median(std::span<const double> values);

/// Sample standard deviation σ = √(Σ (xᵢ − x̄)² / (n − 1)) (seed 000 Eq. 4.2). Throws
/// InvalidInput for fewer than 2 values, where the n − 1 estimator is undefined.
double standard_deviation(std::span<const double> values);

/// Indices, ascending, of the values kept by the σ channel |xᵢ − x̄| < k·σ (seed 000 Eq. 4.3),
/// with x̄ and σ of all `values` (one pass, as in the seed; not iterated). Keeps every value when
/// σ = 0 or when there are fewer than 2 values (σ undefined). Throws InvalidInput unless k > 0.
std::vector<std::size_t> sigma_filter(std::span<const double> values, double k);

/// Coefficient of determination R² = 1 − Σ (aᵢ − pᵢ)² / Σ (aᵢ − ā)² of `predicted` against
/// `actual` (dimensionless; 1 is a perfect fit, it can be negative). Throws InvalidInput for
/// different lengths, fewer than 2 values, or constant `actual` (R² undefined).
double r_squared(std::span<const double> actual, std::span<const double> predicted);

/// Mean absolute percentage error 100 %·(1/n) Σ |(aᵢ − pᵢ) / aᵢ|, in percent. Throws
/// InvalidInput for different lengths, no values, or an actual value of 0.
double mape_percent(std::span<const double> actual, std::span<const double> predicted);

/// Root-mean-square error √((1/n) Σ (aᵢ − pᵢ)²), in the unit of the values. Throws InvalidInput
/// for different lengths or no values.
double rmse(std::span<const double> actual, std::span<const double> predicted);

/// Pearson correlation coefficient r = Σ (xᵢ − x̄)(yᵢ − ȳ) / √(Σ (xᵢ − x̄)² · Σ (yᵢ − ȳ)²), in
/// [−1, 1]. Throws InvalidInput for different lengths, fewer than 2 values, or a constant series
/// (r undefined).
double pearson_correlation(std::span<const double> x, std::span<const double> y);

}  // namespace nnergy::statistics
