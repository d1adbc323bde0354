#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/measure/power_sample.h"
#include "nnergy/measure/sampler.h"

namespace nnergy::measure {

/// What to do with a window's samples.
struct WindowOptions {
  /// Drop power samples outside mean ± k·σ (seed 000 Eq. 4.3); 0 keeps all.
  double sigma_filter = 3.0;
  /// Drop samples whose SM clock differs from the window's dominant clock (seed 003 §3.1.2).
  bool exclude_off_clock = false;
  /// Drop samples taken under a throttle reason (is_throttling).
  bool exclude_throttled = false;
  /// Iterations run in the window: per-iteration time and energy (seed 000 Eqs. 4.6–4.9).
  std::optional<std::int64_t> iterations;
};

/// A window's result for one source.
struct SourceMeasurement {
  SourceInfo info;
  double time_s = 0;  ///< window length, s
  std::size_t samples_total = 0;
  std::size_t samples_used = 0;
  std::size_t dropped_sigma = 0;
  std::size_t dropped_off_clock = 0;
  std::size_t dropped_throttled = 0;
  std::optional<double> power_mean_w;               ///< mean of the used samples (seed 000 Eq. 4.1)
  std::optional<double> power_sigma_w;              ///< their standard deviation, n−1 (Eq. 4.2)
  std::optional<double> power_peak_w;               ///< maximum over all samples of the window
  std::optional<double> energy_from_power_j;        ///< P̄·t (Eq. 4.4)
  std::optional<double> energy_from_power_sigma_j;  ///< σ_P·t (Eq. 4.5)
  std::optional<double> energy_from_counter_j;      ///< counter difference over the window
  std::optional<double> energy_j;        ///< the better estimate: counter if present, else P̄·t
  std::optional<double> energy_sigma_j;  ///< its uncertainty
  std::string energy_method;             ///< "counter", "power-mean" or "" (none)
  std::optional<double> time_per_iteration_s;          ///< t/N (Eq. 4.6)
  std::optional<double> energy_per_iteration_j;        ///< E/N (Eq. 4.7)
  std::optional<double> energy_per_iteration_sigma_j;  ///< σ_E/N (Eq. 4.9)
  std::optional<double> dominant_sm_clock_mhz;
  std::map<double, std::size_t> sm_clocks_seen;      ///< clock → samples
  std::map<double, std::size_t> memory_clocks_seen;  ///< clock → samples
  std::uint64_t throttle_reasons_seen = 0;           ///< OR of all samples' reasons
  std::size_t throttled_samples = 0;
  std::optional<double> temperature_max_c;
  bool source_failed = false;
  std::string source_error;
};

/// A finished window.
struct Measurement {
  double begin_s = 0;  ///< sampler steady time
  double end_s = 0;
  std::vector<SourceMeasurement> sources;
};

/// Analyzes `samples` of one source over [begin_s, end_s]. The counter energy interpolates the
/// counter linearly at both ends from the bracketing samples. Pure function.
SourceMeasurement analyze_window(const SourceInfo& info, const std::vector<PowerSample>& samples,
                                 double begin_s, double end_s, const WindowOptions& options);

/// The begin/end measurement API in the spirit of seed 003 §6.1, over a running Sampler:
/// `begin()` marks a window, `end()` closes it and returns every source's statistics.
/// Thread-safe: several windows may be open at once, from several threads.
class Meter {
 public:
  explicit Meter(Sampler& sampler);
  /// Opens a window now; returns its handle.
  std::size_t begin();
  /// Closes window `handle` now (waits up to two sampling periods plus 50 ms for a sample at or
  /// after the end, so the counter brackets the window). Throws InternalError for an unknown
  /// handle, InvalidInput for invalid `options`.
  Measurement end(std::size_t handle, const WindowOptions& options = {});

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace nnergy::measure
