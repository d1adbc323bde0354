#include "nnergy/core/fit_metrics.h"

#include <cmath>
#include <limits>
#include <string>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"

namespace nnergy::core {

namespace {

void check_pairs(std::span<const double> actual, std::span<const double> predicted) {
  if (actual.size() != predicted.size()) {
    throw InvalidInput("fit metrics: " + std::to_string(actual.size()) + " measured and " +
                       std::to_string(predicted.size()) + " predicted values");
  }
  if (actual.empty()) throw InvalidInput("fit metrics: no values to compare");
  for (const double a : actual) {
    if (!(a > 0) || !std::isfinite(a)) {
      throw InvalidInput("fit metrics: measured value " + std::to_string(a) +
                         " is not finite and positive");
    }
  }
}

bool constant(std::span<const double> values) {
  for (const double v : values) {
    if (v != values.front()) return false;
  }
  return true;
}

}  // namespace

double rmspe_percent(std::span<const double> actual, std::span<const double> predicted) {
  check_pairs(actual, predicted);
  double sum = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double relative = (actual[i] - predicted[i]) / actual[i];
    sum += relative * relative;
  }
  return 100.0 * std::sqrt(sum / static_cast<double>(actual.size()));
}

FitMetrics fit_metrics(std::span<const double> actual, std::span<const double> predicted) {
  check_pairs(actual, predicted);
  FitMetrics m;
  m.count = actual.size();
  m.r_squared = actual.size() >= 2 && !constant(actual) ? statistics::r_squared(actual, predicted)
                                                        : std::numeric_limits<double>::quiet_NaN();
  m.mape_percent = statistics::mape_percent(actual, predicted);
  m.rmse = statistics::rmse(actual, predicted);
  m.rmspe_percent = rmspe_percent(actual, predicted);
  std::size_t within = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::abs(predicted[i] - actual[i]) <= 0.1 * actual[i]) ++within;
  }
  m.within_10_percent = static_cast<double>(within) / static_cast<double>(actual.size());
  return m;
}

nlohmann::json FitMetrics::to_json() const {
  return {{"count", count},
          {"r_squared", std::isfinite(r_squared) ? nlohmann::json(r_squared) : nlohmann::json()},
          {"mape_percent", mape_percent},
          {"rmse", rmse},
          {"rmspe_percent", rmspe_percent},
          {"within_10_percent", within_10_percent}};
}

}  // namespace nnergy::core
