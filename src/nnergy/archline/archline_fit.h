#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nnergy/archline/archline_model.h"
#include "nnergy/archline/archline_point.h"
#include "nnergy/archline/ols_fit.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// One fitted parameter with its confidence interval, in SI units (J/flop, J/B, W or J).
struct ParameterEstimate {
  double value = 0;
  double standard_error = 0;
  double ci_low = 0;
  double ci_high = 0;
};

/// A fit of one of the forms of the model (seed 003 Eqs. 5, 6, 7).
struct EquationFit {
  std::string equation;  ///< e.g. "Eq. 5: E = W·ε_flop + Q·ε_mem + T·π0"
  ParameterEstimate eps_flop_j;
  ParameterEstimate eps_mem_j_per_byte;
  ParameterEstimate pi0_w;
  std::optional<ParameterEstimate> intercept_j;  ///< only for Eq. 5 with an intercept, J
  double r_squared = 0;                          ///< of the fitted form's dependent variable
  double condition_number = 0;                   ///< scaled, see OlsFit
  std::size_t point_count = 0;
};

/// A fit of one reference benchmark alone (seed 003 Table 5).
struct ReferenceFit {
  std::string benchmark;  ///< "baseline", "flop" or "copy"
  std::size_t point_count = 0;
  std::optional<double> eps_flop_j;          ///< flop: intercept of E/W = ε_flop + (T/W)·π0
  std::optional<double> eps_mem_j_per_byte;  ///< copy: intercept of E/Q = ε_mem + (T/Q)·π0
  double pi0_w = 0;                          ///< baseline: ΣE/ΣT; flop, copy: the slope
  std::optional<double> r_squared;           ///< flop and copy only
};

/// Everything `nnergy archline fit` reports for one precision.
struct ArchlineFitResult {
  device::Precision precision = device::Precision::kFp32;
  std::size_t points_total = 0;
  std::size_t points_admitted = 0;  ///< at the reference clock and not throttled (§3.1.2)
  /// Eq. 5 without intercept on the admitted points: the parameters of the device.
  EquationFit energy;
  /// R²* of Table 4: Eq. 5 refitted on all points, off-clock ones included; absent when that
  /// fit is impossible.
  std::optional<double> r_squared_all;
  std::optional<EquationFit> energy_with_intercept;  ///< Eq. 5 plus an intercept (should be ~0)
  std::optional<EquationFit> per_flop;               ///< Eq. 6 on the points with W > 0
  std::optional<EquationFit> per_byte;               ///< Eq. 7 on the points with Q > 0
  std::vector<ReferenceFit> reference;               ///< Table 5, for the benchmarks present
  std::vector<std::string> warnings;                 ///< collinearity, dropped fits, exclusions
  /// Highest measured flop rate and bandwidth over the admitted points (W/T, Q/T).
  double measured_peak_flop_per_s = 0;
  double measured_bandwidth_byte_per_s = 0;

  /// The fitted parameters read against `peak_flop_per_s` and `bandwidth_byte_per_s`.
  ArchlineModel model(double peak_flop_per_s, double bandwidth_byte_per_s) const;
};

/// Fits the archline model to the points of `precision` in `points` (others are ignored).
/// `source` names the data in messages. Throws InvalidInput when the Eq. 5 fit is impossible:
/// no admitted points of that precision, fewer admitted points than 4, a rank-deficient design
/// (e.g. every point at one intensity), or non-positive fitted parameters is only a warning.
ArchlineFitResult fit_archline(const std::vector<ArchlinePoint>& points,
                               device::Precision precision, const std::string& source,
                               double confidence = 0.95);

/// The precisions present in `points`, in all_precisions() order.
std::vector<device::Precision> precisions_in(const std::vector<ArchlinePoint>& points);

}  // namespace nnergy::archline
