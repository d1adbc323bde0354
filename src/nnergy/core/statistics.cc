#include "nnergy/core/statistics.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::statistics {

namespace {

void require_count(const char* function, std::size_t count, std::size_t minimum) {
  if (count < minimum) {
    throw InvalidInput(std::string(function) + ": expected at least " + std::to_string(minimum) +
                       " values, found " + std::to_string(count));
  }
}

void require_same_length(const char* function, std::size_t first, std::size_t second) {
  if (first != second) {
    throw InvalidInput(std::string(function) + ": expected two series of the same length, found " +
                       std::to_string(first) + " and " + std::to_string(second));
  }
}

// Σ (xᵢ − x̄)², the numerator of Eq. 4.2; two passes so that a large common offset (power around
// 250 W with milliwatt spread) does not cancel catastrophically.
double sum_of_squared_deviations(std::span<const double> values, double center) {
  double sum = 0;
  for (double v : values) sum += (v - center) * (v - center);
  return sum;
}

}  // namespace

double mean(std::span<const double> values) {
  require_count("mean", values.size(), 1);
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double median(std::span<const double> values) {
  require_count("median", values.size(), 1);
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double standard_deviation(std::span<const double> values) {
  require_count("standard_deviation", values.size(), 2);
  const double m = mean(values);
  return std::sqrt(sum_of_squared_deviations(values, m) / static_cast<double>(values.size() - 1));
}

std::vector<std::size_t> sigma_filter(std::span<const double> values, double k) {
  if (!(k > 0) || !std::isfinite(k)) {
    throw InvalidInput("sigma_filter: expected a finite k > 0, found " + std::to_string(k));
  }
  std::vector<std::size_t> kept;
  kept.reserve(values.size());
  // With σ = 0 the strict inequality of Eq. 4.3 would drop every value, although all of them
  // equal the mean: a constant series has no outliers.
  const double sigma = values.size() >= 2 ? standard_deviation(values) : 0.0;
  const double m = values.empty() ? 0.0 : mean(values);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (sigma == 0 || std::abs(values[i] - m) < k * sigma) kept.push_back(i);
  }
  return kept;
}

double r_squared(std::span<const double> actual, std::span<const double> predicted) {
  require_same_length("r_squared", actual.size(), predicted.size());
  require_count("r_squared", actual.size(), 2);
  const double total = sum_of_squared_deviations(actual, mean(actual));
  if (total == 0) throw InvalidInput("r_squared: the actual values are constant; R² is undefined");
  double residual = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    residual += (actual[i] - predicted[i]) * (actual[i] - predicted[i]);
  }
  return 1.0 - residual / total;
}

double mape_percent(std::span<const double> actual, std::span<const double> predicted) {
  require_same_length("mape_percent", actual.size(), predicted.size());
  require_count("mape_percent", actual.size(), 1);
  double sum = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == 0) {
      throw InvalidInput("mape_percent: actual value " + std::to_string(i) +
                         " is 0; the percentage error is undefined");
    }
    sum += std::abs((actual[i] - predicted[i]) / actual[i]);
  }
  return 100.0 * sum / static_cast<double>(actual.size());
}

double rmse(std::span<const double> actual, std::span<const double> predicted) {
  require_same_length("rmse", actual.size(), predicted.size());
  require_count("rmse", actual.size(), 1);
  double sum = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    sum += (actual[i] - predicted[i]) * (actual[i] - predicted[i]);
  }
  return std::sqrt(sum / static_cast<double>(actual.size()));
}

double pearson_correlation(std::span<const double> x, std::span<const double> y) {
  require_same_length("pearson_correlation", x.size(), y.size());
  require_count("pearson_correlation", x.size(), 2);
  const double mx = mean(x);
  const double my = mean(y);
  double sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my);
  const double sxx = sum_of_squared_deviations(x, mx);
  const double syy = sum_of_squared_deviations(y, my);
  if (sxx == 0 || syy == 0) {
    throw InvalidInput("pearson_correlation: a series is constant; the correlation is undefined");
  }
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace nnergy::statistics
