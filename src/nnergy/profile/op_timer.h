#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nnergy/profile/op_runner.h"

/// Timing of single operators (seed 000 §4.2): calibrated loops over an OpRunner, and the check
/// that loop time is proportional to the iteration count (§4.2.3). Functions that take a runner
/// use it exclusively for their duration (not thread-safe for the same runner); the fit is pure.
namespace nnergy::profile {

/// How time_op measures.
struct TimingOptions {
  /// Minimum duration, in seconds, of one measurement (seed 000 §4.2 runs each operation "for at
  /// least a few seconds"; §4.2.3 finds proportionality from 100 ms). Must be > 0.
  double min_time_s = 1.0;
  /// Number of measurements of the calibrated iteration count. At least 1.
  int repeats = 5;
  /// Iterations run before calibration; 0 means one per instance, so that every instance has been
  /// touched once.
  std::int64_t warmup_iterations = 0;
};

/// Result of time_op.
struct OpTiming {
  double mean_s = 0;                   ///< mean time of one iteration over the measurements, s
  double stddev_s = 0;                 ///< sample σ of the per-iteration time (0 for 1 repeat), s
  std::int64_t iterations = 0;         ///< iterations in each measurement (>= 1)
  double calibration_s = 0;            ///< time spent calibrating: probe runs and any measurement
                                       ///< discarded for lasting less than min_time_s, s
  std::vector<double> measurements_s;  ///< total duration of each measurement, s
};

/// Warms `runner` up, probes the rate with runs of about min_time_s / 10, extrapolates the
/// iteration count whose run lasts at least `options.min_time_s` (plus 10 % margin), and keeps
/// `options.repeats` measurements of that count, each at least min_time_s long. Wall-clock time
/// (std::chrono::steady_clock). Throws InvalidInput for invalid options, and whatever OpRunner::run
/// throws.
OpTiming time_op(OpRunner& runner, graph::Mode mode, const TimingOptions& options);

/// As above with `min_time_s` and the other options at their defaults.
OpTiming time_op(OpRunner& runner, graph::Mode mode, double min_time_s);

/// Least-squares line total_s = slope_s · iterations + intercept_s through measured loops.
struct ProportionalityFit {
  double slope_s = 0;      ///< time per iteration, s
  double intercept_s = 0;  ///< fixed overhead of one loop, s
  double r_squared = 0;    ///< coefficient of determination of the fit (1 = proportional)
  std::vector<std::int64_t> iterations;  ///< iteration counts of the points fitted
  std::vector<double> total_s;           ///< loop durations of the points fitted, s
};

/// Fits the line through (`iterations`[i], `total_s`[i]). Throws InvalidInput for different
/// lengths, fewer than 2 points, or all iteration counts equal.
ProportionalityFit fit_proportionality(std::span<const std::int64_t> iterations,
                                       std::span<const double> total_s);

/// Times loops of each count in `iteration_counts` (after a warm-up) in `repeats` rounds over all
/// counts, keeping for each count the fastest loop so that preemption by other processes does not
/// masquerade as non-proportionality, and fits the line to the 6/7 of the points with the most
/// iterations, as seed 000 §4.2.3 (Figure 4.2) does, since the shortest loops are where
/// proportionality breaks. Throws InvalidInput for fewer than 2 distinct counts, a count < 1 or
/// `repeats` < 1, and whatever OpRunner::run throws.
ProportionalityFit measure_proportionality(OpRunner& runner, graph::Mode mode,
                                           std::span<const std::int64_t> iteration_counts,
                                           int repeats = 3);

}  // namespace nnergy::profile
