#pragma once

// What the calibration's least-squares fits share: Eigen's Levenberg–Marquardt (included once,
// with the one warning it needs silenced) and the transforms that keep a fitted share in (0, 1).

#include <Eigen/Dense>
#include <cmath>
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

}  // namespace nnergy::calibration
