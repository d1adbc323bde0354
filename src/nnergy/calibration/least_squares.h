#pragma once

// What the calibration's least-squares fits share: Eigen's Levenberg–Marquardt (included once,
// with the one warning it needs silenced) and the transforms that keep a fitted share in (0, 1).

#include <Eigen/Dense>
#include <cmath>
#include <functional>
// GCC reports LevenbergMarquardt::iterations() as maybe reading an uninitialized m_iter
// depending on how it inlines minimize(), which always sets it: silenced for this header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unsupported/Eigen/LevenbergMarquardt>
#pragma GCC diagnostic pop

namespace nnergy::calibration {

/// 1 / (1 + e^−t): a fitted value t as a share in (0, 1).
inline double logistic(double t) { return 1 / (1 + std::exp(-t)); }
/// The inverse of logistic: a share p in (0, 1) as the value fitted.
inline double logit(double p) { return std::log(p / (1 - p)); }

/// A least-squares problem: `residuals` values of `parameters` unknowns.
struct ResidualProblem {
  int parameters = 0;
  int residuals = 0;
  std::function<void(const Eigen::VectorXd&, Eigen::VectorXd&)> evaluate;
};

/// Eigen's Levenberg–Marquardt on `problem` from `x`, with a forward-difference Jacobian of
/// step `step` (in the parameters' scale); the minimum found.
inline Eigen::VectorXd minimize_residuals(const ResidualProblem& problem, Eigen::VectorXd x,
                                          double step = 1e-4, int max_evaluations = 400) {
  struct Functor : Eigen::DenseFunctor<double> {
    Functor(const ResidualProblem& p, double h)
        : Eigen::DenseFunctor<double>(p.parameters, p.residuals), problem(p), step(h) {}
    int operator()(const Eigen::VectorXd& at, Eigen::VectorXd& f) const {
      problem.evaluate(at, f);
      return 0;
    }
    int df(const Eigen::VectorXd& at, Eigen::MatrixXd& jacobian) const {
      Eigen::VectorXd base(problem.residuals);
      problem.evaluate(at, base);
      jacobian.resize(problem.residuals, problem.parameters);
      for (int j = 0; j < problem.parameters; ++j) {
        Eigen::VectorXd moved = at;
        moved[j] += step;
        Eigen::VectorXd f(problem.residuals);
        problem.evaluate(moved, f);
        jacobian.col(j) = (f - base) / step;
      }
      return 0;
    }
    const ResidualProblem& problem;
    double step;
  };
  Functor functor(problem, step);
  Eigen::LevenbergMarquardt<Functor> lm(functor);
  lm.setMaxfev(max_evaluations);
  lm.setXtol(1e-6);
  lm.setFtol(1e-7);
  lm.minimize(x);
  return x;
}

}  // namespace nnergy::calibration
