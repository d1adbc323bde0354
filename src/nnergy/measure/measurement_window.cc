#include "nnergy/measure/measurement_window.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"

namespace nnergy::measure {

namespace {

// A uniform distribution over an interval of width w has σ = w/√12.
const double kUniformSigmaDivisor = std::sqrt(12.0);

// Meter::end waits for a sample at or after the window's end for two sampling periods (the next
// tick is at most one period away, plus one for a slow read), and this much more for scheduling
// jitter on a loaded machine, which does not shrink with the period.
constexpr double kSchedulingSlack_s = 0.05;
// Meter::end hands analyze_window the samples this many periods beyond each edge, so that the
// bracketing samples are there even after a few skipped ticks, without copying the whole trace.
constexpr double kBracketMarginPeriods = 10.0;

void validate(const WindowOptions& options) {
  if (!(options.sigma_filter >= 0) || !std::isfinite(options.sigma_filter)) {
    throw InvalidInput("measurement window: expected sigma_filter >= 0 (0 keeps all), found " +
                       std::to_string(options.sigma_filter));
  }
  if (options.iterations && *options.iterations <= 0) {
    throw InvalidInput("measurement window: expected iterations > 0, found " +
                       std::to_string(*options.iterations));
  }
}

struct CounterPoint {
  double time_s;
  double energy_j;
};

// The cumulative counter's value at one window edge.
struct EdgeValue {
  double energy_j = 0;
  double time_s = 0;     ///< the instant `energy_j` belongs to: the edge, or the clamped sample
  double bracket_j = 0;  ///< counter increase across the two bracketing samples (0 if exact)
  bool clamped = false;  ///< no sample on one side of the edge: the nearest sample was used
};

// Linear interpolation of the counter at `at` between the samples just before and just after it.
// Without a sample on one side (the trace starts after the window's begin, or ends before its
// end), the nearest sample inside the window stands in: the energy between the edge and that
// sample is missing, so the window's counter energy slightly underestimates the truth.
EdgeValue counter_at(const std::vector<CounterPoint>& counter, double at) {
  const auto after = std::lower_bound(counter.begin(), counter.end(), at,
                                      [](const CounterPoint& p, double t) { return p.time_s < t; });
  if (after != counter.end() && after->time_s == at) return {after->energy_j, at, 0, false};
  if (after == counter.begin()) return {after->energy_j, after->time_s, 0, true};
  const auto before = std::prev(after);
  if (after == counter.end()) return {before->energy_j, before->time_s, 0, true};
  const double fraction = (at - before->time_s) / (after->time_s - before->time_s);
  const double bracket = after->energy_j - before->energy_j;
  return {before->energy_j + fraction * bracket, at, bracket, false};
}

// Counter energy over [begin_s, end_s] and its σ; false when the counter does not cover the
// window (fewer than 2 readings, all of them on one side, or a counter that went backwards as on
// a driver reload).
bool counter_energy(const std::vector<PowerSample>& samples, double begin_s, double end_s,
                    double& energy_j, double& sigma_j) {
  std::vector<CounterPoint> counter;
  for (const PowerSample& s : samples) {
    if (s.energy_j) counter.push_back({s.time_s, *s.energy_j});
  }
  if (counter.size() < 2 || counter.back().time_s < begin_s || counter.front().time_s > end_s) {
    return false;
  }
  const EdgeValue begin = counter_at(counter, begin_s);
  const EdgeValue end = counter_at(counter, end_s);
  const double covered_s = end.time_s - begin.time_s;
  const double energy = end.energy_j - begin.energy_j;
  if (energy < 0 || (covered_s <= 0 && end_s > begin_s)) return false;

  // σ: the counter is monotone, so the true value at an interpolated edge lies somewhere between
  // its two bracketing readings; we take it as uniform over that range (σ = ΔE/√12). This is the
  // counter's own uncertainty; under steady power the interpolation is much better than that, so
  // it is conservative. At a clamped edge the missing energy, estimated from the mean counter
  // power over the covered part, is taken as the σ. The two edges are independent.
  const double rate_w = covered_s > 0 ? energy / covered_s : 0.0;
  const auto edge_sigma = [&](const EdgeValue& edge, double edge_s) {
    return edge.clamped ? rate_w * std::abs(edge.time_s - edge_s)
                        : edge.bracket_j / kUniformSigmaDivisor;
  };
  energy_j = energy;
  sigma_j = std::hypot(edge_sigma(begin, begin_s), edge_sigma(end, end_s));
  return true;
}

// The most frequent SM clock; a tie goes to the higher clock, because throttling only ever
// lowers the clock below the one that was asked for.
std::optional<double> dominant_clock(const std::map<double, std::size_t>& seen) {
  std::optional<double> dominant;
  std::size_t best = 0;
  for (const auto& [clock_mhz, count] : seen) {
    if (count >= best) {
      best = count;
      dominant = clock_mhz;
    }
  }
  return dominant;
}

}  // namespace

SourceMeasurement analyze_window(const SourceInfo& info, const std::vector<PowerSample>& samples,
                                 double begin_s, double end_s, const WindowOptions& options) {
  validate(options);
  if (!std::isfinite(begin_s) || !std::isfinite(end_s) || begin_s > end_s) {
    throw InvalidInput("measurement window: expected finite begin_s <= end_s, found [" +
                       std::to_string(begin_s) + ", " + std::to_string(end_s) + "]");
  }
  if (!std::is_sorted(
          samples.begin(), samples.end(),
          [](const PowerSample& a, const PowerSample& b) { return a.time_s < b.time_s; })) {
    throw InvalidInput("measurement window of source '" + info.id +
                       "': expected samples in time order");
  }

  SourceMeasurement m;
  m.info = info;
  m.time_s = end_s - begin_s;

  const auto first = std::lower_bound(samples.begin(), samples.end(), begin_s,
                                      [](const PowerSample& s, double t) { return s.time_s < t; });
  const auto last = std::upper_bound(first, samples.end(), end_s,
                                     [](double t, const PowerSample& s) { return t < s.time_s; });
  m.samples_total = static_cast<std::size_t>(last - first);

  // What the window saw, over all of its samples whatever is excluded below.
  for (auto s = first; s != last; ++s) {
    if (s->sm_clock_mhz) ++m.sm_clocks_seen[*s->sm_clock_mhz];
    if (s->memory_clock_mhz) ++m.memory_clocks_seen[*s->memory_clock_mhz];
    m.throttle_reasons_seen |= s->throttle_reasons;
    if (is_throttling(s->throttle_reasons)) ++m.throttled_samples;
    if (s->temperature_c) {
      m.temperature_max_c =
          std::max(m.temperature_max_c.value_or(*s->temperature_c), *s->temperature_c);
    }
    if (s->power_w) m.power_peak_w = std::max(m.power_peak_w.value_or(*s->power_w), *s->power_w);
  }
  m.dominant_sm_clock_mhz = dominant_clock(m.sm_clocks_seen);

  // Exclusions (seed 003 §3.1.2): a sample that is both off-clock and throttled is counted once,
  // as off-clock, so that used + dropped always adds up to the total. A sample without a clock
  // reading cannot be judged off-clock and is kept.
  std::vector<double> watts;
  std::size_t kept = 0;
  for (auto s = first; s != last; ++s) {
    if (options.exclude_off_clock && s->sm_clock_mhz && m.dominant_sm_clock_mhz &&
        *s->sm_clock_mhz != *m.dominant_sm_clock_mhz) {
      ++m.dropped_off_clock;
      continue;
    }
    if (options.exclude_throttled && is_throttling(s->throttle_reasons)) {
      ++m.dropped_throttled;
      continue;
    }
    ++kept;
    if (s->power_w) watts.push_back(*s->power_w);
  }

  // The 3σ channel around the mean of the remaining power readings (seed 000 Eq. 4.3), one pass
  // as in the seed. Samples without a power reading have nothing to filter and stay used.
  if (options.sigma_filter > 0 && watts.size() >= 2) {
    std::vector<double> filtered;
    for (std::size_t i : statistics::sigma_filter(watts, options.sigma_filter)) {
      filtered.push_back(watts[i]);
    }
    m.dropped_sigma = watts.size() - filtered.size();
    watts = std::move(filtered);
  }
  m.samples_used = kept - m.dropped_sigma;

  // Eqs. 4.1, 4.2, 4.4 and 4.5. The seed's σ of the energy is the standard deviation of the
  // filtered power readings times t — the spread of the power, not the standard error of its
  // mean (which would be σ/√n); we follow the seed, which makes it the more conservative figure.
  if (!watts.empty()) {
    m.power_mean_w = statistics::mean(watts);
    m.energy_from_power_j = *m.power_mean_w * m.time_s;
  }
  if (watts.size() >= 2) {
    m.power_sigma_w = statistics::standard_deviation(watts);
    m.energy_from_power_sigma_j = *m.power_sigma_w * m.time_s;
  }

  double counter_j = 0;
  double counter_sigma_j = 0;
  if (counter_energy(samples, begin_s, end_s, counter_j, counter_sigma_j)) {
    m.energy_from_counter_j = counter_j;
  }

  // The counter integrates every instant in hardware, where P̄·t relies on sparse (and on Ampere
  // and newer, 1 s averaged) power readings, so the counter wins when both exist. The power
  // estimate stays in its own fields as a cross-check.
  if (m.energy_from_counter_j) {
    m.energy_j = m.energy_from_counter_j;
    m.energy_sigma_j = counter_sigma_j;
    m.energy_method = "counter";
  } else if (m.energy_from_power_j) {
    m.energy_j = m.energy_from_power_j;
    m.energy_sigma_j = m.energy_from_power_sigma_j;
    m.energy_method = "power-mean";
  }

  // Per iteration: Eqs. 4.6, 4.7 and 4.9.
  if (options.iterations) {
    const auto n = static_cast<double>(*options.iterations);
    m.time_per_iteration_s = m.time_s / n;
    if (m.energy_j) m.energy_per_iteration_j = *m.energy_j / n;
    if (m.energy_sigma_j) m.energy_per_iteration_sigma_j = *m.energy_sigma_j / n;
  }
  return m;
}

struct Meter::Impl {
  explicit Impl(Sampler& s) : sampler(s) {}

  Sampler& sampler;
  std::mutex mutex;  // guards the two members below
  std::size_t next_handle = 0;
  std::map<std::size_t, double> open_windows;  ///< handle → begin time, s
};

Meter::Meter(Sampler& sampler) : impl_(std::make_shared<Impl>(sampler)) {}

std::size_t Meter::begin() {
  const double begin_s = impl_->sampler.now_s();
  const std::lock_guard lock(impl_->mutex);
  const std::size_t handle = impl_->next_handle++;
  impl_->open_windows.emplace(handle, begin_s);
  return handle;
}

Measurement Meter::end(std::size_t handle, const WindowOptions& options) {
  // The end time is read first, so that checks and waiting below do not lengthen the window.
  const double end_s = impl_->sampler.now_s();
  validate(options);
  Measurement result;
  {
    const std::lock_guard lock(impl_->mutex);
    const auto it = impl_->open_windows.find(handle);
    if (it == impl_->open_windows.end()) {
      throw InternalError("Meter::end: no open window with handle " + std::to_string(handle));
    }
    result.begin_s = it->second;
    impl_->open_windows.erase(it);
  }
  result.end_s = end_s;

  // A sample at or after the end lets the counter be interpolated at the end instead of being
  // clamped to the last sample inside the window (which would lose up to one period's energy).
  Sampler& sampler = impl_->sampler;
  const double period_s = sampler.period_s();
  sampler.wait_for_samples(end_s, 2 * period_s + kSchedulingSlack_s);

  const double margin_s = kBracketMarginPeriods * period_s;
  for (std::size_t i = 0; i < sampler.source_count(); ++i) {
    SourceMeasurement m = analyze_window(
        sampler.info(i), sampler.samples(i, result.begin_s - margin_s, end_s + margin_s),
        result.begin_s, end_s, options);
    const SourceStatus status = sampler.status(i);
    m.source_failed = status.failed;
    m.source_error = status.error;
    result.sources.push_back(std::move(m));
  }
  return result;
}

}  // namespace nnergy::measure
