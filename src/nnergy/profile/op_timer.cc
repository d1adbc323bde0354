#include "nnergy/profile/op_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"

namespace nnergy::profile {
namespace {

double timed_run(OpRunner& runner, graph::Mode mode, std::int64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  runner.run(mode, iterations);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

}  // namespace

OpTiming time_op(OpRunner& runner, graph::Mode mode, const TimingOptions& options) {
  if (!(options.min_time_s > 0)) {
    throw InvalidInput("time_op: min_time_s must be > 0, got " +
                       std::to_string(options.min_time_s));
  }
  if (options.repeats < 1) {
    throw InvalidInput("time_op: repeats must be >= 1, got " + std::to_string(options.repeats));
  }
  if (options.warmup_iterations < 0) {
    throw InvalidInput("time_op: warmup_iterations must be >= 0, got " +
                       std::to_string(options.warmup_iterations));
  }
  const std::int64_t warmup =
      options.warmup_iterations > 0 ? options.warmup_iterations : runner.instances();
  runner.run(mode, warmup);

  // Calibration (seed 000 §4.2 runs each op for a fixed time, not a fixed count). A short probe
  // of about a tenth of min_time_s finds the rate, grown geometrically from one iteration with a
  // capped factor because a very short run says little about the rate (timer resolution,
  // first-touch effects). The count is then extrapolated in one step, with a 10 % margin so that
  // jitter rarely pushes a measurement below min_time_s. A geometric search all the way up to
  // min_time_s would cost about one more measurement per op; the probe costs a tenth of one.
  const double probe_s = options.min_time_s / 10;
  std::int64_t probe_iterations = 1;
  double elapsed = timed_run(runner, mode, probe_iterations);
  OpTiming timing;
  timing.calibration_s = elapsed;
  while (elapsed < probe_s) {
    const double factor = std::clamp(1.2 * probe_s / std::max(elapsed, 1e-9), 1.5, 100.0);
    probe_iterations = std::max(
        probe_iterations + 1,
        static_cast<std::int64_t>(std::ceil(static_cast<double>(probe_iterations) * factor)));
    elapsed = timed_run(runner, mode, probe_iterations);
    timing.calibration_s += elapsed;
  }
  auto extrapolate = [&](std::int64_t iterations, double total_s) {
    const double rate_s = total_s / static_cast<double>(iterations);
    return std::max<std::int64_t>(
        iterations, static_cast<std::int64_t>(std::ceil(1.1 * options.min_time_s / rate_s)));
  };
  timing.iterations = extrapolate(probe_iterations, elapsed);

  // Every run of the calibrated count is a measurement. Should one fall short of min_time_s (the
  // probe saw a faster rate, e.g. a cache-resident regime), it is discarded as calibration and
  // the count re-extrapolated from it; the count only grows, so this ends.
  std::vector<double> per_iteration;
  while (static_cast<int>(per_iteration.size()) < options.repeats) {
    const double total = timed_run(runner, mode, timing.iterations);
    if (total < options.min_time_s) {
      timing.calibration_s += total;
      timing.measurements_s.clear();
      per_iteration.clear();
      timing.iterations = std::max(timing.iterations + 1, extrapolate(timing.iterations, total));
      continue;
    }
    timing.measurements_s.push_back(total);
    per_iteration.push_back(total / static_cast<double>(timing.iterations));
  }
  timing.mean_s = statistics::mean(per_iteration);
  timing.stddev_s = per_iteration.size() > 1 ? statistics::standard_deviation(per_iteration) : 0.0;
  return timing;
}

OpTiming time_op(OpRunner& runner, graph::Mode mode, double min_time_s) {
  TimingOptions options;
  options.min_time_s = min_time_s;
  return time_op(runner, mode, options);
}

ProportionalityFit fit_proportionality(std::span<const std::int64_t> iterations,
                                       std::span<const double> total_s) {
  if (iterations.size() != total_s.size()) {
    throw InvalidInput("proportionality fit: " + std::to_string(iterations.size()) +
                       " iteration counts but " + std::to_string(total_s.size()) + " durations");
  }
  if (iterations.size() < 2) {
    throw InvalidInput("proportionality fit: needs at least 2 points, got " +
                       std::to_string(iterations.size()));
  }
  const auto n = static_cast<double>(iterations.size());
  std::vector<double> x(iterations.begin(), iterations.end());
  const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double mean_y = std::accumulate(total_s.begin(), total_s.end(), 0.0) / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (total_s[i] - mean_y);
  }
  if (sxx == 0) {
    throw InvalidInput("proportionality fit: all iteration counts are equal");
  }
  ProportionalityFit fit;
  fit.slope_s = sxy / sxx;
  fit.intercept_s = mean_y - fit.slope_s * mean_x;
  std::vector<double> predicted;
  for (double xi : x) predicted.push_back(fit.slope_s * xi + fit.intercept_s);
  fit.r_squared = statistics::r_squared(total_s, predicted);
  fit.iterations.assign(iterations.begin(), iterations.end());
  fit.total_s.assign(total_s.begin(), total_s.end());
  return fit;
}

ProportionalityFit measure_proportionality(OpRunner& runner, graph::Mode mode,
                                           std::span<const std::int64_t> iteration_counts,
                                           int repeats) {
  if (repeats < 1) {
    throw InvalidInput("proportionality: repeats must be >= 1, got " + std::to_string(repeats));
  }
  std::vector<std::int64_t> counts(iteration_counts.begin(), iteration_counts.end());
  for (std::int64_t c : counts) {
    if (c < 1) throw InvalidInput("proportionality: iteration count " + std::to_string(c) + " < 1");
  }
  std::sort(counts.begin(), counts.end());
  if (counts.empty() || counts.front() == counts.back()) {
    throw InvalidInput("proportionality: needs at least 2 distinct iteration counts");
  }
  runner.run(mode, runner.instances());
  // Rounds over all counts rather than repeats of one count: a slow phase of the machine then
  // lengthens one loop of every count, and the minimum discards it.
  std::vector<double> totals(counts.size(), std::numeric_limits<double>::infinity());
  for (int r = 0; r < repeats; ++r) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      totals[i] = std::min(totals[i], timed_run(runner, mode, counts[i]));
    }
  }
  // Seed 000 §4.2.3: fit the 6/7 of the points with the most iterations (at least 2).
  const std::size_t keep = std::max<std::size_t>(2, (counts.size() * 6 + 6) / 7);
  const std::size_t first = counts.size() - std::min(keep, counts.size());
  return fit_proportionality(std::span(counts).subspan(first), std::span(totals).subspan(first));
}

}  // namespace nnergy::profile
