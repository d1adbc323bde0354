#include "nnergy/archline/archline_fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "nnergy/core/error.h"

namespace nnergy::archline {

namespace {

ParameterEstimate estimate(const OlsFit& fit, Eigen::Index index) {
  return {fit.coefficients(index), fit.standard_errors(index), fit.ci_low(index),
          fit.ci_high(index)};
}

// Eq. 5: E = W·ε_flop + Q·ε_mem + T·π0, optionally plus an intercept.
EquationFit fit_energy(const std::vector<const ArchlinePoint*>& points, bool intercept,
                       const std::string& what, double confidence) {
  const auto n = static_cast<Eigen::Index>(points.size());
  const Eigen::Index p = intercept ? 4 : 3;
  Eigen::MatrixXd x(n, p);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ArchlinePoint& pt = *points[static_cast<std::size_t>(i)];
    x(i, 0) = pt.flop_count;
    x(i, 1) = pt.byte_count;
    x(i, 2) = pt.time_s;
    if (intercept) x(i, 3) = 1;
    y(i) = pt.energy_j;
  }
  std::vector<std::string> names = {"W", "Q", "T"};
  if (intercept) names.emplace_back("1");
  const OlsFit fit = fit_ols(x, y, names, what, confidence);
  EquationFit e;
  e.equation = intercept ? "Eq. 5 + intercept: E = W·ε_flop + Q·ε_mem + T·π0 + c"
                         : "Eq. 5: E = W·ε_flop + Q·ε_mem + T·π0";
  e.eps_flop_j = estimate(fit, 0);
  e.eps_mem_j_per_byte = estimate(fit, 1);
  e.pi0_w = estimate(fit, 2);
  if (intercept) e.intercept_j = estimate(fit, 3);
  e.r_squared = fit.r_squared;
  e.condition_number = fit.condition_number;
  e.point_count = fit.point_count;
  return e;
}

// Eq. 6 (normalize by W) or Eq. 7 (normalize by Q).
EquationFit fit_normalized(const std::vector<const ArchlinePoint*>& points, bool per_flop,
                           const std::string& what, double confidence) {
  std::vector<const ArchlinePoint*> usable;
  for (const ArchlinePoint* pt : points) {
    if ((per_flop ? pt->flop_count : pt->byte_count) > 0) usable.push_back(pt);
  }
  const auto n = static_cast<Eigen::Index>(usable.size());
  Eigen::MatrixXd x(n, 3);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ArchlinePoint& pt = *usable[static_cast<std::size_t>(i)];
    const double norm = per_flop ? pt.flop_count : pt.byte_count;
    x(i, 0) = pt.flop_count / norm;  // 1 for Eq. 6
    x(i, 1) = pt.byte_count / norm;  // 1 for Eq. 7
    x(i, 2) = pt.time_s / norm;
    y(i) = pt.energy_j / norm;
  }
  const OlsFit fit = fit_ols(x, y,
                             per_flop ? std::vector<std::string>{"1", "Q/W", "T/W"}
                                      : std::vector<std::string>{"W/Q", "1", "T/Q"},
                             what, confidence);
  EquationFit e;
  e.equation = per_flop ? "Eq. 6: E/W = ε_flop + (Q/W)·ε_mem + (T/W)·π0"
                        : "Eq. 7: E/Q = (W/Q)·ε_flop + ε_mem + (T/Q)·π0";
  e.eps_flop_j = estimate(fit, 0);
  e.eps_mem_j_per_byte = estimate(fit, 1);
  e.pi0_w = estimate(fit, 2);
  e.r_squared = fit.r_squared;
  e.condition_number = fit.condition_number;
  e.point_count = fit.point_count;
  return e;
}

// Table 5: E/W = ε_flop + (T/W)·π0 over flop points, E/Q = ε_mem + (T/Q)·π0 over copy points.
ReferenceFit fit_reference(const std::vector<const ArchlinePoint*>& points, bool flop,
                           const std::string& what, double confidence) {
  const auto n = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ArchlinePoint& pt = *points[static_cast<std::size_t>(i)];
    const double norm = flop ? pt.flop_count : pt.byte_count;
    x(i, 0) = 1;
    x(i, 1) = pt.time_s / norm;
    y(i) = pt.energy_j / norm;
  }
  const OlsFit fit = fit_ols(x, y, {"1", flop ? "T/W" : "T/Q"}, what, confidence);
  ReferenceFit r;
  r.benchmark = flop ? "flop" : "copy";
  r.point_count = points.size();
  (flop ? r.eps_flop_j : r.eps_mem_j_per_byte) = fit.coefficients(0);
  r.pi0_w = fit.coefficients(1);
  r.r_squared = fit.r_squared;
  return r;
}

}  // namespace

ArchlineModel ArchlineFitResult::model(double peak_flop_per_s, double bandwidth_byte_per_s) const {
  ArchlineModel m;
  m.eps_flop_j = energy.eps_flop_j.value;
  m.eps_mem_j_per_byte = energy.eps_mem_j_per_byte.value;
  m.pi0_w = energy.pi0_w.value;
  m.peak_flop_per_s = peak_flop_per_s;
  m.bandwidth_byte_per_s = bandwidth_byte_per_s;
  m.word_bytes = bytes_per_word(precision);
  return m;
}

std::vector<device::Precision> precisions_in(const std::vector<ArchlinePoint>& points) {
  std::vector<device::Precision> found;
  for (device::Precision p : device::all_precisions()) {
    if (std::any_of(points.begin(), points.end(),
                    [&](const ArchlinePoint& pt) { return pt.precision == p; })) {
      found.push_back(p);
    }
  }
  return found;
}

ArchlineFitResult fit_archline(const std::vector<ArchlinePoint>& points,
                               device::Precision precision, const std::string& source,
                               double confidence) {
  ArchlineFitResult r;
  r.precision = precision;
  const std::string prec(device::to_string(precision));
  std::vector<const ArchlinePoint*> all;
  std::vector<const ArchlinePoint*> admitted;
  for (const ArchlinePoint& pt : points) {
    if (pt.precision != precision) continue;
    all.push_back(&pt);
    if (pt.admitted) admitted.push_back(&pt);
  }
  r.points_total = all.size();
  r.points_admitted = admitted.size();
  if (admitted.empty()) {
    throw InvalidInput(fmt::format(
        "{}: no admitted {} points ({} in total; points taken at another clock or while "
        "throttled are excluded, Holtmann 2024 §3.1.2)",
        source, prec, all.size()));
  }
  const std::string what = fmt::format("{} ({})", source, prec);
  r.energy = fit_energy(admitted, false, what + ", Eq. 5", confidence);
  if (r.energy.condition_number > kCollinearWarningCondition) {
    r.warnings.push_back(fmt::format(
        "{} Eq. 5: W, Q and T are nearly collinear (scaled condition number {:.3g} > {:g}); the "
        "parameters are poorly determined — measure more intensities and occupancies",
        prec, r.energy.condition_number, kCollinearWarningCondition));
  }
  if (r.points_admitted < r.points_total) {
    r.warnings.push_back(fmt::format(
        "{}: {} of {} points not admitted (another clock or throttled, Holtmann 2024 §3.1.2, or "
        "an impossible rate)",
        prec, r.points_total - r.points_admitted, r.points_total));
  }
  for (const ArchlinePoint* pt : admitted) {
    r.measured_peak_flop_per_s = std::max(r.measured_peak_flop_per_s, pt->flop_count / pt->time_s);
    r.measured_bandwidth_byte_per_s =
        std::max(r.measured_bandwidth_byte_per_s, pt->byte_count / pt->time_s);
  }
  // The secondary fits are reports, not requirements: a data set without, e.g., enough W > 0
  // points still yields the Eq. 5 parameters. Their failures become warnings.
  auto attempt = [&](const std::string& name, auto&& fit) {
    try {
      fit();
    } catch (const InvalidInput& e) {
      r.warnings.push_back(prec + " " + name + " not fitted: " + e.what());
    }
  };
  if (r.points_admitted == r.points_total) {
    r.r_squared_all = r.energy.r_squared;
  } else {
    attempt("R²* (all points)", [&] {
      r.r_squared_all =
          fit_energy(all, false, what + ", Eq. 5 on all points", confidence).r_squared;
    });
  }
  attempt("Eq. 5 with intercept", [&] {
    r.energy_with_intercept = fit_energy(admitted, true, what + ", Eq. 5 + intercept", confidence);
  });
  attempt("Eq. 6",
          [&] { r.per_flop = fit_normalized(admitted, true, what + ", Eq. 6", confidence); });
  attempt("Eq. 7",
          [&] { r.per_byte = fit_normalized(admitted, false, what + ", Eq. 7", confidence); });

  std::vector<const ArchlinePoint*> baseline;
  std::vector<const ArchlinePoint*> flop;
  std::vector<const ArchlinePoint*> copy;
  for (const ArchlinePoint* pt : admitted) {
    if (pt->benchmark == BenchmarkKind::kBaseline) baseline.push_back(pt);
    if (pt->benchmark == BenchmarkKind::kFlop) flop.push_back(pt);
    if (pt->benchmark == BenchmarkKind::kCopy) copy.push_back(pt);
  }
  if (!baseline.empty()) {
    ReferenceFit b;
    b.benchmark = "baseline";
    b.point_count = baseline.size();
    double energy_j = 0;
    double time_s = 0;
    for (const ArchlinePoint* pt : baseline) {
      energy_j += pt->energy_j;
      time_s += pt->time_s;
    }
    b.pi0_w = energy_j / time_s;  // §5.1: average energy over average time
    r.reference.push_back(b);
  }
  if (!flop.empty()) {
    attempt("flop reference fit", [&] {
      r.reference.push_back(fit_reference(flop, true, what + ", flop benchmark", confidence));
    });
  }
  if (!copy.empty()) {
    attempt("copy reference fit", [&] {
      r.reference.push_back(fit_reference(copy, false, what + ", copy benchmark", confidence));
    });
  }
  if (r.energy.eps_flop_j.value <= 0 || r.energy.eps_mem_j_per_byte.value <= 0 ||
      r.energy.pi0_w.value <= 0) {
    r.warnings.push_back(prec +
                         ": a fitted parameter is not positive; the data do not follow Eq. 5 "
                         "(check the W and Q per thread of the kernels)");
  }
  return r;
}

}  // namespace nnergy::archline
