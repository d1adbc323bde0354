#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

namespace nnergy::core {

/// How well predictions match measurements (seed 000 §6.2 uses R²; seed 002 §5.3 MAPE and RMSE;
/// RMSPE and the share within ±10 % are common in the performance-model literature). Values in
/// the unit of the target for RMSE; percentages in percent; the share as a fraction in [0, 1].
struct FitMetrics {
  std::size_t count = 0;         ///< pairs compared
  double r_squared = 0;          ///< 1 − SS_res/SS_tot; NaN when undefined (< 2 values, constant)
  double mape_percent = 0;       ///< 100·mean |a − p| / a
  double rmse = 0;               ///< √mean (a − p)², unit of the target
  double rmspe_percent = 0;      ///< 100·√mean ((a − p) / a)²
  double within_10_percent = 0;  ///< share of pairs with |p − a| ≤ 0.1·a

  /// {"count", "r_squared" (null when undefined), "mape_percent", "rmse", "rmspe_percent",
  /// "within_10_percent"}.
  nlohmann::json to_json() const;
};

/// Metrics of `predicted` against `actual` (same length ≥ 1, actual values > 0). Throws
/// InvalidInput for different lengths, no values, or a non-positive actual value.
FitMetrics fit_metrics(std::span<const double> actual, std::span<const double> predicted);

/// Root-mean-square percentage error 100 %·√((1/n) Σ ((aᵢ − pᵢ) / aᵢ)²), in percent. Throws
/// InvalidInput as fit_metrics.
double rmspe_percent(std::span<const double> actual, std::span<const double> predicted);

}  // namespace nnergy::core
