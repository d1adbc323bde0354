#include "nnergy/archline/ols_fit.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "nnergy/core/error.h"

namespace nnergy::archline {

namespace {

// Continued fraction of the incomplete beta function (modified Lentz), Numerical Recipes §6.4.
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 300;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b;
  const double qap = a + 1;
  const double qam = a - 1;
  double c = 1;
  double d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < kEpsilon) break;
  }
  return h;
}

// Regularized incomplete beta I_x(a, b).
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

// CDF of Student's t with `dof` degrees of freedom.
double student_t_cdf(double t, double dof) {
  const double x = dof / (dof + t * t);
  const double tail = 0.5 * regularized_incomplete_beta(dof / 2, 0.5, x);
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double student_t_quantile(double probability, double dof) {
  if (!(probability > 0 && probability < 1) || !(dof >= 1)) {
    throw InvalidInput(fmt::format(
        "t quantile: expected 0 < probability < 1 and dof >= 1, found probability {:g}, dof {:g}",
        probability, dof));
  }
  if (probability == 0.5) return 0;
  if (probability < 0.5) return -student_t_quantile(1 - probability, dof);
  // Bracket, then bisect: the CDF is monotone, so this cannot miss.
  double low = 0;
  double high = 1;
  while (student_t_cdf(high, dof) < probability) {
    low = high;
    high *= 2;
    if (high > 1e12) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (student_t_cdf(mid, dof) < probability ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

OlsFit fit_ols(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
               const std::vector<std::string>& names, const std::string& what, double confidence) {
  const auto n = static_cast<std::size_t>(x.rows());
  const auto p = static_cast<std::size_t>(x.cols());
  if (names.size() != p || static_cast<std::size_t>(y.size()) != n) {
    throw InternalError("fit_ols: names, X and y disagree in size");
  }
  if (n <= p) {
    throw InvalidInput(fmt::format(
        "{}: expected at least {} points to fit {} parameters ({}) with a residual variance, "
        "found {}",
        what, p + 1, p, join_with_commas(names), n));
  }
  if (!x.allFinite() || !y.allFinite()) {
    throw InvalidInput(what + ": expected finite values, found inf or NaN");
  }
  // Condition number of the column-scaled X: scaling removes the unit disparity between W
  // (~1e13 flop), Q (~1e12 B) and T (~1 s) so that only collinearity remains.
  Eigen::MatrixXd scaled = x;
  for (Eigen::Index j = 0; j < scaled.cols(); ++j) {
    const double norm = scaled.col(j).norm();
    if (norm == 0) {
      throw InvalidInput(what + ": column " + names[static_cast<std::size_t>(j)] +
                         " is zero for every point; the fit is rank-deficient");
    }
    scaled.col(j) /= norm;
  }
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(scaled, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const Eigen::VectorXd singular = svd.singularValues();
  const double smallest = singular(singular.size() - 1);
  const double condition =
      smallest > 0 ? singular(0) / smallest : std::numeric_limits<double>::infinity();
  if (!(condition <= kRankDeficientCondition)) {
    throw InvalidInput(fmt::format(
        "{}: rank-deficient fit: the columns {} are collinear (scaled condition number {:.3g}); "
        "e.g. every point at one arithmetic intensity makes W proportional to Q — measure "
        "several intensities",
        what, join_with_commas(names), condition));
  }

  OlsFit fit;
  fit.names = names;
  fit.confidence = confidence;
  fit.point_count = n;
  fit.degrees_of_freedom = n - p;
  fit.condition_number = condition;
  // Solve in the scaled basis (better conditioned), then undo the scaling.
  Eigen::VectorXd norms(static_cast<Eigen::Index>(p));
  for (Eigen::Index j = 0; j < x.cols(); ++j) norms(j) = x.col(j).norm();
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(scaled);
  const Eigen::VectorXd beta_scaled = qr.solve(y);
  fit.coefficients = beta_scaled.cwiseQuotient(norms);
  fit.residuals = y - x * fit.coefficients;
  const double ss_res = fit.residuals.squaredNorm();
  const double ss_tot = (y.array() - y.mean()).square().sum();
  fit.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
  const double sigma2 = ss_res / static_cast<double>(fit.degrees_of_freedom);
  // (XᵀX)⁻¹ = D⁻¹ (SᵀS)⁻¹ D⁻¹ with S the scaled X and D the column norms; from the SVD,
  // (SᵀS)⁻¹ = V Σ⁻² Vᵀ.
  const Eigen::MatrixXd v = svd.matrixV();
  const Eigen::VectorXd inv_s2 = singular.array().square().inverse();
  const Eigen::MatrixXd cov_scaled = v * inv_s2.asDiagonal() * v.transpose();
  fit.standard_errors.resize(static_cast<Eigen::Index>(p));
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    fit.standard_errors(j) = std::sqrt(sigma2 * cov_scaled(j, j)) / norms(j);
  }
  const double t =
      student_t_quantile(0.5 + confidence / 2, static_cast<double>(fit.degrees_of_freedom));
  fit.ci_low = fit.coefficients - t * fit.standard_errors;
  fit.ci_high = fit.coefficients + t * fit.standard_errors;
  return fit;
}

}  // namespace nnergy::archline
