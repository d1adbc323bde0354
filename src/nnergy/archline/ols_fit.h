#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace nnergy::archline {

/// Quantile of Student's t distribution: the t with P(T_dof <= t) = `probability`, for
/// `probability` in (0, 1) and `dof` >= 1 degrees of freedom. Computed by bisection on the CDF,
/// which uses the regularized incomplete beta function (continued fraction, Numerical Recipes
/// §6.4); accurate to about 1e-10. Throws InvalidInput for arguments outside those ranges.
double student_t_quantile(double probability, double dof);

/// An ordinary-least-squares fit y ≈ X·β (seed 003 §3.1.1: scikit-learn's LinearRegression,
/// done here with Eigen). The columns of X are named; an intercept, when wanted, is a column of
/// ones the caller adds.
struct OlsFit {
  std::vector<std::string> names;   ///< one per coefficient
  Eigen::VectorXd coefficients;     ///< β, in the unit of y per unit of each column
  Eigen::VectorXd standard_errors;  ///< √diag(σ²(XᵀX)⁻¹), σ² = SS_res / (n − p)
  Eigen::VectorXd ci_low;           ///< β − t(1 − α/2, n − p)·se
  Eigen::VectorXd ci_high;          ///< β + t(1 − α/2, n − p)·se
  double confidence = 0.95;         ///< 1 − α of the intervals
  Eigen::VectorXd residuals;        ///< y − Xβ
  double r_squared = 0;             ///< 1 − SS_res / SS_tot, SS_tot about the mean of y
  /// 2-norm condition number of X with every column scaled to unit length: large values mean
  /// collinear columns (e.g. W ∝ Q when every point has one intensity).
  double condition_number = 0;
  std::size_t point_count = 0;
  std::size_t degrees_of_freedom = 0;  ///< n − p
};

/// Largest scaled condition number the fit accepts; beyond it X is treated as rank-deficient.
inline constexpr double kRankDeficientCondition = 1e10;
/// Scaled condition number above which the estimates are reported as unreliable (collinear).
inline constexpr double kCollinearWarningCondition = 1e3;

/// Fits y ≈ X·β by OLS (column-pivoting QR). Requires n > p, so that σ² and the intervals are
/// defined. Throws InvalidInput naming `what` for fewer points than that, for non-finite values,
/// and for a rank-deficient X (scaled condition number above kRankDeficientCondition), naming
/// the columns involved.
OlsFit fit_ols(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
               const std::vector<std::string>& names, const std::string& what,
               double confidence = 0.95);

}  // namespace nnergy::archline
